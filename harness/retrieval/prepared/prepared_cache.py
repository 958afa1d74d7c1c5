"""The prepared-corpus cache: a second arm over an unchanged corpus neither reads, chunks
nor judges it again.

Two kinds of entry (:mod:`harness.retrieval.cache_store`: keyed by sha256, published
whole, built once under a per-key lock when two processes miss together):

* ``sources/<key>``: what loading ``KIND:PATH`` gave: the corpus's provenance (licence,
  tier, evidence, its content digest), its file records and its queries (id, text, class,
  how scored).  Keyed by the *source fingerprint*: the kind, the resolved path, the name,
  the sha256 of every file under the path, and the sha256 of every file the licence
  attribution may consult outside it (licence files and fetch manifests in the path's
  ancestors and in the fetch cache, and a manifest's recorded tree when it covers the path:
  :mod:`ingestion.evidence`), plus the code revision.  So a licence is never served from a
  copy whose evidence differs: one changed byte anywhere attribution looks is a miss.  The
  sha256 of the files under the path are remembered by their status in
  ``file-digests.json`` (:mod:`harness.retrieval.prepared.file_digests`): a file is read
  again unless nobody has changed it since.
* ``corpora/<key>``: chunks (with their structural order), qrels, queries dropped as
  unjudgeable, file qrels and the answer-scored query count, as checked columns
  (:mod:`harness.retrieval.prepared.columns_format`: one block per column, a sha256 over all of
  them, read back as a :class:`~harness.retrieval.prepared.chunk_table.ChunkTable` without
  building a chunk object).  Keyed by the corpus digest (``corpora[].sha256``, of what was
  loaded), the corpus name and kind, the chunking (granularity, ``--max-words``), the
  judgement policy (``--relevance-high``, ``--relevance-low``, ``--binary-relevance``) and
  the code revision.

The code revision is the sha256 of the sources that make an entry (every module of
``ingestion``, ``harness/core`` with its pinned checksums, corpus preparation and this cache),
so an edit to a loader, the chunker or the judge invalidates every entry it could change.

A prepared corpus from this cache holds the corpus *as an arm run reads it*: provenance,
file records and queries (id, text, class, how scored), without turns or documents; a
miss returns the same form (made from the entry it wrote), so a hit and a miss give the
same object and the same claim files.  Source entries are JSON, corpus entries columns of
JSON values, UTF-8 text and little-endian numbers: reading one runs no code, and a damaged
one fails its checks and is rebuilt (a miss).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Sequence

from harness.core import settings
from harness.core.canonical import sha256_file
from harness.core.records import Query
from harness.retrieval.prepared import columns_format
from harness.retrieval.prepared.chunk_table import FIELDS as CHUNK_FIELDS
from harness.retrieval.prepared.chunk_table import ChunkTable, structural_order
from harness.retrieval.prepared.file_digests import FileDigests
from harness.retrieval.prepared.prepare import PreparedCorpus, prepare_corpus
from harness.retrieval.cache_store import KeyedStore, get_or_build, key_digest, source_files, \
    source_revision

log = logging.getLogger(__name__)

#: bump when an entry's layout changes
PREPARED_FORMAT = 2
#: the sha256 of source files remembered between runs (harness.retrieval.prepared.file_digests)
DIGESTS_FILE = "file-digests.json"
#: what makes a prepared entry (their sha256 is the code revision in every key)
REVISION_SOURCES = ("ingestion/**/*.py", "harness/core/*.py", "harness/core/pins/*",
                    "harness/retrieval/prepared/prepare.py",
                    "harness/retrieval/prepared/prepared_cache.py",
                    "harness/retrieval/prepared/columns_format.py",
                    "harness/retrieval/prepared/chunk_table.py",
                    "harness/retrieval/cache_store.py")
#: chunk fields no step of an arm run reads after judging: decoded only if a chunk object is built
_LAZY_FIELDS = ("turn_indexes", "turn_fractions")
_QUERY_FIELDS = ("query_id", "text", "query_class", "corpus", "scored_on")


@functools.lru_cache(maxsize=1)
def code_revision() -> str:
    """sha256 of :data:`REVISION_SOURCES` (read once per process)."""
    return source_revision(source_files(*REVISION_SOURCES))


def cache_root(cache_dir: str | None) -> Path:
    """Where entries live: ``$HARNESS_PREPARED_CACHE``, else ``prepared`` in the cache
    directory (``--cache-dir``, ``$HARNESS_CACHE``, ``./cache``)."""
    return settings.prepared_cache_dir(cache_dir)


# --------------------------------------------------------------------------- keys


def _evidence_files(path: Path) -> list[Path]:
    """Files attribution may read outside the corpus's own tree (:mod:`ingestion.evidence`)."""
    from ingestion.evidence import LICENCE_FILES, MANIFEST_NAME

    folders = [path, *path.parents, settings.data_dir()]
    return [folder / name for folder in folders for name in (*LICENCE_FILES, MANIFEST_NAME)
            if (folder / name).is_file()]


