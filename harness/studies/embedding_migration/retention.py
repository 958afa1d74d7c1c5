"""Adapted recall retention: exact search, per-query recall@k, and ratio intervals.

``ARR = mean(recall@k of adapted NEW queries in OLD's index) / mean(recall@k of the oracle,
NEW queries in NEW's index)``: how much of a full re-index the adapter recovers.  The
baselines use the same denominator: OLD alone (OLD's queries in OLD's index) and the
unadapted NEW query in OLD's index (only when the dimensions match).  ``upgrade_gain =
mean(oracle recall) / mean(OLD recall)``: whether NEW retrieves better than OLD at all.

Search is exact inner product in float64 over the vectors as stored, top ``k`` in the
harness's total order (score descending, then index position;
:func:`harness.retrieval.backends.topk.top_k_rows`), with an optional masked position per query (T0
masks the query's own document).  Recall@k of a query = relevant documents in its top k /
its relevant documents (trec_eval's ``recall_k``).

Intervals are the paired ratio bootstrap (:func:`harness.stats.intervals.paired_ratio_interval`):
each resample draws query indices once and sums numerator and denominator over the same
ones.  Every quantity of one tier uses the same stream (``seed`` with labels ``migration``,
tier), so they are resampled on identical draws, and each estimate is checked to lie inside
its own interval (:func:`harness.stats.intervals.check_contains` raises when it does not).

Whether NEW can replace OLD outright (a cheaper model of the same space): per query, the
top-``k`` overlap ``|top_k(NEW in NEW's index) & top_k(OLD in OLD's index)| / k``, and at
T1 the paired difference nDCG@k(NEW) - nDCG@k(OLD) over the judged grades (Jarvelin and
Kekalainen 2002, "Cumulated gain-based evaluation of IR techniques", TOIS 20(4); gain =
grade, discount ``log2(rank + 1)``, ideal ranking from every judged grade, as trec_eval's
``ndcg_cut``).  Both are means with bootstrap intervals
(:func:`harness.stats.intervals.bootstrap_mean_interval`), each on its own stream (labels
``migration``, tier, quantity).
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from harness.retrieval.backends.topk import top_k_rows
from harness.stats.intervals import (Interval, bootstrap_mean_interval, check_contains,
                                     paired_ratio_interval)
from harness.core.seeding import STREAM_RULE, derive_rng

log = logging.getLogger(__name__)

#: queries scored per matrix product (bounds memory: rows x index size float64)
SEARCH_BATCH = 256
#: how each tier's bootstrap stream is derived (written into the report)
STREAM = STREAM_RULE + "; labels 'migration', tier (one stream per tier, shared by every ratio)"


def search(queries: np.ndarray, index: np.ndarray, k: int,
           mask: Sequence[int] | None = None) -> np.ndarray:
    """Positions of the top ``k`` index rows per query (``(n, k)``), exact inner product.

    ``mask[i]`` (when given) is a position query ``i`` may not retrieve (its own document).
    """
    q = np.asarray(queries, dtype=np.float64)
    x = np.asarray(index, dtype=np.float64)
    if q.ndim != 2 or x.ndim != 2 or q.shape[1] != x.shape[1]:
        raise ValueError(f"search: query vectors {q.shape} and index vectors {x.shape} do not "
                         "share a dimension")
    if mask is not None and len(mask) != len(q):
        raise ValueError(f"search: {len(mask)} masked positions for {len(q)} queries")
    limit = len(x) - (1 if mask is not None else 0)
    if k < 1 or k > limit:
        raise ValueError(f"search: k={k} needs an index of more than k documents "
                         f"(it holds {len(x)})")
    out = np.empty((len(q), k), dtype=np.int64)
    for start in range(0, len(q), SEARCH_BATCH):
        scores = q[start:start + SEARCH_BATCH] @ x.T
        if mask is not None:
            rows = np.arange(len(scores))
            scores[rows, np.asarray(mask[start:start + SEARCH_BATCH])] = -np.inf
        out[start:start + len(scores)] = top_k_rows(scores, k)[0]
    return out


def recall_at_k(top: np.ndarray, relevant: Sequence[set[int] | frozenset[int]]) -> np.ndarray:
    """Per query: ``|top_k & relevant| / |relevant|`` (a query needs at least one relevant)."""
    if len(top) != len(relevant):
        raise ValueError(f"recall: {len(top)} rankings for {len(relevant)} relevance sets")
    out = np.empty(len(top), dtype=np.float64)
    for i, (row, rel) in enumerate(zip(top, relevant)):
        if not rel:
            raise ValueError(f"recall: query {i} has no relevant document")
        out[i] = len(rel.intersection(row.tolist())) / len(rel)
    return out


def hits(top: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per query: 1.0 if its single relevant position ``target[i]`` is in its top k."""
    return (top == np.asarray(target)[:, None]).any(axis=1).astype(np.float64)


