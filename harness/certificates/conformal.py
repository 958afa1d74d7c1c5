"""Split conformal context sizing: adaptive sets and the fixed-K baseline with the same promise.

Promise: P(the passages sent contain a relevant one) >= 1 - alpha, for a new query
exchangeable with the calibration queries.  Method (Romano, Sesia & Candes, "Classification
with valid and adaptive coverage", NeurIPS 2020, adaptive prediction sets, in the
deterministic prefix form the serving path uses):

* per query, the stage's scores become probabilities by a softmax at temperature ``T``
  (chosen on a tune split, never on the calibration split);
* nonconformity ``E`` = cumulative mass up to and including the first relevant candidate,
  except that a first relevant candidate at rank 1 scores 0 (the top candidate is always
  sent); a query with no relevant candidate in its top ``K_MAX`` scores ``E = +inf`` (a miss);
* threshold = the ``k``-th smallest calibration ``E`` with ``k = ceil((n+1)(1-alpha))``
  (Vovk, Gammerman & Shafer 2005; Lei et al., JASA 2018; Angelopoulos & Bates 2023, Thm 1),
  ``+inf`` when ``k > n`` or when that order statistic is a miss.

**Every draw issues a certificate.**  A finite quantile ``q`` gives adaptive sets; an
infinite one gives a **degenerate** certificate sized at the maximum K: threshold
:data:`MAX_K_THRESHOLD` (1.0), every recorded candidate up to ``K_MAX``, flagged by its
status.  Issuing only the finite ones would select draws whose calibration set happened to
hold few misses, and those cover less than promised: at n = 30, alpha 0.1 and 4 / 5 / 6% of
queries missing, 0.893 / 0.888 / 0.882, conditional on issuance.  When every draw issues, the
coverage conditional on issuance is the marginal coverage.

The serving rule (:mod:`harness.certificates.serving`) covers a query exactly when
``E <= threshold`` and ``E`` is finite.  Exchangeability gives ``P(E <= q) >= k/(n+1) >= 1 -
alpha`` (misses included as ``+inf``; without ties ``< 1 - alpha + 1/(n+1)``).  Coverage falls
short of that event only on a miss served by a degenerate certificate, which no set of
recorded candidates covers: ``P(covered) >= 1 - alpha - P(test query misses, q = +inf)``.
Without ties it is exactly ``E[min(k, F)] / (n + 1)``, ``F ~ Binomial(n + 1, 1 - p)`` the
queries with a relevant candidate among the n + 1, for a miss rate p.  Conditioning on F:
the test query is one of those F with probability ``F / (n + 1)``, and then its rank among
them is uniform and it is covered when that rank is ``<= k``.  At n = 30, alpha 0.1 that is
0.9018 / 0.9003 / 0.8981 at p = 4 / 5 / 6%, and ``1 - p`` once every draw is degenerate.  No
rule can promise ``1 - alpha`` conditional on a non-degenerate draw: when ``p > alpha``, every
set covers at most ``1 - p``.  The fixed-K baseline is the same quantile over first-relevant
ranks.  Everything here is vectorised over queries.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

from harness.certificates.serving import K_MAX

#: temperature grid exponents: T = base * 2 ** (e / 2) with base the sd of the tune scores
GRID_EXPONENTS: tuple[int, ...] = tuple(range(-4, 13))
DECIMALS = 10  # the canonical JSON precision: what a certificate stores is what is served
#: the threshold of a degenerate certificate: >= 1 sends the whole list (the maximum K)
MAX_K_THRESHOLD = 1.0


def quantile_index(n: int, alpha: float) -> int:
    """``ceil((n + 1)(1 - alpha))`` computed exactly (alpha read as its decimal text)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return math.ceil((n + 1) * (1 - Fraction(repr(float(alpha)))))


def conformal_quantile(values: np.ndarray, alpha: float) -> float:
    """The ``ceil((n+1)(1-alpha))``-th smallest value; ``+inf`` when that index exceeds ``n``."""
    values = np.asarray(values, dtype=float)
    k = quantile_index(values.size, alpha)
    if k > values.size:
        return math.inf
    return float(np.partition(values, k - 1)[k - 1])


def round_up(value: float, decimals: int = DECIMALS) -> float:
    """The smallest ``decimals``-place number >= value (a stored threshold only widens sets)."""
    scale = 10 ** decimals
    out = math.ceil(value * scale) / scale
    while out < value:
        out = (math.ceil(out * scale) + 1) / scale
    return out


