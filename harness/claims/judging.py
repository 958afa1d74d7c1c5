"""What the browser's Judge page works from and what it hands back: a judging task and a
batch of labels, each delivered as a directory like a results directory.

A **judging task** (``DIR/task.json``, written by ``harness qrels task``) is a pool made
self-contained: the pairs in queue order, the text of every query and document they hold,
the corpus's licence record (so its tier is recomputed from the licence, never taken from
the file), the share judged twice (``overlap``, ``seed``) and the pool it came from (file
sha256, depth, runs, hand-labelling sample).  Its id is the sha256 of its canonical JSON.

A **labels batch** (``DIR/labels.json``) is what one person labelled on the page: the task's
id and labels in the labels format (:mod:`harness.claims.labels`).  The page writes it as
a submission; the warehouse applies it once, against the task it names.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.claims.labels import Label, parse_label, plain_id
from harness.claims.metrics import check_corpus_licence
from harness.core.canonical import canonical_json
from harness.core.formats import FormatError

TASK_FILE = "task.json"
LABELS_FILE = "labels.json"
TASK_KIND = "judging-task"
LABELS_KIND = "judgment-labels"
SCHEMA = 1
#: bounds on what a task or a batch may hold (both reach the warehouse from a remote party)
MAX_PAIRS = 100_000
MAX_TEXT = 1 << 20  #: characters of one query's or document's text
MAX_BYTES = 64 << 20  #: bytes of one task.json
MAX_LABELS = 100_000
MAX_NAME = 200


@dataclass(frozen=True)
class TaskPair:
    query_id: str
    doc_id: str
    sampled: bool  #: its query is in the pool's hand-labelling sample


@dataclass(frozen=True)
class JudgingTask:
    task_id: str  #: sha256 of the canonical task document
    name: str
    corpus: Mapping[str, Any]  #: the corpus's licence record (name, licence, tier, ...)
    tier: str  #: the corpus's tier, checked against its licence
    pool: Mapping[str, Any]  #: {"sha256", "depth", "runs", "sample"} of the pool file
    overlap: float
    seed: int
    pairs: tuple[TaskPair, ...]
    queries: Mapping[str, str]
    documents: Mapping[str, str]


@dataclass(frozen=True)
class LabelBatch:
    task_id: str
    labels: tuple[Label, ...]


def task_id_of(doc: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json(doc).encode("utf-8")).hexdigest()


def task_document(name: str, corpus: Mapping[str, Any], pool: Mapping[str, Any],
                  pairs: Sequence[TaskPair], queries: Mapping[str, str],
                  documents: Mapping[str, str], overlap: float, seed: int) -> dict[str, Any]:
    """The task document (``task.json``'s content), texts limited to the pairs' own."""
    return {"kind": TASK_KIND, "schema": SCHEMA, "name": name, "corpus": dict(corpus),
            "pool": dict(pool), "overlap": overlap, "seed": seed,
            "pairs": [{"query_id": p.query_id, "doc_id": p.doc_id, "sampled": p.sampled}
                      for p in pairs],
            "queries": {q: queries[q] for q in sorted({p.query_id for p in pairs})},
            "documents": {d: documents[d] for d in sorted({p.doc_id for p in pairs})}}


def labels_document(task_id: str, labels: Sequence[Label]) -> dict[str, Any]:
    """A labels batch (``labels.json``'s content)."""
    return {"kind": LABELS_KIND, "schema": SCHEMA, "task": task_id,
            "labels": [item.to_dict() for item in sorted(labels)]}


def _load(path: Path, what: str, limit: int) -> dict[str, Any]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise FormatError(path, None, None, f"cannot read the {what}: {exc.strerror}") from None
    if size > limit:
        raise FormatError(path, None, None, f"{size} bytes; a {what} holds at most {limit}")

    def no_constant(name: str) -> None:
        raise ValueError(f"{name} is not a JSON number")

    try:
        doc = json.loads(path.read_text(encoding="utf-8"), parse_constant=no_constant)
    except OSError as exc:
        raise FormatError(path, None, None, f"cannot read the {what}: {exc.strerror}") from None
    except RecursionError:
        raise FormatError(path, None, None, f"not a {what}: nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise FormatError(path, None, None, f"not a JSON {what} ({exc})") from None
    if not isinstance(doc, dict):
        raise FormatError(path, None, None, f"expected a JSON object, got {type(doc).__name__}")
    return doc


def _kind(doc: Mapping[str, Any], kind: str, path: Path) -> None:
    if doc.get("kind") != kind:
        raise FormatError(path, None, "kind", f"expected {kind!r}, got {doc.get('kind')!r}")
    if doc.get("schema") != SCHEMA:
        raise FormatError(path, None, "schema", f"expected {SCHEMA}, got {doc.get('schema')!r}")


def _texts(doc: Mapping[str, Any], field: str, needed: set[str], path: Path) -> dict[str, str]:
    texts = doc.get(field)
    if not isinstance(texts, dict):
        raise FormatError(path, None, field, "expected an object of id -> text")
    for key in sorted(needed - set(texts)):
        raise FormatError(path, None, f"{field}.{key}", "missing: a pair names it")
    for key, text in texts.items():
        if not isinstance(text, str) or len(text) > MAX_TEXT:
            raise FormatError(path, None, f"{field}.{key}", f"expected a text of at most "
                                                            f"{MAX_TEXT} characters")
    return {k: texts[k] for k in sorted(needed)}


def read_task(path: str | Path) -> JudgingTask:
    """``DIR/task.json`` (or the file itself), every field checked; errors are located."""
    path = Path(path)
    path = path / TASK_FILE if path.is_dir() else path
    return parse_task(_load(path, "judging task", MAX_BYTES), path)


def parse_task(doc: Mapping[str, Any], path: str | Path) -> JudgingTask:
    """A task document, every field checked; errors name ``path`` and the field."""
    path = Path(path)
    _kind(doc, TASK_KIND, path)
    name = doc.get("name")
    if not isinstance(name, str) or not name or len(name) > MAX_NAME or not name.isprintable():
        raise FormatError(path, None, "name", f"expected a printable name of at most "
                                              f"{MAX_NAME} characters, got {name!r:.60}")
    corpus = doc.get("corpus")
    if not isinstance(corpus, dict):
        raise FormatError(path, None, "corpus", "expected the corpus's licence record")
    if not isinstance(corpus.get("name"), str) or not corpus["name"]:
        raise FormatError(path, None, "corpus.name", "expected the corpus's name")
    tier = check_corpus_licence(corpus, str(path), "corpus")
    pool = doc.get("pool")
    if not isinstance(pool, dict) or type(pool.get("depth")) is not int \
            or not 1 <= pool["depth"] < 1 << 31 or not isinstance(pool.get("sha256"), str) \
            or len(pool["sha256"]) > 128:
        raise FormatError(path, None, "pool", "expected the pool's sha256 and depth (1 or more)")
    overlap: Any = doc.get("overlap")
    seed: Any = doc.get("seed")
    if type(overlap) not in (int, float) or not 0 <= overlap <= 1:
        raise FormatError(path, None, "overlap", f"expected a share in [0, 1], got {overlap!r}")
    if type(seed) is not int or not -(1 << 63) <= seed < 1 << 63:
        raise FormatError(path, None, "seed", f"expected a 64-bit integer, got {seed!r:.40}")
    raw = doc.get("pairs")
    if not isinstance(raw, list) or not raw or len(raw) > MAX_PAIRS:
        raise FormatError(path, None, "pairs", f"expected 1 to {MAX_PAIRS} pairs")
    pairs, seen = [], set()
    for i, item in enumerate(raw):
        where = f"pairs[{i}]"
        if not isinstance(item, dict):
            raise FormatError(path, None, where, "expected a pair object")
        if type(item.get("sampled", False)) is not bool:
            raise FormatError(path, None, f"{where}.sampled", "expected true or false")
        try:
            pair = TaskPair(plain_id(item, "query_id", path, None),
                            plain_id(item, "doc_id", path, None), item.get("sampled") is True)
        except FormatError as exc:
            raise FormatError(path, None, f"{where}.{exc.field}", exc.message) from None
        if (pair.query_id, pair.doc_id) in seen:
            raise FormatError(path, None, where, f"pair ({pair.query_id}, {pair.doc_id}) "
                                                 "appears twice")
        seen.add((pair.query_id, pair.doc_id))
        pairs.append(pair)
    queries = _texts(doc, "queries", {p.query_id for p in pairs}, path)
    documents = _texts(doc, "documents", {p.doc_id for p in pairs}, path)
    return JudgingTask(task_id_of(doc), name, corpus, tier, pool, float(overlap), seed,
                       tuple(pairs), queries, documents)


def read_labels_batch(path: str | Path) -> LabelBatch:
    """``DIR/labels.json`` (or the file itself), every label checked; errors are located."""
    path = Path(path)
    path = path / LABELS_FILE if path.is_dir() else path
    doc = _load(path, "labels batch", 64 << 20)
    _kind(doc, LABELS_KIND, path)
    task = doc.get("task")
    if not isinstance(task, str) or len(task) != 64 or set(task) - set("0123456789abcdef"):
        raise FormatError(path, None, "task", f"expected a task id (64 hex), got {task!r:.80}")
    raw = doc.get("labels")
    if not isinstance(raw, list) or not raw or len(raw) > MAX_LABELS:
        raise FormatError(path, None, "labels", f"expected 1 to {MAX_LABELS} labels")
    labels = tuple(parse_label(item, path, None, where=f"labels[{i}].")
                   for i, item in enumerate(raw))
    seen: set[Label] = set()
    for i, item in enumerate(labels):
        if item in seen:
            raise FormatError(path, None, f"labels[{i}]", "the same label appears twice")
        seen.add(item)
    return LabelBatch(task, labels)