def ratio(numerator, denominator, *, tier: str, seed: int, resamples: int,
          confidence: float, method: str, what: str) -> Interval:
    """``mean(numerator) / mean(denominator)`` with its paired bootstrap interval, checked
    to contain its estimate (raises :class:`harness.stats.intervals.IntervalError`)."""
    num = np.asarray(numerator, dtype=np.float64)
    den = np.asarray(denominator, dtype=np.float64)
    if den.sum() <= 0:
        raise ValueError(f"{tier} {what}: the denominator's mean recall is 0 over {len(den)} "
                         "queries, so the ratio is undefined (NEW retrieves nothing relevant "
                         "at this depth)")
    interval = paired_ratio_interval(num, den, method=method, confidence=confidence,
                                     resamples=resamples, seed=seed,
                                     rng=derive_rng(seed, "migration", tier))
    check_contains(interval.estimate, interval.lower, interval.upper, f"{tier} {what}")
    return interval


def interval_block(interval: Interval) -> dict:
    """What the report records for one ratio."""
    return {"estimate": interval.estimate, "lower": interval.lower, "upper": interval.upper,
            "degenerate": interval.degenerate}


def overlap_at_k(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per query: the share of ``a``'s top k that is also in ``b``'s top k."""
    if a.shape != b.shape:
        raise ValueError(f"overlap: rankings of shapes {a.shape} and {b.shape}")
    k = a.shape[1]
    return np.array([len(set(x.tolist()) & set(y.tolist())) / k for x, y in zip(a, b)],
                    dtype=np.float64)


def ndcg_at_k(top: np.ndarray, grades: Sequence[dict[int, float]]) -> np.ndarray:
    """Per query: nDCG@k of the ranking ``top`` (positions) under graded judgements
    ``{position: grade > 0}`` (module docstring); a query needs one positive grade."""
    if len(top) != len(grades):
        raise ValueError(f"nDCG: {len(top)} rankings for {len(grades)} judgement sets")
    k = top.shape[1]
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    out = np.empty(len(top), dtype=np.float64)
    for i, (row, judged) in enumerate(zip(top, grades)):
        ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
        if not ideal:
            raise ValueError(f"nDCG: query {i} has no positive grade")
        dcg = sum(judged.get(int(p), 0.0) * discount[r] for r, p in enumerate(row)
                  if judged.get(int(p), 0.0) > 0)
        out[i] = dcg / float(np.dot(ideal, discount[:len(ideal)]))
    return out


def mean_interval(values, *, tier: str, seed: int, resamples: int, confidence: float,
                  method: str, what: str) -> Interval:
    """``mean(values)`` with its bootstrap interval (stream: ``migration``, tier, ``what``),
    checked to contain its estimate."""
    interval = bootstrap_mean_interval(np.asarray(values, dtype=np.float64), method=method,
                                       confidence=confidence, resamples=resamples, seed=seed,
                                       rng=derive_rng(seed, "migration", tier, what))
    check_contains(interval.estimate, interval.lower, interval.upper, f"{tier} {what}")
    return interval