@dataclass(frozen=True)
class Candidates:
    """Score lists of ``n`` queries padded to one matrix.

    ``scores[i, :lengths[i]]`` are query i's stage scores; ``rank_in_list[i]`` is the 1-based
    rank of its first relevant candidate within them (0: none); ``first_rank[i]`` the rank
    among all candidates (``inf``: none retrieved).
    """

    scores: np.ndarray
    lengths: np.ndarray
    rank_in_list: np.ndarray
    first_rank: np.ndarray

    @property
    def n(self) -> int:
        return int(self.lengths.size)

    @classmethod
    def from_lists(cls, scores: Sequence[Sequence[float]], first_ranks: Sequence[int | None],
                   k_max: int = K_MAX) -> "Candidates":
        n = len(scores)
        width = max([min(len(s), k_max) for s in scores] + [1])
        matrix = np.zeros((n, width))
        lengths = np.zeros(n, dtype=np.int64)
        for i, s in enumerate(scores):
            s = list(s)[:k_max]
            matrix[i, :len(s)] = s
            lengths[i] = len(s)
        first = np.array([math.inf if r is None else float(r) for r in first_ranks], dtype=float)
        in_list = np.where(first <= lengths, first, 0).astype(np.int64)
        return cls(matrix, lengths, in_list, first)

    @classmethod
    def from_rows(cls, rows, k_max: int = K_MAX) -> "Candidates":
        return cls.from_lists([r.scores for r in rows], [r.first_relevant_rank for r in rows], k_max)

    def subset(self, index: np.ndarray) -> "Candidates":
        return Candidates(self.scores[index], self.lengths[index], self.rank_in_list[index],
                          self.first_rank[index])


