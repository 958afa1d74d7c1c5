"""What an index of this product looks like, what it is called, and how an existing one is
checked before anything touches it.

**Analyzers** (the lexical leg's text field; ``text.exact`` serves phrase aggregations):

* ``embedded`` (default): as close to :mod:`harness.retrieval.backends.tokenizer` as
  OpenSearch allows: a ``pattern`` tokenizer keeping runs of two or more word characters
  (``\\w\\w+`` with ``UNICODE_CHARACTER_CLASS``), then ``lowercase``, then a ``stop`` filter
  holding exactly the embedded tokenizer's 33 stop words.  Differences (docs/opensearch.md):
  the embedded tokenizer lowercases *before* splitting (``İ`` becomes ``i`` + a combining dot
  there, so ``İstanbul`` yields ``stanbul``); Python's ``\\w`` counts numeric characters such
  as ``½`` and Java's does not; Java's counts connector punctuation (``‿``) and combining
  marks, Python's does not.
* ``whitespace-lowercase``: the ``whitespace`` tokenizer and ``lowercase``: the parity
  check's common ground (both backends can run it exactly).
* ``text.exact``: runs of word characters and hyphens (``[\\w-]+``), lowercased, no stop
  words: a phrase matches where the generator's word-and-hyphen-bounded phrase would.

**Vectors**: ``knn_vector`` with ``index.knn: true`` and ``method {name: hnsw, engine:
lucene, space_type: innerproduct}``.  The engine is always named: without it 2.19 falls back
to faiss, whose native library the Maven artefacts do not carry, and the node fails at the
first refresh.  Inner product is what the embedded backend computes (cosine when the model
L2-normalises its vectors).

**One vector per distinct vector** (layout ``distinct``, the default): documents with
byte-identical vectors (the same text: meeting transcripts repeat "Yeah." thousands of times)
share one vector, held by the first of them in index order with the others listed in its
``vector_members`` (and every file of the group in ``vector_files``, for filtered searches).
Lucene's HNSW graph degrades badly on exact duplicates (measured on QMSum val: top-48 overlap
with exact search 0.89 with a vector on every chunk against 0.99 with one per distinct vector,
at the same ``ef_search``; some queries found none of their true neighbours), and identical
vectors score identically, so expanding each hit into its group is exact.  Layout
``every-document`` (a vector on every document, what a deployment's own index holds) is used
for server-side fusion, where the node must score every document itself.

**Order**: the index is sorted by the harness's structural tie-break (``rank_type``,
``rank_file``, ``rank_index``, ``doc_id``: :func:`harness.core.doc_ids.rank_key` without
the score), so Lucene breaks score ties, and cuts at ``k``, exactly as the harness does.

**Name**: ``{prefix}-{16 hex}``, the digest of every document indexed (ids, texts, metadata,
so the chunking is in it) and of the index-shaping parameters (analyzer, BM25 ``k1``/``b``,
the embedding model and the HNSW parameters): a changed corpus is a new index, never an
overwrite.  The mapping version is deliberately not in the name, so an index written by an
older version of this product is found and refused instead of silently duplicated.
"""

from __future__ import annotations

import hashlib
import json
from typing import Sequence

from harness.core.canonical import canonical_json
from harness.core.doc_ids import parse_doc_id
from harness.retrieval.backends.base import BackendError

#: written into every index's ``_meta.product``; an index without it is not ours
PRODUCT = "retrieval-claims harness"
#: bumped whenever the body below changes in a way a reader must know about
MAPPING_VERSION = 1
DEFAULT_PREFIX = "harness"
SPACE_TYPE = "innerproduct"
ENGINE = "lucene"
#: HNSW graph parameters (Malkov & Yashunin, TPAMI 2020): links per node, build beam width
HNSW_M = 16
EF_CONSTRUCTION = 128
TEXT = "text"
VECTOR = "vector"
SORT_FIELDS = ("rank_type", "rank_file", "rank_index", "doc_id")

