"""The embedded backend (default): everything in this process, nothing to run beside it.

* **BM25** indexed with ``bm25s`` and scored from its score matrix
  (:mod:`harness.retrieval.backends.bm25_scores`, the same float32 sums; Lucene's
  variant: ``idf = ln(1 + (N - df + 0.5)/(df + 0.5))``,
  ``tf part = tf / (tf + k1 (1 - b + b dl/avgdl))``; Robertson & Zaragoza 2009, the
  variants compared by Kamphuis et al., ECIR 2020).  ``k1`` 1.2 and ``b`` 0.75 by default.
  Document lengths are exact (Lucene encodes them in one byte, so scores can differ from
  Lucene's in the last digits).  Tokeniser: :mod:`harness.retrieval.backends.tokenizer`.
* **Dense**: exact inner product over L2-normalised embeddings (cosine), batched numpy
  matmul plus :mod:`harness.retrieval.backends.topk`; no approximate index, so no recall loss to
  account for.  Vectors come through the embedding cache.

Documents are held in structural order (``rank_key`` without the score), so a document's
position is its tie-break and each leg's list is already in the harness's total order.
"""

from __future__ import annotations

import importlib.metadata
import logging
from typing import Sequence

import numpy as np

from harness.retrieval.backends.base import (
    Backend,
    Candidates,
    EmbeddingSurvey,
    IndexDoc,
    SearchQuery,
    QueryEncoding,
    check_leg,
    ordered_for_index,
)
from harness.retrieval.backends.bm25_scores import BM25Scores
from harness.retrieval.backends.documents import column
from harness.retrieval.backends.tokenizer import Tokenizer
from harness.retrieval.backends.topk import top_k, top_k_rows

log = logging.getLogger(__name__)

DEFAULT_K1 = 1.2
DEFAULT_B = 0.75
#: queries per dense matmul (bounds the score matrix at batch x documents floats)
DENSE_BATCH = 64


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


def _progress(iterable, total: int, desc: str, enabled: bool):
    if not enabled:
        return iterable
    from tqdm import tqdm

    return tqdm(iterable, total=total, desc=desc, unit="doc", unit_scale=True,
                dynamic_ncols=True)