def cumulative_mass(c: Candidates, temperature: float) -> np.ndarray:
    """``C[i, j]``: softmax mass of ranks ``1..j+1``; ``+inf`` beyond a query's list."""
    width = c.scores.shape[1]
    valid = np.arange(width)[None, :] < c.lengths[:, None]
    masked = np.where(valid, c.scores, -np.inf)
    top = np.max(masked, axis=1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    weights = np.where(valid, np.exp((masked - top) / temperature), 0.0)
    total = weights.sum(axis=1, keepdims=True)
    total = np.where(total > 0, total, 1.0)
    mass = np.cumsum(weights / total, axis=1)
    return np.where(valid, mass, np.inf)


def nonconformity(c: Candidates, temperature: float, mass: np.ndarray | None = None) -> np.ndarray:
    """``E`` per query: mass through the first relevant candidate (0 at rank 1, ``inf`` if none)."""
    if mass is None:
        mass = cumulative_mass(c, temperature)
    column = np.clip(c.rank_in_list - 1, 0, None)
    picked = np.take_along_axis(mass, column[:, None], axis=1)[:, 0]
    score = np.where(c.rank_in_list > 1, picked, 0.0)
    return np.where(c.rank_in_list > 0, score, np.inf)


def set_sizes(mass: np.ndarray, lengths: np.ndarray, threshold: float) -> np.ndarray:
    """``max(1, #{j : C_j <= threshold})`` per query; whole list when threshold >= 1; 0 if empty."""
    if threshold >= 1.0:
        return lengths.copy()
    counted = (mass <= threshold).sum(axis=1)  # mass is +inf beyond each list
    return np.where(lengths > 0, np.maximum(1, counted), 0)


def covered(sizes: np.ndarray, c: Candidates) -> np.ndarray:
    """Is the first relevant candidate within the set (rank <= size)?"""
    return (c.rank_in_list > 0) & (c.rank_in_list <= sizes)


def temperature_grid(c: Candidates) -> list[float]:
    """Candidate temperatures: the tune scores' sd times ``2 ** (e/2)``, e in GRID_EXPONENTS."""
    valid = np.arange(c.scores.shape[1])[None, :] < c.lengths[:, None]
    values = c.scores[valid]
    base = float(np.std(values)) if values.size > 1 else 0.0
    if not math.isfinite(base) or base < 1e-6:
        base = 1.0
    return [round(base * 2 ** (e / 2), DECIMALS) for e in GRID_EXPONENTS]


@dataclass(frozen=True)
class CoverageFit:
    """What :func:`fit_coverage` decided."""

    alpha: float
    temperature: float
    grid: tuple[float, ...]
    tune_mean_sizes: tuple[float, ...]
    quantile_index: int
    raw_threshold: float          # the conformal quantile (inf: degenerate)
    threshold: float              # rounded up to DECIMALS; MAX_K_THRESHOLD when degenerate
    calibration_n: int
    calibration_misses: int       # queries with no relevant candidate in the top K_MAX
    fixed_k: int | None           # the same quantile over first-relevant ranks

    @property
    def degenerate(self) -> bool:
        """The quantile is ``+inf``: the certificate is sized at the maximum K."""
        return not math.isfinite(self.raw_threshold)


def tune_temperature(tune: Candidates, alpha: float,
                     grid: Sequence[float] | None = None) -> tuple[float, list[float], list[float]]:
    """The temperature whose tune-split conformal sets are smallest on average.

    Each candidate ``T`` is judged by the mean set size it gives on the tune split at the
    tune split's own conformal threshold; the first minimum (ascending ``T``) wins.
    """
    grid = list(grid if grid is not None else temperature_grid(tune))
    sizes = []
    for temperature in grid:
        mass = cumulative_mass(tune, temperature)
        q = conformal_quantile(nonconformity(tune, temperature, mass), alpha)
        sizes.append(float(set_sizes(mass, tune.lengths, q).mean()) if tune.n else math.inf)
    best = int(np.argmin(sizes))
    return grid[best], grid, sizes


def fixed_k(first_rank: np.ndarray, alpha: float) -> int | None:
    """The conformal fixed K: k-th smallest first-relevant rank (None when not finite)."""
    q = conformal_quantile(first_rank, alpha)
    return int(q) if math.isfinite(q) else None


def fit_coverage(tune: Candidates, calibrate: Candidates, alpha: float,
                 grid: Sequence[float] | None = None) -> CoverageFit:
    """Temperature on ``tune`` (from ``grid``, default :func:`temperature_grid`), threshold
    and fixed K on ``calibrate``."""
    if calibrate.n < 1:
        raise ValueError("the calibration split is empty")
    temperature, grid, tune_sizes = tune_temperature(tune, alpha, grid)
    scores = nonconformity(calibrate, temperature)
    k = quantile_index(calibrate.n, alpha)
    raw = conformal_quantile(scores, alpha)
    threshold = round_up(raw) if math.isfinite(raw) else MAX_K_THRESHOLD
    return CoverageFit(
        alpha=alpha, temperature=temperature, grid=tuple(grid),
        tune_mean_sizes=tuple(tune_sizes), quantile_index=k, raw_threshold=raw,
        threshold=threshold, calibration_n=calibrate.n,
        calibration_misses=int(np.sum(~np.isfinite(scores))),
        fixed_k=fixed_k(calibrate.first_rank, alpha),
    )


def evaluate(c: Candidates, fit: CoverageFit) -> tuple[np.ndarray, np.ndarray]:
    """``(set sizes, covered)`` per query of ``c`` under ``fit`` (vectorised serving rule)."""
    sizes = set_sizes(cumulative_mass(c, fit.temperature), c.lengths, fit.threshold)
    return sizes, covered(sizes, c)


def split_indices(n: int, fractions: Sequence[float], seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seeded (tune, calibrate, heldout) index arrays, each sorted.

    Sizes: ``floor(f_tune n)``, ``floor(f_cal n)``, and the rest held out.
    """
    fractions = [float(f) for f in fractions]
    if len(fractions) != 3 or any(not (0 < f < 1) for f in fractions) \
            or abs(sum(fractions) - 1) > 1e-9:
        raise ValueError(f"splits must be three fractions in (0, 1) summing to 1, got {fractions}")
    perm = np.random.default_rng(seed).permutation(n)
    n_tune = int(math.floor(fractions[0] * n + 1e-9))
    n_cal = int(math.floor(fractions[1] * n + 1e-9))
    tune, cal, held = perm[:n_tune], perm[n_tune:n_tune + n_cal], perm[n_tune + n_cal:]
    if min(len(tune), len(cal), len(held)) < 1:
        raise ValueError(f"{n} queries cannot fill three non-empty splits with fractions {fractions}")
    return np.sort(tune), np.sort(cal), np.sort(held)
