"""Exact top-k selection in the harness's total order: score descending, then position.

Backends store documents sorted by :func:`harness.core.doc_ids.rank_key` structure, so a
document's position *is* its structural tie-break; selecting by ``(-score, position)``
gives the same list :func:`harness.evaluation.ordering.normalise_ranking` would, and every document
tied with the k-th score competes for the cut (``argpartition`` alone would pick an
arbitrary subset of a tie).

Speed: a full partition of 100,000 scores per query costs more than the matmul that made
them.  Instead each row is cut into ``4k`` blocks; the k-th largest *block maximum* is a
lower bound on the k-th largest score (those k maxima are k distinct scores at least that
large), so every score at or above it is a candidate and the top k (ties included) are
among them.  Only the few candidates are sorted.
"""

from __future__ import annotations

import numpy as np

#: below this many scores per wanted result a plain partition is as cheap
_BLOCK_MIN_RATIO = 16


def _lower_bounds(matrix: np.ndarray, k: int) -> np.ndarray:
    """Per row, a value <= the row's k-th largest score (requires ``k <= cols``)."""
    rows, n = matrix.shape
    if n < _BLOCK_MIN_RATIO * k:
        return np.partition(matrix, n - k, axis=1)[:, n - k]
    blocks = 4 * k
    size = n // blocks
    main = blocks * size
    maxima = matrix[:, :main].reshape(rows, blocks, size).max(axis=2)
    if main < n:
        maxima = np.concatenate([maxima, matrix[:, main:].max(axis=1, keepdims=True)], axis=1)
    m = maxima.shape[1]
    return np.partition(maxima, m - k, axis=1)[:, m - k]


def _select(values: np.ndarray, cand: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((cand, -values))[:k]
    return cand[order], values[order]


def top_k(scores: np.ndarray, k: int, positions: np.ndarray | None = None,
          positive_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` of a 1-D score array over all documents, or only over ``positions``
    (ascending indexes into ``scores``).

    Returns ``(positions, scores)`` in order.  ``positive_only`` drops scores <= 0 (a BM25
    score of 0 means no query term matched).
    """
    if positions is None:
        idx = None
    else:
        idx = np.asarray(positions)
        scores = scores[idx]
    n = len(scores)
    k = min(k, n)
    if k <= 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, scores[:0]
    if k < n:
        bound = _lower_bounds(scores.reshape(1, n), k)[0]
        if positive_only and bound <= 0:
            cand = np.flatnonzero(scores > 0)
        else:
            cand = np.flatnonzero(scores >= bound)
    else:
        cand = np.flatnonzero(scores > 0) if positive_only else np.arange(n)
    pos, vals = _select(scores[cand], cand, k)
    return (pos if idx is None else idx[pos]), vals


def top_k_rows(matrix: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise :func:`top_k` of a 2-D score matrix (all columns eligible).

    Returns ``(positions, scores)`` of shape ``(rows, min(k, cols))``.
    """
    rows, n = matrix.shape
    k = min(k, n)
    pos = np.zeros((rows, max(k, 0)), dtype=np.int64)
    out = np.zeros((rows, max(k, 0)), dtype=matrix.dtype)
    if k <= 0 or rows == 0:
        return pos, out
    if k == n:
        for r in range(rows):
            pos[r], out[r] = _select(matrix[r], np.arange(n), k)
        return pos, out
    bounds = _lower_bounds(matrix, k)
    hit_rows, hit_cols = np.nonzero(matrix >= bounds[:, None])
    starts = np.searchsorted(hit_rows, np.arange(rows + 1))
    for r in range(rows):
        cand = hit_cols[starts[r]:starts[r + 1]]
        pos[r], out[r] = _select(matrix[r, cand], cand, k)
    return pos, out
