"""Risk-controlled abstention: learn then test with fixed-sequence testing.

Promise: with probability >= 1 - delta over the calibration draw, the certified threshold
``lambda`` has risk ``R(lambda) = P(answer, and no relevant passage in the context) <= target``,
where a query is answered when its top-ranked score is >= lambda.

Method (Bates, Angelopoulos, Lei, Malik & Jordan, "Distribution-free, risk-controlling
prediction sets", JACM 2021; Angelopoulos et al., "Learn then test", 2021): walk lambda from
the most conservative value (answer least) to the least, testing ``H0: R(lambda) > target``
with the exact binomial p-value ``P(Bin(n, target) <= observed losses)``; stop at the first
non-rejection and certify the last rejected lambda.  The loss is monotone in lambda, so the
walk over the observed top scores is the continuous walk.  When not even the first step is
rejected, only abstaining on everything is certified: the result is degenerate and says how
many calibration queries would prove the threshold the walk stopped at, at its observed risk.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import betainc
from scipy.stats import binom

from harness.certificates.conformal import round_up

#: the largest calibration size :func:`queries_needed` searches
MAX_QUERIES = 10_000_000


@dataclass(frozen=True)
class Step:
    """One threshold the walk tested."""

    lam: float
    losses: int
    answered: int
    p_value: float


@dataclass(frozen=True)
class RiskFit:
    """What :func:`certify_risk` decided."""

    target: float
    delta: float
    n: int
    lam: float | None            # certified threshold (rounded up), None = abstain on everything
    certified: Step | None       # the last rejected step
    stopped_at: Step | None      # the first non-rejected step (None: every step rejected)
    tested: int                  # how many thresholds were tested
    #: for a degenerate fit, the most permissive threshold at the stopping step's observed
    #: risk (same losses, most answers), and the calibration size that would prove it
    best_observed: Step | None
    queries_needed: int | None

    @property
    def degenerate(self) -> bool:
        return self.lam is None


def p_value(losses, n: int, target: float):
    """Exact binomial p-value for ``H0: risk > target``: ``P(Bin(n, target) <= losses)``."""
    return binom.cdf(losses, n, target)


def walk(top_scores: np.ndarray, losses: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thresholds (distinct top scores, descending) with their loss and answer counts.

    ``top_scores`` holds ``-inf`` for a query with no candidate: it is never answered.
    """
    top = np.asarray(top_scores, dtype=float)
    loss = np.asarray(losses, dtype=bool)
    order = np.argsort(-top, kind="stable")
    top_sorted, loss_sorted = top[order], loss[order]
    keep = np.isfinite(top_sorted)
    top_sorted, loss_sorted = top_sorted[keep], loss_sorted[keep]
    if top_sorted.size == 0:
        return np.empty(0), np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    cum_losses = np.cumsum(loss_sorted)
    # last position of each distinct value in the descending order
    last = np.flatnonzero(np.r_[top_sorted[1:] != top_sorted[:-1], True])
    return top_sorted[last], cum_losses[last].astype(np.int64), (last + 1).astype(np.int64)


def queries_needed(observed_risk: float, target: float, delta: float,
                   start: int = 1, limit: int = MAX_QUERIES) -> int | None:
    """Smallest ``n`` at which ``observed_risk`` would be proven ``<= target`` at level delta.

    Uses the binomial tail at the real-valued count ``n * observed_risk``
    (``P(Bin(n, p) <= x) = I_{1-p}(n - x, x + 1)``), so the answer does not jump with
    rounding.  None when the observed risk is not below the target (no n proves it).
    """
    if not observed_risk < target:
        return None

    def proves(n: int) -> bool:
        x = n * observed_risk
        return float(betainc(n - x, x + 1, 1 - target)) <= delta

    lo, hi = max(1, start), max(1, start)
    while not proves(hi):
        lo, hi = hi, hi * 2
        if hi > limit:
            return None
    while lo < hi:
        mid = (lo + hi) // 2
        if proves(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


def certify_risk(top_scores, losses, target: float, delta: float) -> RiskFit:
    """Fixed-sequence test over thresholds, most conservative first.

    ``top_scores[i]``: the score of query i's top-ranked candidate (``-inf``: none);
    ``losses[i]``: would answering query i be a loss (no relevant passage in its context)?
    """
    if not 0 < target < 1:
        raise ValueError(f"risk target must lie in (0, 1), got {target!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    n = int(np.asarray(top_scores).size)
    if n < 1:
        raise ValueError("no calibration queries")
    lams, loss_counts, answered = walk(top_scores, losses)
    p = p_value(loss_counts, n, target)
    rejected = p <= delta
    stop = int(np.argmin(rejected)) if not rejected.all() else len(lams)
    steps = [Step(float(lams[i]), int(loss_counts[i]), int(answered[i]), float(p[i]))
             for i in range(len(lams))]
    certified = steps[stop - 1] if stop > 0 else None
    stopped = steps[stop] if stop < len(steps) else None
    needed, best = None, None
    if certified is None and stopped is not None:
        same = np.flatnonzero(loss_counts == loss_counts[stop])
        best = steps[int(same[-1])]
        needed = queries_needed(best.losses / n, target, delta, start=n)
    return RiskFit(
        target=target, delta=delta, n=n,
        lam=round_up(certified.lam) if certified is not None else None,
        certified=certified, stopped_at=stopped, tested=min(stop + 1, len(steps)),
        best_observed=best, queries_needed=needed,
    )


def losses_for_context(rank_in_list: np.ndarray, context_k: int) -> np.ndarray:
    """Loss if answered: no relevant candidate among the first ``context_k`` (rank 0 = none)."""
    rank = np.asarray(rank_in_list)
    return (rank < 1) | (rank > context_k)


def risk_at(top_scores, losses, lam: float) -> tuple[int, int, int]:
    """``(losses, answered, n)`` when answering at ``top >= lam``."""
    top = np.asarray(top_scores, dtype=float)
    answered = top >= lam
    return int(np.sum(answered & np.asarray(losses, dtype=bool))), int(answered.sum()), int(top.size)

