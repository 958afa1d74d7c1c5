"""Anytime-valid confidence sequences for a mean in [0, 1], and streams of per-query values.

**Confidence sequence** (Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", JRSS-B 86(1), 2024): for every candidate mean ``m`` on a grid, two
gamblers bet on each next observation ``x_t`` at odds implied by ``m``::

    K+_t(m) = prod_i (1 + l+_i(m) (x_i - m))       K-_t(m) = prod_i (1 - l-_i(m) (x_i - m))
    K_t(m)  = max(theta K+_t(m), (1 - theta) K-_t(m))          (hedged capital, theta = 1/2)

If the true mean is ``m``, both capitals are non-negative martingales, so by Ville's
inequality the chance that ``K_t(m)`` *ever* reaches ``1/alpha`` is at most alpha.  The
confidence sequence at time t is every grid point not yet rejected; it holds at all
sample sizes simultaneously, which is what makes watching it after every query (and
stopping when it is decided) legitimate.  Bets are the predictable plug-in of the paper::

    l_t   = sqrt(2 log(2/alpha) / (s2_{t-1} t log(1 + t)))
    l+_t  = min(l_t, c/m),  l-_t = min(l_t, c/(1-m)),  c = 1/2
    mu_t  = (1/2 + sum_{i<=t} x_i) / (t + 1),  s2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t + 1)

The reported bounds are the grid neighbours of the outermost unrejected points (both
rejected), so the interval over the continuum lies inside them: a coarse grid only ever
widens the sequence.

:class:`QueryStream` is the other half of a sequential gate: per-query values produced one
at a time, counting how many were produced, so stopping early saves real work (scorer
calls, retrievals, judge tokens) rather than shrinking a number in a report.  A stream over
values that already exist (``precomputed``) saves nothing by stopping, and says so.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Hashable, Iterable, Iterator, Mapping

import numpy as np

from harness.core.seeding import check_seed, derive_rng

#: default grid: 1,000 steps over [0, 1] (bounds resolved to 0.001, conservatively)
GRID_SIZE = 1000
BET_CAP = 0.5
HEDGE = 0.5


class BettingConfidenceSequence:
    """Hedged-capital confidence sequence for ``batch`` independent streams at once.

    ``update(x)`` takes one observation per stream (``x`` of shape ``(batch,)``, or a
    scalar when ``batch == 1``); ``bounds()`` returns the current lower and upper bounds;
    ``running_bounds()`` their running intersection (also valid, never wider).
    ``points`` are extra grid points (e.g. a gate's threshold, so it is tested exactly).
    """

    def __init__(self, alpha: float = 0.05, *, grid_size: int = GRID_SIZE, points: Iterable[float] = (),
                 batch: int = 1, bet_cap: float = BET_CAP, hedge: float = HEDGE):
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
        if not 0 < bet_cap < 1 or not 0 < hedge < 1:
            raise ValueError("bet_cap and hedge must lie strictly between 0 and 1")
        if grid_size < 2:
            raise ValueError(f"grid_size must be >= 2, got {grid_size}")
        extra = [float(p) for p in points]
        for p in extra:
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"grid point {p!r} lies outside [0, 1]")
        self.alpha = float(alpha)
        self.grid = np.unique(np.concatenate([np.linspace(0.0, 1.0, grid_size + 1), extra]))
        with np.errstate(divide="ignore"):
            self._cap_plus = np.where(self.grid > 0, bet_cap / np.maximum(self.grid, 1e-300), np.inf)
            self._cap_minus = np.where(self.grid < 1, bet_cap / np.maximum(1.0 - self.grid, 1e-300), np.inf)
        self.batch = int(batch)
        self._log_plus = np.zeros((self.batch, self.grid.size))
        self._log_minus = np.zeros((self.batch, self.grid.size))
        self._log_threshold = math.log(1.0 / self.alpha)
        self._log_hedge = (math.log(hedge), math.log(1.0 - hedge))
        self._bet_numerator = 2.0 * math.log(2.0 / self.alpha)
        self.t = 0
        self._sum = np.zeros(self.batch)
        self._sq = np.zeros(self.batch)
        self._var = np.full(self.batch, 0.25)
        self._running = (np.zeros(self.batch), np.ones(self.batch))

    def update(self, x) -> None:
        x = np.broadcast_to(np.asarray(x, dtype=np.float64), (self.batch,))
        if np.any(~np.isfinite(x)) or np.any(x < 0) or np.any(x > 1):
            raise ValueError(f"a confidence sequence for a mean in [0, 1] got observation(s) outside "
                             f"[0, 1]: {x[(x < 0) | (x > 1) | ~np.isfinite(x)][:3].tolist()}")
        t = self.t + 1
        lam = np.sqrt(self._bet_numerator / (self._var * t * math.log(1.0 + t)))[:, None]
        diff = x[:, None] - self.grid[None, :]
        self._log_plus += np.log1p(np.minimum(lam, self._cap_plus[None, :]) * diff)
        self._log_minus += np.log1p(-np.minimum(lam, self._cap_minus[None, :]) * diff)
        self._sum += x
        mu = (0.5 + self._sum) / (t + 1)
        self._sq += (x - mu) ** 2
        self._var = (0.25 + self._sq) / (t + 1)
        self.t = t
        lo, hi = self.bounds()
        self._running = (np.maximum(self._running[0], lo), np.minimum(self._running[1], hi))

    def rejected(self) -> np.ndarray:
        """``(batch, grid)``: grid points whose hedged capital has reached ``1/alpha``."""
        hedged = np.maximum(self._log_hedge[0] + self._log_plus, self._log_hedge[1] + self._log_minus)
        return hedged >= self._log_threshold

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Current lower and upper bounds per stream (conservative grid neighbours)."""
        keep = ~self.rejected()
        g = self.grid.size
        first = np.argmax(keep, axis=1)
        last = g - 1 - np.argmax(keep[:, ::-1], axis=1)
        lower = self.grid[np.maximum(first - 1, 0)]
        upper = self.grid[np.minimum(last + 1, g - 1)]
        empty = ~keep.any(axis=1)
        if np.any(empty):  # every point rejected (probability <= alpha): collapse to the least-rejected
            hedged = np.maximum(self._log_hedge[0] + self._log_plus, self._log_hedge[1] + self._log_minus)
            best = self.grid[np.argmin(hedged, axis=1)]
            lower = np.where(empty, best, lower)
            upper = np.where(empty, best, upper)
        return lower, upper

    def running_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        return self._running

    @property
    def mean(self) -> np.ndarray:
        return self._sum / max(self.t, 1)


# --------------------------------------------------------------------------- streams


class QueryStream:
    """Per-query values produced one at a time, in a (seeded) order, counted.

    ``value_of(query_id)`` computes one query's value - by reading a stored value, scoring
    a one-query run, or retrieving live - and returns ``None`` for a query that cannot be
    scored (no relevant document: dropped, never zero).  Iterating yields ``(query_id,
    value)``; ``requested`` counts ``value_of`` calls, ``produced`` the values yielded.
    Stopping the iteration stops the work: nothing is computed ahead.

    ``precomputed`` says that ``value_of`` only reads values that already exist (a results
    directory): stopping early then saves nothing, and a gate must not claim it did.
    """

    def __init__(self, query_ids: Iterable[Hashable], value_of: Callable[[Any], float | None], *,
                 seed: int | None = None, label: str = "queries", precomputed: bool = False):
        ids = list(query_ids)
        if len(set(ids)) != len(ids):
            raise ValueError(f"{label}: a query id is listed twice")
        ids.sort()
        if seed is not None:
            perm = derive_rng(check_seed(seed), "query-order").permutation(len(ids))
            ids = [ids[i] for i in perm]
        self.order: tuple = tuple(ids)
        self.seed = seed
        self.label = label
        self.precomputed = bool(precomputed)
        self._value_of = value_of
        self.requested = 0
        self.produced = 0
        self.skipped: list = []

    @property
    def total(self) -> int:
        return len(self.order)

    def __len__(self) -> int:
        return self.total

    def __iter__(self) -> Iterator[tuple[Any, float]]:
        for query_id in self.order:
            value = self._value_of(query_id)
            self.requested += 1
            if value is None:
                self.skipped.append(query_id)
                continue
            value = float(value)
            if not math.isfinite(value):
                raise ValueError(f"{self.label}: query {query_id!r} produced a non-finite value {value!r}")
            self.produced += 1
            yield query_id, value

    @classmethod
    def from_values(cls, values: Mapping[Hashable, float], *, seed: int | None = None,
                    label: str = "stored values") -> "QueryStream":
        """A stream over values already computed (a results directory): ``precomputed``."""
        return cls(values.keys(), values.__getitem__, seed=seed, label=label, precomputed=True)
