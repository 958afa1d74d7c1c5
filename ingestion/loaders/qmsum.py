"""QMSum in its upstream repository layout.

Upstream keeps every meeting in several overlapping folders: ``data/<Domain>/{train,val,test}``,
``data/<Domain>/all`` and the pooled ``data/ALL/{train,val,test}`` (plus JSONL copies, which
are ignored).  PATH may be the repository root, its ``data`` folder, or one domain folder
(``data/Product``).  Meetings are deduplicated by meeting id; each keeps the domain of the
domain folder it appears in and the split of the train/val/test folder it appears in.  When
copies differ, the copy from the most specific folder wins (domain split folder, then domain
``all``, then the pooled folder) and the disagreement is counted.

Specific queries become ``lookup`` or ``summarize`` by :func:`classify_query`; general
queries ("Summarize the whole meeting") carry no gold span and are skipped (counted).
``relevant_text_span`` decimal strings become inclusive integer turn ranges.  QMSum has no
timestamps and no recorded dates: timings are synthesised from word counts
(:mod:`ingestion.timing`, ``timing="synthetic"``) and meetings stay undated.

The registered licence (MIT) is attributed only when every meeting file read matches the
sha256 the registry pins for the upstream commit (:func:`ingestion.attribution.source_info`,
:mod:`ingestion.evidence`); one edited or foreign meeting and the corpus is tier B, licence
unknown, whatever LICENSE file lies in the repository root (:func:`repository_root`).
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from harness.core.formats import FormatError, read_json_object
from harness.core.records import Query
from ingestion.corpus import MEETING, Corpus, FileRecord, Turn
from ingestion.digest import corpus_sha256
from ingestion.attribution import source_info
from ingestion.timing import WORDS_PER_SECOND, sequential_timings

log = logging.getLogger(__name__)

SPLITS = ("train", "val", "test")
POOLED_FOLDER = "all"
POOLED_DOMAIN = "ALL"
DOMAINS = ("Academic", "Committee", "Product")

#: the summarize rule: a specific query is ``summarize`` when it *opens* by asking for a
#: summary or overview ("Summarize ...", "Sum up ...", "Give an overview of ...",
#: "What was the general discussion ..."); every other specific query is ``lookup``.
SUMMARIZE_RULE = re.compile(
    r"^\s*(?:please\s+)?(?:"
    r"summari[sz]e|sum\s+up|recap"
    r"|(?:give|provide)\s+(?:me\s+|us\s+)?(?:a\s+|an\s+)?(?:brief\s+)?(?:summary|overview)"
    r"|what\s+(?:was|were|is)\s+the\s+general\s+discussion"
    r")\b",
    re.IGNORECASE,
)


def classify_query(text: str) -> str:
    """``"summarize"`` if the query opens by asking for a summary (:data:`SUMMARIZE_RULE`),
    else ``"lookup"``."""
    return "summarize" if SUMMARIZE_RULE.match(text) else "lookup"


@dataclass(frozen=True)
class _Copy:
    path: Path
    domain: str | None
    split: str | None
    #: lower is more specific: 0 domain split, 1 domain all, 2 pooled split, 3 pooled all
    rank: int


def _split_folders(folder: Path) -> dict[str, Path]:
    """The ``all/train/val/test`` children of ``folder`` (case-insensitive)."""
    found = {}
    if folder.is_dir():
        for child in sorted(folder.iterdir()):
            key = child.name.lower()
            if child.is_dir() and (key in SPLITS or key == POOLED_FOLDER):
                found[key] = child
    return found


def discover(path) -> tuple[str, list[tuple[str, Path]]]:
    """``(scope, [(domain_folder_name, folder), ...])`` for a QMSum PATH.

    ``scope`` is ``"all"`` for a repository root or ``data`` folder, else the domain name.
    Raises ``FileNotFoundError`` naming what was expected when the layout does not match.
    """
    path = Path(path)
    if not path.is_dir():
        raise FileNotFoundError(f"{path}: not a directory (expected a QMSum repository root, "
                                "its data folder, or a domain folder such as data/Product)")
    if _split_folders(path):
        return path.name, [(path.name, path)]
    data = path / "data" if (path / "data").is_dir() else path
    domains = [(child.name, child) for child in sorted(data.iterdir())
               if child.is_dir() and _split_folders(child)]
    if not domains:
        raise FileNotFoundError(
            f"{path}: no QMSum layout found: expected data/<Domain>/{{all,train,val,test}}/"
            "*.json (a repository root), <Domain>/{...} (a data folder) or {all,train,val,"
            "test}/*.json (a domain folder)")
    return "all", domains


def _copies(domains) -> dict[str, list[_Copy]]:
    copies: dict[str, list[_Copy]] = {}
    for domain_name, folder in domains:
        pooled = domain_name.upper() == POOLED_DOMAIN
        for key, split_dir in _split_folders(folder).items():
            split = key if key in SPLITS else None
            rank = (2 if pooled else 0) + (1 if split is None else 0)
            for file in sorted(split_dir.glob("*.json")):
                copies.setdefault(file.stem, []).append(
                    _Copy(file, None if pooled else domain_name, split, rank))
    return copies


def _one_value(meeting_id: str, field: str, copies: list[_Copy], attr: str) -> str | None:
    values = sorted({getattr(c, attr) for c in copies if getattr(c, attr) is not None})
    if len(values) > 1:
        where = ", ".join(str(c.path) for c in copies)
        raise ValueError(f"meeting {meeting_id!r} appears with different {field}s {values}: {where}")
    return values[0] if values else None


def _parse_span(raw, path, query_index: int, n_turns: int, counters: dict):
    field = f"specific_query_list[{query_index}].relevant_text_span"
    if not isinstance(raw, (list, tuple)) or len(raw) != 2:
        raise FormatError(path, None, field, f"expected a [first, last] pair, got {raw!r}")
    try:
        first, last = (int(str(v).strip()) for v in raw)
    except ValueError:
        raise FormatError(path, None, field, f"turn indexes must be integers, got {raw!r}") from None
    if first < 0 or last < first:
        raise FormatError(path, None, field, f"not an inclusive range first<=last: {raw!r}")
    if first >= n_turns:
        counters["spans_out_of_range"] += 1
        log.warning("%s: %s %r lies beyond the %d turns; span dropped", path, field, raw, n_turns)
        return None
    if last >= n_turns:
        counters["spans_clipped"] += 1
        log.warning("%s: %s %r ends beyond the %d turns; clipped", path, field, raw, n_turns)
        last = n_turns - 1
    return first, last


def _parse_meeting(meeting_id: str, doc: dict, path: Path, corpus_name: str,
                   domain: str | None, split: str | None, counters: dict):
    transcript = doc.get("meeting_transcripts")
    if not isinstance(transcript, list) or not transcript:
        raise FormatError(path, None, "meeting_transcripts", "missing or empty list of turns")
    texts, speakers = [], []
    for i, turn in enumerate(transcript):
        if not isinstance(turn, dict):
            raise FormatError(path, None, f"meeting_transcripts[{i}]", "expected an object")
        speaker, content = turn.get("speaker"), turn.get("content")
        if not isinstance(speaker, str) or not isinstance(content, str):
            raise FormatError(path, None, f"meeting_transcripts[{i}]",
                              "expected string fields 'speaker' and 'content'")
        speakers.append(speaker)
        texts.append(content)
    timings = sequential_timings(len(t.split()) for t in texts)
    turns = tuple(Turn(meeting_id, i, speakers[i], start, end, texts[i])
                  for i, (start, end) in enumerate(timings))
    record = FileRecord(
        file_id=meeting_id, title=None, domain=domain, split=split,
        duration=timings[-1][1], timing="synthetic",
        roster=tuple(sorted(set(speakers))),
    )
    specific = doc.get("specific_query_list", [])
    if not isinstance(specific, list):
        raise FormatError(path, None, "specific_query_list", "expected a list")
    general = doc.get("general_query_list", [])
    counters["general_queries_skipped"] += len(general) if isinstance(general, list) else 0
    queries = []
    for n, item in enumerate(specific):
        if not isinstance(item, dict) or not isinstance(item.get("query"), str):
            raise FormatError(path, None, f"specific_query_list[{n}].query", "missing query text")
        raw_spans = item.get("relevant_text_span")
        if not isinstance(raw_spans, list):
            raise FormatError(path, None, f"specific_query_list[{n}].relevant_text_span",
                              "expected a list of [first, last] pairs")
        spans = sorted({s for s in (_parse_span(r, path, n, len(turns), counters)
                                    for r in raw_spans) if s is not None})
        extra = [("domain", domain), ("split", split)]
        if isinstance(item.get("answer"), str):
            extra.append(("reference_answer", item["answer"]))
        queries.append(Query(
            query_id=f"{meeting_id}-s{n}", text=item["query"],
            query_class=classify_query(item["query"]), corpus=corpus_name,
            gold_spans=tuple((meeting_id, a, b) for a, b in spans),
            gold_files=(meeting_id,) if spans else (),
            extra=tuple(sorted(extra)),
        ))
    return record, turns, queries


def load_qmsum(path, name: str | None = None) -> Corpus:
    """Load a QMSum repository root, data folder or domain folder (module docstring)."""
    from tqdm import tqdm

    scope, domains = discover(path)
    corpus_name = name or ("qmsum" if scope == "all" else f"qmsum-{scope.lower()}")
    copies = _copies(domains)
    if not copies:
        raise FileNotFoundError(f"{path}: the QMSum folders hold no *.json meeting files")
    counters = {"json_files_read": 0, "duplicate_copies": 0, "copies_differing": 0,
                "general_queries_skipped": 0, "spans_clipped": 0, "spans_out_of_range": 0}
    files, turns, queries = [], [], []
    read: dict[Path, str] = {}  # every meeting file read, with its sha256 (the pins check it)
    for meeting_id in tqdm(sorted(copies), desc=f"loading {corpus_name}", unit="meeting",
                           disable=None):
        group = sorted(copies[meeting_id], key=lambda c: (c.rank, str(c.path)))
        domain = _one_value(meeting_id, "domain", group, "domain")
        split = _one_value(meeting_id, "split", group, "split")
        counters["duplicate_copies"] += len(group) - 1
        digests = set()
        for copy in group:
            digest = hashlib.sha256(copy.path.read_bytes()).hexdigest()
            digests.add(digest)
            read[copy.path] = digest
            counters["json_files_read"] += 1
        if len(digests) > 1:
            counters["copies_differing"] += 1
            log.warning("meeting %s: %d copies differ; using %s", meeting_id, len(digests),
                        group[0].path)
        doc = read_json_object(group[0].path)
        record, meeting_turns, meeting_queries = _parse_meeting(
            meeting_id, doc, group[0].path, corpus_name, domain, split, counters)
        files.append(record)
        turns.extend(meeting_turns)
        queries.extend(meeting_queries)
    files = tuple(files)
    turns = tuple(sorted(turns, key=lambda t: (t.file_id, t.start, t.end, t.index)))
    queries = tuple(sorted(queries, key=lambda q: q.query_id))
    sha = corpus_sha256(MEETING, files, turns, (), queries)
    notes = tuple(sorted({**counters, "summarize_rule": SUMMARIZE_RULE.pattern,
                          "words_per_second": WORDS_PER_SECOND,
                          "recorded_dates": "none: QMSum meetings carry no date"}.items()))
    info = source_info(corpus_name, sha, root=repository_root(path), files=read)
    return Corpus(source=info, kind=MEETING, files=files, turns=turns, queries=queries,
                  notes=notes)


def repository_root(path) -> Path:
    """The root of the QMSum copy PATH belongs to (where upstream keeps its LICENSE): PATH
    itself when it holds ``data/``, the parent of a ``data`` folder, the grandparent of a
    domain folder inside ``data``; otherwise PATH."""
    path = Path(path).resolve()
    if (path / "data").is_dir():
        return path
    if path.name.lower() == "data":
        return path.parent
    if path.parent.name.lower() == "data":
        return path.parent.parent
    return path
