"""BM25 scores from bm25s's eager score matrix, without importing bm25s.

bm25s (Lù, 2024, "BM25S: Orders of magnitude faster lexical search via eager sparse
scoring") precomputes every term's BM25 contribution per document and stores the matrix as
CSC arrays (``data``, ``indices``, ``indptr``: one column per token id).  A query's scores
are the sum, over its token ids in order, of each column added into a float32 zero vector:
exactly what bm25s's numpy backend does (``BM25._compute_relevance_from_scores``, with
``np.add.at``), so the scores are the same bits
(``tests/harness/retrieval/test_bm25_scores.py`` compares the two).

Importing bm25s imports numba and scipy (about 0.8 s per process); a cached index is read
here from bm25s's own saved arrays (``allow_pickle=False``) and checked before use, so a
second arm over a cached index never imports it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

#: the files ``bm25s.BM25.save`` writes for the score matrix and its parameters
DATA_FILE = "data.csc.index.npy"
INDICES_FILE = "indices.csc.index.npy"
INDPTR_FILE = "indptr.csc.index.npy"
PARAMS_FILE = "params.index.json"


class BM25Scores:
    """``scores(token_ids) -> float32 array`` over ``num_docs`` documents."""

    def __init__(self, data: np.ndarray, indices: np.ndarray, indptr: np.ndarray,
                 num_docs: int):
        self.data, self.indices, self.indptr = data, indices, indptr
        self.num_docs = int(num_docs)
        self._check()
        # ``np.add.at`` takes its fast path only with native-size indices (3x here)
        self.indices = self.indices.astype(np.intp, copy=False)

    @classmethod
    def from_model(cls, model) -> "BM25Scores":
        """The score matrix of a built ``bm25s.BM25`` (lucene variant: no non-occurrence
        term)."""
        if getattr(model, "nonoccurrence_array", None) is not None:
            raise ValueError("a BM25 variant with a non-occurrence term is not supported")
        s = model.scores
        return cls(np.asarray(s["data"]), np.asarray(s["indices"]), np.asarray(s["indptr"]),
                   s["num_docs"])

    @classmethod
    def load(cls, folder, vocabulary: int) -> "BM25Scores":
        """Read a saved index; ``ValueError`` when any part is missing or inconsistent."""
        folder = Path(folder)
        try:
            params = json.loads((folder / PARAMS_FILE).read_text(encoding="utf-8"))
            arrays = [np.load(folder / name, allow_pickle=False)
                      for name in (DATA_FILE, INDICES_FILE, INDPTR_FILE)]
        except (OSError, ValueError, EOFError) as exc:
            raise ValueError(f"not a readable bm25s index: {exc}") from None
        if not isinstance(params, dict) or params.get("method") != "lucene" \
                or params.get("dtype") != "float32" or not isinstance(params.get("num_docs"), int):
            raise ValueError("bm25s parameters are not those of a lucene float32 index")
        scores = cls(*arrays, params["num_docs"])
        if len(scores.indptr) != vocabulary + 1:
            raise ValueError(f"the score matrix has {len(scores.indptr) - 1} columns for a "
                             f"vocabulary of {vocabulary}")
        return scores

    def _check(self) -> None:
        data, indices, indptr = self.data, self.indices, self.indptr
        if data.dtype != np.float32 or data.ndim != 1:
            raise ValueError("BM25 score data must be a 1-D float32 array")
        if indices.dtype.kind not in "iu" or indptr.dtype.kind not in "iu" \
                or indices.ndim != 1 or indptr.ndim != 1:
            raise ValueError("BM25 indices and indptr must be 1-D integer arrays")
        if len(indices) != len(data) or len(indptr) < 1 or indptr[0] != 0 \
                or indptr[-1] != len(data) or np.any(np.diff(indptr) < 0):
            raise ValueError("BM25 indptr does not delimit the score data")
        if len(indices) and (indices.min() < 0 or indices.max() >= self.num_docs):
            raise ValueError("BM25 indices point outside the documents")
        if not np.all(np.isfinite(data)):
            raise ValueError("BM25 score data holds a value that is not finite")

    def scores(self, token_ids) -> np.ndarray:
        """bm25s's ``get_scores_from_ids`` (module docstring)."""
        out = np.zeros(self.num_docs, dtype=np.float32)
        indptr, indices, data = self.indptr, self.indices, self.data
        for tid in token_ids:
            start, end = indptr[tid], indptr[tid + 1]
            np.add.at(out, indices[start:end], data[start:end])
        return out