def _manifest_trees(manifest: Path, path: Path) -> list[Path]:
    """Trees a fetch manifest records that hold ``path`` (their digest decides its evidence)."""
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    entries = doc.get("artefacts") if isinstance(doc, dict) else None
    trees = []
    for entry in entries if isinstance(entries, list) else ():
        if isinstance(entry, dict) and entry.get("extracted"):
            tree = (manifest.parent / str(entry["extracted"])).resolve()
            if (tree == path or tree in path.parents) and tree.is_dir():
                trees.append(tree)
    return trees


def tree_digest(root: Path, digests: FileDigests | None = None) -> str:
    """:func:`ingestion.digest.tree_sha256`'s digest (sha256 over ``relpath NUL sha256 LF``
    of every regular file, hidden parts skipped, symbolic links to folders not followed,
    sorted by relative POSIX path), walked with ``os.scandir`` (about 3x faster on 1,850
    meeting files; tested equal).  ``digests`` remembers each file's sha256 between runs
    (:mod:`harness.retrieval.prepared.file_digests`)."""
    found: list[tuple[str, str]] = []
    pending = [(str(root), "")]
    while pending:
        folder, rel = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                name = f"{rel}{entry.name}"
                if entry.is_dir(follow_symlinks=False):
                    pending.append((entry.path, f"{name}/"))
                elif entry.is_file():  # follows a link to a file, as Path.is_file does
                    found.append((name, entry.path))
    if digests is None:
        digests = FileDigests(None)
    digest = hashlib.sha256()
    for name, path in sorted(found):
        digest.update(f"{name}\0{digests.sha256(path)}\n".encode("utf-8"))
    return digest.hexdigest()


def _tree(path: Path, digests: FileDigests | None = None) -> str:
    if path.is_file():
        return sha256_file(path) if digests is None else digests.sha256(str(path))
    return tree_digest(path, digests)


def source_key(spec: str, name: str | None = None,
               digests: FileDigests | None = None) -> dict | None:
    """The source fingerprint of ``KIND:PATH`` (module docstring); None when PATH does not
    exist (the loader then says so in its own words).  ``digests`` remembers the sha256 of
    the files under PATH between runs."""
    from ingestion.loaders import parse_spec

    kind, raw = parse_spec(spec)
    path = raw.resolve()
    if not path.exists():
        return None
    evidence, trees = [], []
    for found in _evidence_files(path):
        evidence.append([str(found), sha256_file(found)])
        if found.name == "manifest.json":
            trees += [[str(t), _tree(t)] for t in _manifest_trees(found, path) if t != path]
    return {"entry": "source", "format": PREPARED_FORMAT, "kind": kind, "path": str(path),
            "name": name, "tree": _tree(path, digests), "evidence": evidence, "manifest_trees": trees,
            "data_dir": str(settings.data_dir()), "revision": code_revision()}


def prepared_key(source, corpus_kind: str, granularity: str, max_words: int, policy) -> dict:
    """The key of one corpus's chunks and judgements (module docstring)."""
    return {"entry": "prepared", "format": PREPARED_FORMAT, "corpus_sha256": source.sha256,
            "corpus_name": source.name, "corpus_kind": corpus_kind, "granularity": granularity,
            "max_words": max_words,
            "policy": {"relevance_high": policy.relevance_high,
                       "relevance_low": policy.relevance_low, "binary": policy.binary},
            "revision": code_revision()}


# --------------------------------------------------------------------------- entries


def _source_payload(corpus) -> dict:
    return {"source": dataclasses.asdict(corpus.source), "kind": corpus.kind,
            "files": [dataclasses.asdict(f) for f in corpus.files],
            "queries": [[getattr(q, f) for f in _QUERY_FIELDS] for q in corpus.queries]}