class EmbeddedBackend(QueryEncoding, Backend):
    """bm25s + exact dense search in memory.  ``encoder`` is a
    :class:`harness.retrieval.embeddings.CachedEncoder` (needed only for the dense leg)."""

    name = "embedded"

    def __init__(self, *, k1: float = DEFAULT_K1, b: float = DEFAULT_B, encoder=None,
                 progress: bool = True):
        if not (k1 >= 0) or not (0 <= b <= 1):
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1, self.b = float(k1), float(b)
        self.encoder = encoder
        self.progress = progress
        self.tokenizer = Tokenizer()
        self.legs: tuple[str, ...] = ()
        self.doc_ids: list[str] = []
        #: file id -> positions of its documents (made on first use: only gold-files runs)
        self._file_positions: dict[str, np.ndarray] | None = {}
        self._file_ids: Sequence[str] = ()
        self._bm25 = None
        self._vocab: dict[str, int] = {}
        self._vectors: np.ndarray | None = None
        self._labels: list[str | None] = []
        self._init_query_vectors()
        #: a :class:`harness.retrieval.index_cache.BM25IndexCache` the bench may set
        self.bm25_cache = None

    # ------------------------------------------------------------------ indexing

    def index(self, docs: Sequence[IndexDoc], legs: Sequence[str]) -> None:
        ordered, self.legs = ordered_for_index(docs, legs)
        self.doc_ids = list(column(ordered, "doc_id"))
        self._file_ids = column(ordered, "file_id")
        self._file_positions = None  # made when a query is first limited to files
        if "bm25" in self.legs:
            self._index_bm25(ordered)
        if "dense" in self.legs:
            self._index_dense(ordered)

    def _index_bm25(self, docs: Sequence[IndexDoc]) -> None:
        if self.bm25_cache is not None:
            self._vocab, self._bm25 = self.bm25_cache.fetch(docs, self.k1, self.b,
                                                            self.tokenizer.block(),
                                                            self._build_bm25)
        else:
            self._vocab, self._bm25 = self._build_bm25(docs)
        if self._bm25 is not None and not isinstance(self._bm25, BM25Scores):
            self._bm25 = BM25Scores.from_model(self._bm25)  # built here, not read from a cache

    def _build_bm25(self, docs: Sequence[IndexDoc]):
        """``(vocabulary, bm25s model or None when no document has a token)``."""
        import bm25s

        vocab: dict[str, int] = {}
        corpus_ids: list[list[int]] = []
        texts = column(docs, "text")
        for text in _progress(texts, len(texts), "indexing bm25", self.progress):
            ids = []
            for token in self.tokenizer(text):
                tid = vocab.get(token)
                if tid is None:
                    tid = vocab[token] = len(vocab)
                ids.append(tid)
            corpus_ids.append(ids)
        if not vocab:  # no document has a token: the leg matches nothing
            return vocab, None
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        model = bm25s.BM25(k1=self.k1, b=self.b, method="lucene")
        model.index((corpus_ids, dict(vocab)), show_progress=False)
        return vocab, model

    def _index_dense(self, docs: Sequence[IndexDoc]) -> None:
        if self.encoder is None:
            raise ValueError("the dense leg needs an embedding encoder")
        vectors = self.encoder.encode_documents(list(column(docs, "embedded_text")))
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._labels = [self.encoder.label] * len(docs)

    def load_vectors(self, vectors: np.ndarray, labels: Sequence[str | None]) -> None:
        """Install precomputed vectors in the index's document order (vectors computed
        elsewhere, e.g. by a benchmark); ``labels`` record each document's model."""
        if len(vectors) != len(self.doc_ids) or len(labels) != len(self.doc_ids):
            raise ValueError(f"{len(vectors)} vectors / {len(labels)} labels for "
                             f"{len(self.doc_ids)} documents")
        self._vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._labels = list(labels)
        if "dense" not in self.legs:
            self.legs = self.legs + ("dense",)

    # ------------------------------------------------------------------ search

    def _positions(self, files: tuple[str, ...]) -> np.ndarray:
        if self._file_positions is None:
            found: dict[str, list[int]] = {}
            for pos, file_id in enumerate(self._file_ids):
                found.setdefault(file_id, []).append(pos)
            self._file_positions = {f: np.asarray(p, dtype=np.int64) for f, p in found.items()}
        parts = [self._file_positions[f] for f in files if f in self._file_positions]
        if not parts:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate(parts))

    def _as_list(self, pos: np.ndarray, scores: np.ndarray) -> list[tuple[str, float]]:
        ids = self.doc_ids
        return [(ids[p], float(s)) for p, s in zip(pos.tolist(), scores.tolist())]

    def search(self, leg: str, queries: Sequence[SearchQuery], k: int) -> Candidates:
        check_leg(leg)
        if leg not in self.legs:
            raise ValueError(f"leg {leg!r} was not indexed (indexed: {list(self.legs)})")
        if k < 1:
            raise ValueError(f"k must be positive, got {k}")
        if leg == "bm25":
            return {q.query_id: self._bm25_one(q, k) for q in queries}
        return self._dense(queries, k)

    def bm25_query_ids(self, text: str) -> list[int]:
        vocab = self._vocab
        return [vocab[t] for t in self.tokenizer(text) if t in vocab]

    def _bm25_one(self, query: SearchQuery, k: int) -> list[tuple[str, float]]:
        ids = self.bm25_query_ids(query.text)
        if not ids or self._bm25 is None:
            return []
        scores = self._bm25.scores(ids)
        positions = None if query.files is None else self._positions(query.files)
        pos, vals = top_k(scores, k, positions, positive_only=True)
        return self._as_list(pos, vals)

    def _query_matrix(self, queries: Sequence[SearchQuery]) -> np.ndarray:
        self.encode_missing(q.text for q in queries)
        return np.stack([self._query_vectors[q.text] for q in queries]).astype(np.float32)

    def _dense(self, queries: Sequence[SearchQuery], k: int) -> Candidates:
        out: Candidates = {}
        if not queries:
            return out
        matrix = self._query_matrix(queries)
        vectors = self._vectors
        free = [i for i, q in enumerate(queries) if q.files is None]
        for start in range(0, len(free), DENSE_BATCH):
            rows = free[start:start + DENSE_BATCH]
            scores = matrix[rows] @ vectors.T
            pos, vals = top_k_rows(scores, k)
            for r, i in enumerate(rows):
                out[queries[i].query_id] = self._as_list(pos[r], vals[r])
        for i, q in enumerate(queries):
            if q.files is None:
                continue
            positions = self._positions(q.files)
            scores = np.zeros(len(self.doc_ids), dtype=np.float32)
            if len(positions):
                scores[positions] = vectors[positions] @ matrix[i]
            pos, vals = top_k(scores, k, positions)
            out[q.query_id] = self._as_list(pos, vals)
        return out

    # ------------------------------------------------------------------ provenance

    def embedding_survey(self) -> EmbeddingSurvey:
        counts: dict[str | None, int] = {}
        for label in self._labels:
            counts[label] = counts.get(label, 0) + 1
        dim = None if self._vectors is None else int(self._vectors.shape[1])
        return EmbeddingSurvey(counts, dim)

    def describe(self) -> dict:
        block = {"name": self.name, "legs": list(self.legs), "documents": len(self.doc_ids)}
        if "bm25" in self.legs:
            block["bm25"] = {
                "implementation": f"bm25s {_version('bm25s')}",
                "variant": "lucene",
                "k1": self.k1,
                "b": self.b,
                "tokenizer": self.tokenizer.block(),
                "vocabulary": len(self._vocab),
            }
        if "dense" in self.legs:
            block["dense"] = {"search": "exact inner product (numpy matmul + exact top-k)",
                              "similarity": "inner product of the stored vectors (cosine when "
                                            "the model profile L2-normalises them)"}
        return block

    def run_stats(self) -> dict:
        stats = getattr(self.encoder, "stats", None)
        return {"embedding": stats.block()} if stats is not None else {}
