"""Delta intervals that agree with the Holm verdict: the paired randomization test, inverted.

An interval printed beside a verdict must say what the verdict says: it excludes 0 exactly
when the verdict is *significant*.  A bootstrap interval at the unadjusted level cannot
promise that (it is another procedure at another level), so the interval beside a verdict
is built from the verdict's own test.

**Inversion** (Lehmann & Romano, *Testing Statistical Hypotheses*, 3rd ed., 2005, sec. 3.5
and 15.2): the interval is the set of shifts ``d`` that the paired sign-flip test of
:mod:`harness.stats.randomization` does not reject when applied to ``x_i - d`` (``H0:
delta = d``, each ``x_i - d`` as likely to carry either sign).  At ``d = 0`` it is the test
the verdict read.

**Level.** Holm's step-down (Holm 1979) rejects, in ascending order of p, while
``p_(r) <= alpha / (m - r + 1)``; R hypotheses are rejected.  Each hypothesis is inverted at
the level at which Holm decided it (:func:`harness.claims.comparisons.holm_divisors`):

* a rejected one, ranked r: ``alpha / (m - r + 1)``, its own step-down level;
* a retained one: ``alpha / (m - R)``, the level at which the step-down stopped (the level
  Strassburger & Bretz 2008, Statist. Med. 27:4914-4927, give the retained hypotheses of
  their compatible Holm bounds).

The interval then excludes 0 exactly when Holm rejects: a rejected hypothesis has
``(m - r + 1) p <= alpha``; the step-down stopped at rank R + 1 because
``(m - R) p_(R+1) > alpha``, and every later p is at least as large.  The monotone
tail of the step-down (Holm's running maximum) is why retained hypotheses share the stopping
level rather than their own rank's, which would let a hypothesis that passed its own
threshold after an earlier failure exclude 0.  The decision is the same float comparison,
``divisor * p > alpha``, that :func:`harness.claims.comparisons.holm` makes.  For a family of
one the level is alpha, and the interval is the ordinary ``1 - alpha`` confidence interval
of the test.  For larger families the intervals are *compatible* with the Holm decisions
(Hayter & Hsu 1994); they are not simultaneous confidence intervals.

**The p-value function.** Differences are whole counts of ``10^-10`` units
(:func:`harness.stats.randomization.quantize`); ``d`` runs over the same grid.  For a sign
vector s, ``|sum s_i (x_i - d)| = |a_s - d b_s|`` with ``a_s = sum s_i x_i`` and
``b_s = sum s_i``; the observed statistic is ``|S - n d|``.  An assignment is at least as
extreme when ``|a_s - d b_s| >= |S - n d| - 2k`` (k the discordant queries: the rounding
tolerance of the test, the same at every d).  Since ``|b_s| <= n``, each indicator is
non-increasing as d moves away from the mean on either side, so p(d) is too and the
accepted set is an interval around the mean.  Exact columns (at most
``EXACT_MAX_DISCORDANT`` discordant queries) enumerate the ``2^k`` patterns of the
discordant queries and count the ``z`` tied queries (``x_i = 0``, which carry ``-d`` once
d is not 0) through the binomial law of how many of them flip: every one of the ``2^n``
assignments, exactly.  Monte Carlo columns reuse the sign vectors their p was drawn from.

**Why 0 is never misplaced.** The search evaluates no second copy of the verdict's p: it
takes the side of 0 from ``divisor * p > alpha`` with the p Holm adjusted, then searches
the grid between 0 and the far end.  A bound that would leave the measure's delta range
stops at its end (a delta of a proportion lies in [-1, 1]); on an unbounded measure it is
``None`` (unbounded).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

UNITS = 1e10  # 10^DECIMALS of harness.stats.randomization


@dataclass(frozen=True)
class SignFlipNull:
    """The p-value of ``H0: delta = d`` for one column of differences, for any grid d.

    ``a``, ``b``: per sign vector, ``sum s_i x_i`` and ``sum s_i`` (int64).  Exact columns
    hold the discordant patterns and ``ties`` (the queries with ``x_i = 0``); Monte Carlo
    columns hold the drawn vectors (``ties`` is 0: the vectors cover every query)."""

    a: np.ndarray
    b: np.ndarray
    total: int       # S = sum x_i, in units
    magnitude: int   # max |x_i|, in units
    n: int
    discordant: int
    ties: int
    exact: bool

    def p(self, d: int) -> float:
        """p of the sign-flip test of ``x_i - d`` (``d`` in units)."""
        d = int(d)
        thr = abs(self.total - self.n * d) - 2 * self.discordant
        if thr <= 0:
            return 1.0
        if not self.exact:
            hits = np.count_nonzero(np.abs(self.a - d * self.b) >= thr)
            return float((hits + 1) / (self.a.size + 1))
        a = self.a
        if d < 0:  # p(d) on x is p(-d) on -x, whose patterns are (-a, b)
            a, d = -a, -d
        if d == 0:
            return float(np.count_nonzero(np.abs(a) >= thr) / a.size)
        z = self.ties
        cdf, sf = _binomial_tails(z)
        # statistic of a pattern with j of the z ties flipped negative: c + 2 d j
        c = a - d * (self.b + z)
        up = _ceil_div(thr - c, 2 * d)             # c + 2dj >= thr   <=>  j >= up
        down = np.floor_divide(-thr - c, 2 * d)    # c + 2dj <= -thr  <=>  j <= down
        mass = sf[np.clip(up, 0, z + 1)] + cdf[np.clip(down, -1, z) + 1]
        return float(mass.mean())


def _ceil_div(num: np.ndarray, den: int) -> np.ndarray:
    return -np.floor_divide(-num, den)


_TAILS: dict[int, tuple[np.ndarray, np.ndarray]] = {}


def _binomial_tails(z: int) -> tuple[np.ndarray, np.ndarray]:
    """For J ~ Binomial(z, 1/2): ``cdf[j + 1] = P(J <= j)`` (``cdf[0] = 0``) and
    ``sf[j] = P(J >= j)`` (``sf[z + 1] = 0``)."""
    if z not in _TAILS:
        from scipy.stats import binom

        pmf = binom.pmf(np.arange(z + 1), z, 0.5)
        cdf = np.concatenate(([0.0], np.cumsum(pmf)))
        sf = np.concatenate((np.cumsum(pmf[::-1])[::-1], [0.0]))
        if len(_TAILS) > 64:
            _TAILS.clear()
        _TAILS[z] = (cdf, sf)
    return _TAILS[z]


def exact_null(units: np.ndarray) -> SignFlipNull:
    """Every sign assignment of one column (``units``: whole units, at most
    ``EXACT_MAX_DISCORDANT``-ish discordant values; the ties are counted, not enumerated)."""
    u = np.asarray(units, dtype=np.int64)
    disc = u[u != 0]
    k = disc.size
    bits = (np.arange(2 ** k, dtype=np.int64)[:, None] >> np.arange(k)) & 1
    signs = 1 - 2 * bits
    return SignFlipNull(a=signs @ disc, b=signs.sum(axis=1), total=int(u.sum()),
                        magnitude=int(np.abs(u).max(initial=0)), n=int(u.size), discordant=k,
                        ties=int(u.size - k), exact=True)


def monte_carlo_null(units: np.ndarray, sums: np.ndarray, sign_totals: np.ndarray) -> SignFlipNull:
    """One column's null from drawn sign vectors: ``sums`` their ``sum s_i x_i`` over this
    column, ``sign_totals`` their ``sum s_i`` (shared by every column of the stream)."""
    u = np.asarray(units, dtype=np.int64)
    return SignFlipNull(a=np.asarray(sums, dtype=np.int64),
                        b=np.asarray(sign_totals, dtype=np.int64), total=int(u.sum()),
                        magnitude=int(np.abs(u).max(initial=0)), n=int(u.size),
                        discordant=int(np.count_nonzero(u)), ties=0, exact=False)


def inverted_interval(null: SignFlipNull, p_at_zero: float, divisor: int, alpha: float,
                      delta_range: tuple[float, float]) -> tuple[float | None, float | None]:
    """``[lower, upper]``: the grid shifts d the test does not reject at ``alpha / divisor``
    (``divisor * p(d) > alpha``), clipped to ``delta_range``; ``None`` where unbounded.

    ``p_at_zero`` is the p the verdict read: it alone decides on which side of each bound
    0 lies, and no search crosses 0 on its own evidence."""
    def accepted(d: int) -> bool:
        return divisor * (p_at_zero if d == 0 else null.p(d)) > alpha

    mean = null.total / null.n
    lo_end, hi_end = _grid_end(delta_range[0]), _grid_end(delta_range[1])
    if accepted(0):
        return (_scale(_search(accepted, 0, lo_end, -1, null)),
                _scale(_search(accepted, 0, hi_end, +1, null)))
    step = 1 if mean > 0 else -1  # 0 is rejected (so S != 0): the interval lies on the mean's side
    nearest = [d for d in (int(np.floor(mean)), int(np.ceil(mean))) if step * d > 0]
    start = next((d for d in nearest if accepted(d)), None)
    if start is None:  # nothing on the grid is accepted: narrower than a unit, off 0
        point = int(np.rint(mean)) or step
        return point / UNITS, point / UNITS
    near = _bisect(accepted, start, 0)  # towards 0, which is known to be rejected
    far = _search(accepted, start, hi_end if step > 0 else lo_end, step, null)
    return (_scale(near), _scale(far)) if step > 0 else (_scale(far), _scale(near))


def _scale(units: int | None) -> float | None:
    return None if units is None else units / UNITS


def _grid_end(end: float) -> int | None:
    return None if not np.isfinite(end) else int(np.rint(end * UNITS))


def _bisect(accepted, good: int, bad: int) -> int:
    """The last accepted grid point from ``good`` (accepted) towards ``bad`` (rejected)."""
    while abs(bad - good) > 1:
        mid = good + (bad - good) // 2
        if accepted(mid):
            good = mid
        else:
            bad = mid
    return good


def _search(accepted, start: int, end: int | None, step: int, null: SignFlipNull) -> int | None:
    """The farthest accepted grid point from ``start`` (accepted) towards ``end`` (``None``:
    unbounded, and so is the answer when everything that way is accepted).

    Farther than ``max |x_i| + k`` from 0 every flip of a query lowers the statistic by more
    than the rounding tolerance, so only the identity and its mirror stay extreme and p(d)
    is constant: if that point is accepted, so is everything beyond it."""
    reach = start + step * (2 * null.magnitude + 2 * null.discordant + 2)
    if end is not None and step * (end - reach) <= 0:
        reach = end
    if accepted(reach):
        return end
    return _bisect(accepted, start, reach)


def family_intervals(nulls: Sequence[SignFlipNull], pvalues: Sequence[float],
                     divisors: Sequence[int], alpha: float,
                     delta_range: tuple[float, float]) -> list[tuple[float | None, float | None]]:
    """:func:`inverted_interval` of each member of one Holm family."""
    return [inverted_interval(nu, p, c, alpha, delta_range)
            for nu, p, c in zip(nulls, pvalues, divisors)]
