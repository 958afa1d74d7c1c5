"""The backend interface: index documents, return candidate lists per leg.

A backend owns storage and first-stage scoring only.  Fusion, rerank and scoring live in
the harness (:mod:`harness.retrieval.fusion`, :mod:`harness.retrieval.rerank`,
:mod:`harness.evaluation.scoring`), so one arm means the same thing on every backend.
Nothing here assumes the index lives in this process: documents go in as plain records,
results come back as ``(doc_id, score)`` lists, and embedding provenance is *surveyed* from
what the index holds.

Legs: ``bm25`` (lexical) and ``dense`` (inner product over embeddings).  Each leg's
list is in the harness's total order: score descending, then document structure
(:func:`harness.core.doc_ids.rank_key`), so the cut at ``k`` never depends on input order.

A backend whose index lives elsewhere may fail mid-run (the node went away, the index was
deleted or written to): it raises :class:`BackendError`, the command exits
:data:`EXIT_BACKEND` and no results directory is written.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from harness.core.doc_ids import rank_key

LEGS = ("bm25", "dense")

#: exit code of a run whose backend failed or changed under it (nothing is written)
EXIT_BACKEND = 5


class BackendError(RuntimeError):
    """The backend cannot serve this run: unreachable, its index gone, changed during the
    measurement, or not what this product wrote.  The message says which and what to do."""


@dataclass(frozen=True)
class IndexDoc:
    """One document as a backend indexes it."""

    doc_id: str
    file_id: str
    #: the text the lexical leg indexes
    text: str
    #: the text the dense leg embeds (the text itself, or a header + the text)
    embedded_text: str
    #: the chunk's own record (a backend that stores per-document metadata keeps them)
    chunk_index: int | None = None
    doc_type: str | None = None
    speaker: str | None = None
    start: float | None = None
    end: float | None = None


@dataclass(frozen=True)
class SearchQuery:
    """One query; ``files`` restricts it to those files (the gold-files oracle scope).

    The text must be valid Unicode: a lone surrogate (``"\\ud800"`` in a JSON query file)
    cannot be sent to any system, so it is refused (ValueError, exit 2) naming the query."""

    query_id: str
    text: str
    files: tuple[str, ...] | None = None

    def __post_init__(self):
        for field, value in (("id", self.query_id), ("text", self.text)):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(
                    f"query {self.query_id.encode('utf-8', 'backslashreplace').decode()!r}: "
                    f"its {field} holds a lone surrogate (U+{ord(value[exc.start]):04X}) at "
                    f"character {exc.start + 1}, which is not valid Unicode; fix the query "
                    "file") from None


Candidates = dict[str, list[tuple[str, float]]]


@dataclass(frozen=True)
class EmbeddingSurvey:
    """What the indexed documents say about the model that embedded them."""

    #: model label (or None when a document does not say) -> number of documents
    counts: Mapping[str | None, int]
    dimension: int | None


class Backend(ABC):
    """Index once, then search legs for batches of queries (thread-safe after indexing)."""

    name: str = "abstract"

    @abstractmethod
    def index(self, docs: Sequence[IndexDoc], legs: Sequence[str]) -> None:
        """Index ``docs`` for the given legs (a leg not asked for is not built)."""

    @abstractmethod
    def search(self, leg: str, queries: Sequence[SearchQuery], k: int) -> Candidates:
        """Top ``k`` per query on one leg: ``{query_id: [(doc_id, score), ...]}``.

        Only documents the leg actually matches are returned (a BM25 score of 0 is no
        match), so a list may be shorter than ``k`` or empty.
        """

    def search_legs(self, legs: Sequence[str], queries: Sequence[SearchQuery],
                    k: int) -> dict[str, Candidates]:
        """Every leg of a batch: ``{leg: search(leg, queries, k)}`` (a remote backend may
        send them in one request)."""
        return {leg: self.search(leg, queries, k) for leg in legs}

    def fused_search(self, queries: Sequence[SearchQuery], spec, size: int) -> Candidates | None:
        """Fused lists computed by the backend itself, or None (the default): the harness
        fuses the legs (:func:`harness.retrieval.fusion.fuse`)."""
        return None

    def end_measurement(self) -> None:
        """Called once retrieval is over, before anything is written: a backend whose index
        can change under it raises :class:`BackendError` when it did."""
        return None

    def prepare_queries(self, queries: Sequence[SearchQuery]) -> None:
        """Optional: do per-query work that is not retrieval (e.g. embed all queries at
        once) before latency is measured."""
        return None

    @abstractmethod
    def embedding_survey(self) -> EmbeddingSurvey:
        """Per-document embedding model labels, counted, and the vector dimension."""

    @abstractmethod
    def describe(self) -> dict:
        """The backend's part of metrics.json (deterministic, no machine paths)."""

    def run_stats(self) -> dict:
        """Counters for runinfo.json (not part of the claim)."""
        return {}

    def close(self) -> None:
        """Release resources."""
        return None


def check_leg(leg: str) -> None:
    if leg not in LEGS:
        raise ValueError(f"unknown leg {leg!r}; expected one of {sorted(LEGS)}")


def ordered_for_index(docs: Sequence[IndexDoc],
                      legs: Sequence[str]) -> tuple[Sequence[IndexDoc], tuple[str, ...]]:
    """What every backend's ``index`` starts from: the documents in the harness's structural
    order (:func:`harness.core.doc_ids.rank_key`) and the legs in their fixed order, after
    refusing an unknown leg, an empty document set and a duplicate id.

    Columnar documents (:class:`harness.retrieval.backends.documents.IndexDocs`) stay
    columnar, and their ``order``, when they carry it, is used instead of sorting."""
    for leg in legs:
        check_leg(leg)
    if not docs:
        raise ValueError("nothing to index: no documents")
    columns = getattr(docs, "doc_id", None)
    ids = columns if isinstance(columns, list) else [d.doc_id for d in docs]
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        for doc_id in ids:
            if doc_id in seen:
                raise ValueError(f"duplicate doc_id {doc_id!r} in the index")
            seen.add(doc_id)
    if isinstance(columns, list):
        order = docs.order
        if order is None:
            order = sorted(range(len(ids)), key=lambda i: rank_key(ids[i], 0.0))
        ordered = docs if order == list(range(len(ids))) else docs.take(order)
    else:
        ordered = sorted(docs, key=lambda d: rank_key(d.doc_id, 0.0))
    return ordered, tuple(leg for leg in ("bm25", "dense") if leg in legs)


class QueryEncoding:
    """For a backend with a dense leg: each distinct query text encoded once, under one lock
    (an encoder is not safe to call from two worker threads at once).  Mixed in before
    :class:`Backend`, whose ``prepare_queries`` it implements."""

    encoder: Any
    legs: tuple[str, ...]

    def _init_query_vectors(self) -> None:
        self._query_vectors: dict[str, Any] = {}
        self._encode_lock = threading.Lock()

    def encode_missing(self, texts: Iterable[str]) -> None:
        missing = sorted(set(texts) - set(self._query_vectors))
        if not missing:
            return
        if self.encoder is None:
            raise ValueError("dense search needs query vectors or an encoder")
        with self._encode_lock:
            vectors = self.encoder.encode_queries(missing)
        self._query_vectors.update(zip(missing, vectors))

    def prepare_queries(self, queries: Sequence[SearchQuery]) -> None:
        """Encode every query before latency is measured (only with a dense leg)."""
        if "dense" in self.legs:
            self.encode_missing(q.text for q in queries)

    def query_vector(self, text: str) -> Any:
        self.encode_missing([text])
        return self._query_vectors[text]
