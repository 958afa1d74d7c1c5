"""Fusion of the BM25 and vector legs, computed in the harness so an arm means the same
thing on every backend.

* **RRF** (Cormack, Clarke & Büttcher, SIGIR 2009): ``score(d) = sum over legs holding d
  of 1 / (k + rank_leg(d))`` with 1-based ranks and rank constant ``k``.  A document found
  by one leg still scores ``1/(k+rank)``.
* **Normalization x combination** (the score-combination family of Fox & Shaw, TREC-2
  1994, as exposed by OpenSearch's normalization processor): each leg's scores are
  normalised over that leg's fused window, then combined per document with optional leg
  weights.  A document missing from a leg scores **0** on that leg after normalisation.
  Geometric and harmonic means are 0 whenever any input is 0 (or negative), so a
  single-leg hit is annihilated rather than ranked: that is why those arms collapse on
  speaker-turn chunks, where most hits come from one leg only.

Normalisations (over one leg's list ``s_1..s_n``):

* ``min_max``: ``(s - min) / (max - min)``; a leg whose scores are all equal maps to 1.
* ``l2``: ``s / sqrt(sum s_i^2)``; an all-zero leg maps to 0.
* ``z_score``: ``(s - mean) / std`` with the population standard deviation; a constant
  leg maps to 0.  Signed, so only the arithmetic mean is allowed with it.

Combinations with weights ``w`` (equal when none are given):

* ``arithmetic_mean``: ``sum w_i s_i / sum w_i``
* ``geometric_mean``: ``exp(sum w_i ln s_i / sum w_i)``; 0 if any ``s_i <= 0``
* ``harmonic_mean``: ``sum w_i / sum (w_i / s_i)``; 0 if any ``s_i <= 0``

The fused list is ordered by :func:`harness.core.doc_ids.rank_key` (score, then document
structure), so ties never depend on input order.

Speed (a sweep fuses the same legs for 24 arms): only documents scoring at least the
``size``-th best score are sorted by the full key (every document of the cut is among
them, ties included), a document's structural key is parsed once per process, and the
two-leg arithmetic mean is computed inline (``fsum`` of two finite terms is their IEEE sum,
with a zero always positive).  ``tests/harness/retrieval/test_fusion_reference.py``
compares every arm of the fusion family with the frozen previous version, list for list.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from harness.retrieval.arms import FusionSpec, fusion_window
from harness.core.doc_ids import rank_key

Leg = Sequence[tuple[str, float]]


def _check_leg(leg: Leg, where: str) -> None:
    ids = [doc_id for doc_id, _ in leg]
    if len(set(ids)) == len(ids) and all(map(math.isfinite, [s for _, s in leg])):
        return
    seen = set()
    for doc_id, score in leg:
        if doc_id in seen:
            raise ValueError(f"{where}: duplicate doc_id {doc_id!r} in one leg")
        if not math.isfinite(score):
            raise ValueError(f"{where}: non-finite score {score!r} for {doc_id!r}")
        seen.add(doc_id)


# --------------------------------------------------------------------------- RRF


def rrf(legs: Sequence[Leg], rank_constant: int = 60) -> dict[str, float]:
    """Reciprocal rank fusion (Cormack et al. 2009): ``sum 1/(k + rank)`` over the legs."""
    if rank_constant < 1:
        raise ValueError(f"rank constant must be positive, got {rank_constant!r}")
    fused: dict[str, float] = {}
    for i, leg in enumerate(legs):
        _check_leg(leg, f"leg {i}")
        for rank, (doc_id, _score) in enumerate(leg, start=1):
            fused[doc_id] = fused.get(doc_id, 0.0) + 1.0 / (rank_constant + rank)
    return fused


# --------------------------------------------------------------------------- normalisation


def min_max(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [(s - lo) / (hi - lo) for s in scores]


def l2(scores: Sequence[float]) -> list[float]:
    norm = math.sqrt(math.fsum(s * s for s in scores))
    if norm == 0.0:
        return [0.0] * len(scores)
    return [s / norm for s in scores]


def z_score(scores: Sequence[float]) -> list[float]:
    if not scores:
        return []
    mean = math.fsum(scores) / len(scores)
    std = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / len(scores))
    if std == 0.0:
        return [0.0] * len(scores)
    return [(s - mean) / std for s in scores]


NORMALIZATIONS: dict[str, Callable[[Sequence[float]], list[float]]] = {
    "min_max": min_max,
    "l2": l2,
    "z_score": z_score,
}


# --------------------------------------------------------------------------- combination


def arithmetic_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    return math.fsum(w * v for w, v in zip(weights, values)) / math.fsum(weights)


def geometric_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    if any(v <= 0.0 for v, w in zip(values, weights) if w > 0):
        return 0.0
    total = math.fsum(weights)
    return math.exp(math.fsum(w * math.log(v) for w, v in zip(weights, values) if w > 0) / total)


def harmonic_mean(values: Sequence[float], weights: Sequence[float]) -> float:
    if any(v <= 0.0 for v, w in zip(values, weights) if w > 0):
        return 0.0
    return math.fsum(weights) / math.fsum(w / v for w, v in zip(weights, values) if w > 0)


COMBINATIONS: dict[str, Callable[[Sequence[float], Sequence[float]], float]] = {
    "arithmetic_mean": arithmetic_mean,
    "geometric_mean": geometric_mean,
    "harmonic_mean": harmonic_mean,
}


def normalization_fusion(
    legs: Sequence[Leg],
    normalization: str = "min_max",
    combination: str = "arithmetic_mean",
    weights: Sequence[float] | None = None,
) -> dict[str, float]:
    """Normalise each leg, then combine per document (missing from a leg -> 0 there)."""
    if normalization not in NORMALIZATIONS:
        raise ValueError(f"unknown normalization technique {normalization!r}; "
                         f"expected one of {sorted(NORMALIZATIONS)}")
    if combination not in COMBINATIONS:
        raise ValueError(f"unknown combination technique {combination!r}; "
                         f"expected one of {sorted(COMBINATIONS)}")
    if weights is None:
        weights = [1.0] * len(legs)
    if len(weights) != len(legs):
        raise ValueError(f"{len(weights)} weights for {len(legs)} legs")
    if any(w < 0 for w in weights) or math.fsum(weights) <= 0:
        raise ValueError(f"weights must be non-negative and not all zero, got {list(weights)}")
    normalise, combine = NORMALIZATIONS[normalization], COMBINATIONS[combination]
    per_leg: list[dict[str, float]] = []
    for i, leg in enumerate(legs):
        _check_leg(leg, f"leg {i}")
        values = normalise([float(s) for _, s in leg])
        per_leg.append({doc_id: v for (doc_id, _), v in zip(leg, values)})
    docs = set().union(*per_leg) if per_leg else set()
    if combine is arithmetic_mean and len(per_leg) == 2:
        (a, b), (wa, wb) = per_leg, weights
        total = math.fsum(weights)
        # fsum([x, y]) of two finite terms is x + y correctly rounded, and +0.0 for a zero
        return {d: ((wa * a.get(d, 0.0) + wb * b.get(d, 0.0)) + 0.0) / total for d in docs}
    return {d: combine([leg.get(d, 0.0) for leg in per_leg], weights) for d in docs}


# --------------------------------------------------------------------------- arms


#: doc id -> its structural part of :func:`rank_key` (parsed once per process)
_STRUCTURE: dict[str, tuple] = {}
_STRUCTURE_MAX = 4_000_000


def _structure(doc_id: str) -> tuple:
    key = _STRUCTURE.get(doc_id)
    if key is None:
        if len(_STRUCTURE) >= _STRUCTURE_MAX:
            _STRUCTURE.clear()
        key = _STRUCTURE[doc_id] = rank_key(doc_id, 0.0)[1:]
    return key


def _total_order(pair: tuple[str, float]) -> tuple:
    return (-pair[1], *_structure(pair[0]))


def ordered(scores: dict[str, float], size: int | None = None) -> list[tuple[str, float]]:
    """A fused score map as a list in the harness's total order (its first ``size``)."""
    items = list(scores.items())
    if size is not None and 0 < size < len(items):
        threshold = sorted(scores.values(), reverse=True)[size - 1]
        items = [p for p in items if p[1] >= threshold]  # holds the cut, ties included
    items.sort(key=_total_order)
    return items if size is None else items[:size]


def fuse(legs: Sequence[Leg], spec: FusionSpec, size: int) -> list[tuple[str, float]]:
    """One query's fused list for a request of ``size``: each leg cut to the fusion window,
    fused by ``spec``, ordered by score then document structure, cut to ``size``."""
    window = fusion_window(size)
    cut = [list(leg[:window]) for leg in legs]
    if spec.strategy == "rrf":
        scores = rrf(cut, spec.rank_constant)
    else:
        weights = None if spec.weights is None else [w / 100 for w in spec.weights]
        scores = normalization_fusion(cut, spec.normalization, spec.combination, weights)
    return ordered(scores, size)