def _light_corpus(payload: dict):
    """The corpus as an arm run reads it (module docstring) from a ``sources`` entry."""
    from ingestion.corpus import Corpus, FileRecord, SourceInfo

    files = tuple(FileRecord(**{**f, "roster": tuple(f["roster"])}) for f in payload["files"])
    queries = tuple(Query(**dict(zip(_QUERY_FIELDS, q))) for q in payload["queries"])
    return Corpus(source=SourceInfo(**payload["source"]), kind=payload["kind"], files=files,
                  queries=queries)


def _flat_qrels(prefix: str, qrels: dict) -> dict[str, list]:
    """A ``{query: {doc: grade}}`` mapping as four columns, in its own iteration order."""
    docs, grades = [], []
    for judged in qrels.values():
        docs.extend(judged)
        grades.extend(judged.values())
    return {f"{prefix}.queries": list(qrels), f"{prefix}.counts": [len(d) for d in qrels.values()],
            f"{prefix}.docs": docs, f"{prefix}.grades": grades}


def _nested_qrels(prefix: str, cols) -> dict[str, dict]:
    queries, counts = cols[f"{prefix}.queries"], cols[f"{prefix}.counts"]
    docs, grades = cols[f"{prefix}.docs"], cols[f"{prefix}.grades"]
    if len(queries) != len(counts) or sum(counts) != len(docs) or len(docs) != len(grades) \
            or any(n < 0 for n in counts):
        raise ValueError(f"{prefix}: counts do not match its judgements")
    out, at = {}, 0
    for query_id, n in zip(queries, counts):
        out[query_id] = dict(zip(docs[at:at + n], grades[at:at + n]))
        at += n
    return out


def _prepared_payload(p: PreparedCorpus) -> dict[str, list]:
    """The columns of a ``corpora`` entry (:mod:`harness.retrieval.prepared.columns_format`)."""
    table = p.chunks if isinstance(p.chunks, ChunkTable) else ChunkTable.from_chunks(p.chunks)
    columns = {f"chunk.{name}": table.column(name) for name in CHUNK_FIELDS}
    columns["chunk.order"] = table.order if table.order is not None else \
        structural_order(columns["chunk.doc_id"])
    columns.update(_flat_qrels("qrels", p.qrels))
    columns.update(_flat_qrels("file_qrels", p.file_qrels))
    columns["rank_queries"] = list(p.queries)
    columns["dropped"] = list(p.dropped)
    columns["answer_queries"] = [p.answer_queries]
    return columns


def _revive(corpus, cols) -> PreparedCorpus:
    """The prepared corpus an entry's columns hold (``ValueError`` when they do not fit
    together or name a query the corpus lacks)."""
    rows = cols.rows["chunk.doc_id"]
    chunks = ChunkTable({name: (cols[f"chunk.{name}"] if name not in _LAZY_FIELDS else
                                functools.partial(cols.__getitem__, f"chunk.{name}"))
                         for name in CHUNK_FIELDS}, rows, order=cols["chunk.order"])
    by_id = {q.query_id: q for q in corpus.queries}
    try:
        queries = {query_id: by_id[query_id] for query_id in cols["rank_queries"]}
    except KeyError as exc:
        raise ValueError(f"its queries name {exc} that the corpus does not hold") from None
    (answer,) = cols["answer_queries"]
    return PreparedCorpus(corpus, chunks, queries, _nested_qrels("qrels", cols),
                          tuple(cols["dropped"]), _nested_qrels("file_qrels", cols), answer)