ANALYZERS = ("embedded", "whitespace-lowercase")
DEFAULT_ANALYZER = "embedded"

ANALYZER_DESCRIPTIONS = {
    "embedded": ("pattern tokenizer \\w\\w+ (UNICODE_CHARACTER_CLASS), then lowercase, then "
                 "the embedded tokenizer's 33 English stop words; no stemming (splits before "
                 "lowercasing, Java's \\w: see docs/opensearch.md)"),
    "whitespace-lowercase": "whitespace tokenizer, then lowercase; no stop words, no stemming",
}
EXACT_DESCRIPTION = "pattern tokenizer [\\w-]+ (UNICODE_CHARACTER_CLASS), then lowercase"


def analysis(analyzer: str) -> dict:
    """The ``index.analysis`` settings for one analyzer choice (plus ``exact``)."""
    from harness.retrieval.backends.tokenizer import stopwords

    if analyzer not in ANALYZERS:
        raise ValueError(f"unknown --opensearch-analyzer {analyzer!r}; expected one of "
                         f"{sorted(ANALYZERS)}")
    unicode = "UNICODE_CHARACTER_CLASS"
    body = {
        "tokenizer": {
            "word_runs": {"type": "pattern", "pattern": "\\w\\w+", "group": 0, "flags": unicode},
            "hyphenated_words": {"type": "pattern", "pattern": "[\\w-]+", "group": 0,
                                 "flags": unicode},
        },
        "filter": {"embedded_stop": {"type": "stop", "stopwords": sorted(stopwords())}},
        "analyzer": {
            "embedded": {"type": "custom", "tokenizer": "word_runs",
                         "filter": ["lowercase", "embedded_stop"]},
            "whitespace-lowercase": {"type": "custom", "tokenizer": "whitespace",
                                     "filter": ["lowercase"]},
            "exact": {"type": "custom", "tokenizer": "hyphenated_words", "filter": ["lowercase"]},
        },
    }
    return body


def knn_field(dimension: int, m: int = HNSW_M, ef_construction: int = EF_CONSTRUCTION) -> dict:
    """A ``knn_vector`` mapping that names its engine (see the module docstring)."""
    return {"type": "knn_vector", "dimension": int(dimension),
            "method": {"name": "hnsw", "engine": ENGINE, "space_type": SPACE_TYPE,
                       "parameters": {"m": int(m), "ef_construction": int(ef_construction)}}}


VECTOR_LAYOUTS = ("distinct", "every-document")


def shape(analyzer: str, k1: float, b: float, vectors: dict | None) -> dict:
    """The index-shaping parameters (``vectors``: model label, dimension, layout, m,
    ef_construction; None for a text-only index)."""
    return {"analyzer": analyzer, "bm25": {"k1": float(k1), "b": float(b)},
            "vectors": None if vectors is None else dict(vectors)}


def doc_source(doc, load_id: str, label: str | None, vector=None, embedded: bool = False,
               members: Sequence[str] = (), member_files: Sequence[str] = ()) -> dict:
    """One document's ``_source``: ``vector`` a list of floats (or None: no vector, or one
    held by another document of its group), ``embedded`` whether the document was embedded
    (its model label is then recorded), ``members``/``member_files`` the other documents of
    the vector's group and all their files."""
    rank_type, rank_file, rank_index = parse_doc_id(doc.doc_id)
    source = {
        "doc_id": doc.doc_id, "file_id": doc.file_id,
        "chunk_index": doc.chunk_index if doc.chunk_index is not None else rank_index,
        "doc_type": doc.doc_type or rank_type,
        "speaker": doc.speaker, "start": doc.start, "end": doc.end,
        "rank_type": rank_type, "rank_file": rank_file, "rank_index": rank_index,
        TEXT: doc.text, "load_id": load_id,
    }
    if embedded:
        source["embedding_model"] = label
    if vector is not None:
        source[VECTOR] = vector
        source["vector_members"] = list(members)
        source["vector_files"] = sorted({doc.file_id, *member_files})
    return source