def _encode(key: dict, payload: dict) -> bytes:
    return json.dumps({"key": key, "payload": payload}, ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def _reader(key: dict):
    def read(path: Path):
        if not path.is_file():
            return None
        try:
            doc = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise ValueError(f"not readable JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("key") != key or "payload" not in doc:
            raise ValueError("its key does not match its name")
        return doc["payload"]
    return read


def _prepared_reader(key: dict, corpus):
    """Read a ``corpora`` entry into a :class:`PreparedCorpus` (None when absent,
    ``ValueError`` when damaged: the cache rebuilds it)."""
    def read(path: Path):
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ValueError(f"not readable: {exc}") from None
        try:
            return _revive(corpus, columns_format.decode(data, key))
        except (TypeError, KeyError) as exc:
            raise ValueError(f"its columns do not fit together: {exc!r}") from None
    return read


# --------------------------------------------------------------------------- the run


class PreparedCache:
    """Prepared corpora by key, under ``root`` (``sources/`` and ``corpora/``)."""

    def __init__(self, root):
        self.root = Path(root)
        self.sources = KeyedStore(self.root, "sources")
        self.corpora = KeyedStore(self.root, "corpora")
        self.digests = FileDigests(self.root / DIGESTS_FILE)

    def prepare(self, spec: str | None, corpus, granularity: str, policy,
                max_words: int) -> tuple[PreparedCorpus, dict]:
        """One corpus, from ``spec`` (loaded only when an entry is missing) or an already
        loaded ``corpus``; returns it with ``{"source": ..., "prepared": ...}`` outcomes."""
        from ingestion import load_corpus

        loaded = {"corpus": corpus}
        report = {"spec": spec, "source": "given"}

        def load():
            if loaded["corpus"] is None:
                loaded["corpus"] = load_corpus(spec)
            return loaded["corpus"]

        skey = None
        if corpus is None:
            skey = source_key(spec, digests=self.digests)
            self.digests.save()
        if corpus is None and skey is None:  # no such path: the loader says so in its words
            corpus = load()
        if skey is not None:
            sdigest = key_digest(skey)
            payload, report["source"] = get_or_build(
                self.sources, sdigest, _reader(skey), lambda: _source_payload(load()),
                lambda value: self.sources.publish_bytes(sdigest, _encode(skey, value)))
            light = _light_corpus(payload)
        else:
            light = _light_corpus(_source_payload(corpus))
        pkey = prepared_key(light.source, light.kind, granularity, max_words, policy)
        pdigest = key_digest(pkey)

        def build():
            full = load()
            if full.source.sha256 != light.source.sha256:
                raise ValueError(f"corpus {spec}: its files changed while it was being "
                                 "prepared; run again")
            return columns_format.encode(pkey, _prepared_payload(
                prepare_corpus(full, granularity, policy, max_words)))

        # the entry is built as bytes, published, then read as a hit reads it: a miss and a
        # hit give the same object
        read = _prepared_reader(pkey, light)
        built = {}

        def publish(data: bytes) -> None:
            self.corpora.publish_bytes(pdigest, data)
            built["prepared"] = read(self.corpora.path(pdigest))

        value, report["prepared"] = get_or_build(self.corpora, pdigest, read, build, publish)
        if report["prepared"] == "miss":
            value = built["prepared"]
        report.update(corpus=light.name, corpus_sha256=light.source.sha256, key=pdigest)
        return value, report


def prepare_run(cfg, corpora: Sequence | None, policy) -> tuple[list[PreparedCorpus], dict]:
    """Every corpus of a run prepared (through the cache unless ``cfg.prepared_cache`` is
    off) and the ``prepared_cache`` block of runinfo.json (hit or miss per entry)."""
    from ingestion import load_corpus

    tick = time.perf_counter()
    if not getattr(cfg, "prepared_cache", True):
        loaded = list(corpora) if corpora is not None else \
            [load_corpus(spec) for spec in cfg.corpus_specs]
        prepared = [prepare_corpus(c, cfg.granularity, policy, cfg.max_words) for c in loaded]
        return prepared, {"enabled": False}
    cache = PreparedCache(cache_root(cfg.cache_dir))
    items = [(None, c) for c in corpora] if corpora is not None else \
        [(spec, None) for spec in cfg.corpus_specs]
    prepared, reports = [], []
    for spec, corpus in items:
        p, report = cache.prepare(spec, corpus, cfg.granularity, policy, cfg.max_words)
        prepared.append(p)
        reports.append(report)
    return prepared, {"enabled": True, "dir": str(cache.root), "revision": code_revision(),
                      "corpora": reports, "seconds": time.perf_counter() - tick}


def attach_index_cache(backend, cfg, block: dict) -> None:
    """Give a backend that can use one (the embedded backend's ``bm25_cache``) the BM25
    index cache; its hit or miss lands in ``block["bm25_index"]``."""
    if not block.get("enabled") or not hasattr(backend, "bm25_cache"):
        return
    from harness.retrieval.index_cache import BM25IndexCache

    backend.bm25_cache = BM25IndexCache(Path(block["dir"]), report=block)