def vector_groups(vectors) -> list[int]:
    """For each row of ``vectors`` (index order), the row holding its group's vector: the
    first row with the same bytes."""
    first: dict[bytes, int] = {}
    return [first.setdefault(row.tobytes(), i) for i, row in enumerate(vectors)]


def documents_digest(docs) -> str:
    """sha256 over every document as indexed (in the given, fixed order)."""
    h = hashlib.sha256()
    for d in docs:
        h.update(json.dumps([d.doc_id, d.file_id, d.text, d.embedded_text, d.chunk_index,
                             d.doc_type, d.speaker, d.start, d.end],
                            ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def index_name(prefix: str, index_shape: dict, digest: str) -> str:
    key = canonical_json({"shape": index_shape, "documents": digest})
    return f"{prefix}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:16]}"


def check_prefix(prefix: str) -> str:
    import re

    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,200}", prefix or ""):
        raise ValueError(f"--opensearch-index-prefix {prefix!r}: lower-case letters, digits, "
                         "'-' and '_' only, starting with a letter or digit")
    return prefix


def meta(index_shape: dict, digest: str, load_id: str, documents: int, files: int,
         sealed_seq_no: int | None = None) -> dict:
    """``_meta`` of the mapping; ``sealed_seq_no`` is set once the load is complete."""
    return {"product": PRODUCT, "mapping_version": MAPPING_VERSION, "shape": index_shape,
            "documents_sha256": digest, "load_id": load_id, "documents": documents,
            "files": files, "sealed_seq_no": sealed_seq_no}


def index_body(analyzer: str, k1: float, b: float, dimension: int | None,
               index_meta: dict, m: int = HNSW_M, ef_construction: int = EF_CONSTRUCTION) -> dict:
    """The whole ``PUT /{index}`` body: one shard, no replica, refresh off while loading."""
    settings = {
        "number_of_shards": 1,
        "number_of_replicas": 0,
        "refresh_interval": "-1",
        "knn": dimension is not None,
        "sort.field": list(SORT_FIELDS),
        "sort.order": ["asc"] * len(SORT_FIELDS),
        "similarity": {"default": {"type": "BM25", "k1": float(k1), "b": float(b)}},
    }
    keyword = {"type": "keyword"}
    properties = {
        "doc_id": keyword, "file_id": keyword, "doc_type": keyword, "speaker": keyword,
        "chunk_index": {"type": "integer"}, "start": {"type": "double"},
        "end": {"type": "double"},
        "rank_type": keyword, "rank_file": keyword, "rank_index": {"type": "integer"},
        "load_id": keyword, "embedding_model": keyword,
        "vector_members": keyword, "vector_files": keyword,
        TEXT: {"type": "text", "analyzer": analyzer,
               "fields": {"exact": {"type": "text", "analyzer": "exact"}}},
    }
    if dimension is not None:
        properties[VECTOR] = knn_field(dimension, m, ef_construction)
    return {"settings": {"index": settings, "analysis": analysis(analyzer)},
            "mappings": {"dynamic": "strict", "_meta": index_meta, "properties": properties}}


# --------------------------------------------------------------------------- existing index


def knn_fields(properties: dict, path: str = "") -> dict[str, dict]:
    """Every ``knn_vector`` field of a mapping (nested ``properties`` and ``fields`` too)."""
    out = {}
    for name, spec in (properties or {}).items():
        full = f"{path}{name}"
        if not isinstance(spec, dict):
            continue
        if spec.get("type") == "knn_vector":
            out[full] = spec
        out.update(knn_fields(spec.get("properties", {}), full + "."))
        out.update(knn_fields(spec.get("fields", {}), full + "."))
    return out


def check_existing(name: str, mapping: dict, expected_shape: dict, digest: str) -> dict:
    """Refuse an existing index this run must not use (raises :class:`BackendError`);
    returns its ``_meta``.  Checked before any refresh, search or write touches it."""
    how = (f"delete it (DELETE /{name}) or rerun with --opensearch-rebuild, which deletes "
           "and reloads an index of this product")
    meta_block = mapping.get("_meta") or {}
    problems = []
    for field, spec in sorted(knn_fields(mapping.get("properties", {})).items()):
        engine = (spec.get("method") or {}).get("engine")
        if engine != ENGINE:
            problems.append(
                f"knn_vector field {field!r} names engine {engine!r}, not 'lucene' (without "
                "the native faiss library this node would fail at the first refresh)")
    if meta_block.get("product") != PRODUCT:
        raise BackendError(
            f"index {name!r} exists and was not written by this product (no "
            f"_meta.product {PRODUCT!r}); refusing to read or change it"
            + ("; " + "; ".join(problems) if problems else ""))
    version = meta_block.get("mapping_version")
    if version != MAPPING_VERSION:
        problems.insert(0, f"its mapping is version {version!r}, this product writes version "
                           f"{MAPPING_VERSION}")
    if not problems and (meta_block.get("shape") != expected_shape
                         or meta_block.get("documents_sha256") != digest):
        problems.append("its recorded shape or document digest differs from this run's")
    if problems:
        raise BackendError(f"refusing index {name!r}: " + "; ".join(problems) + f"; {how}")
    if meta_block.get("sealed_seq_no") is None:
        raise BackendError(
            f"index {name!r} exists but its load never completed (interrupted, or another "
            f"run is loading it now); {how}")
    return meta_block


# --------------------------------------------------------------------------- live settings


def _plain(value):
    """A setting as compared: the node returns every leaf as a string (``"1.2"``,
    ``"true"``), the body holds numbers and booleans."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value) if value.strip() and value.strip()[0] in "+-.0123456789" \
                else value
        except ValueError:
            return value
    return value


def _differences(path: str, found, expected) -> list[str]:
    if isinstance(found, dict) and isinstance(expected, dict):
        out = []
        for key in sorted(set(found) | set(expected)):
            out += _differences(f"{path}.{key}", found.get(key), expected.get(key))
        return out
    if found != expected:
        return [f"{path} is {found!r}, built with {expected!r}"]
    return []


def check_live(name: str, settings: dict, mappings: dict, expected_body: dict,
               state: str | None = "open") -> None:
    """Refuse (:class:`BackendError`) an index whose live settings or field mappings differ
    from those this run builds with and records (``expected_body``: :func:`index_body`).

    Checked before anything is measured: the BM25 similarity (``k1``, ``b``), every analyzer,
    tokenizer and filter (stop words included), the text field (analyzers, search analyzer)
    and the vector field.  An index closed, given other settings and reopened keeps its
    ``_meta`` (the shape it was loaded with) but is no longer that index.  ``settings`` is
    ``GET /{name}/_settings``'s ``settings.index``; ``mappings`` its ``_mapping``'s."""
    how = (f"the index was changed after it was loaded; rerun with --opensearch-rebuild to "
           f"reload it, or delete it (DELETE /{name})")
    if state != "open":
        raise BackendError(f"refusing index {name!r}: it is {state or 'in an unknown state'}, "
                           f"not open; {how}")
    index = expected_body["settings"]["index"]
    problems = _differences("index.similarity", _plain(settings.get("similarity")),
                            _plain(index["similarity"]))
    problems += _differences("index.analysis", _plain(settings.get("analysis")),
                             _plain(expected_body["settings"]["analysis"]))
    found_props = mappings.get("properties") or {}
    for field_name, spec in expected_body["mappings"]["properties"].items():
        if field_name in (TEXT, VECTOR):
            problems += _differences(f"mappings.{field_name}", _plain(found_props.get(field_name)),
                                     _plain(spec))
    if problems:
        shown = "; ".join(problems[:6]) + (f"; and {len(problems) - 6} more" if len(problems) > 6 else "")
        raise BackendError(f"refusing index {name!r}: its live settings differ from those it "
                           f"was built with, which this run would record: {shown}; {how}")
