"""Which runs are statistically tied with the best one, without a control.

A leaderboard is read as a strict order that its data rarely supports.  For each measure in
one corpus x class slice, the run with the highest mean is the reference (a table passes
the run it marks best); every other run is
compared with it by the paired randomization (sign-flip) test over the queries both scored
(Smucker, Allan & Carterette, CIKM 2007; :func:`harness.stats.randomization.paired_tests`),
and the m - 1 p-values are Holm-adjusted (Holm 1979, Scand. J. Statist. 6:65-70), which
holds the family-wise error at ``alpha`` under any dependence between the runs.  A run
whose adjusted p exceeds ``alpha`` cannot be told apart from the best: it is *tied with
the best*.  This is a step-down multiple comparison with the best (in the spirit of Hsu,
Ann. Statist. 1981) with the data-chosen reference treated as fixed, so it is conservative
in what it separates: a run it calls worse is worse at level ``alpha``.

A Monte Carlo p carries sampling error.  When a verdict lies within it
(:func:`harness.claims.comparisons.is_borderline`), the whole family is redrawn with ten
times the sign vectors, up to :data:`MAX_PERMUTATIONS`; a verdict still within error there
is reported as *borderline*, never as plainly tied or separated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from harness.claims.comparisons import holm, is_borderline
from harness.stats.randomization import paired_tests
from harness.core.seeding import derive_rng

#: the family-wise error of the tie marks
ALPHA = 0.05
#: the most sign vectors a borderline family is redrawn with
MAX_PERMUTATIONS = 1_000_000


@dataclass(frozen=True)
class BestTie:
    """One run against the best run of its slice: ``best`` (it is the reference), ``p`` and
    ``p_holm`` of its paired test (None for the best itself), ``tied`` (``p_holm > alpha``),
    ``borderline`` (the verdict is within Monte Carlo error even at the most sign vectors;
    ``tied`` is then False) and ``permutations`` (the sign vectors of a Monte Carlo p, None
    for an exact one)."""

    best: bool
    tied: bool
    p: float | None
    p_holm: float | None
    borderline: bool = False
    permutations: int | None = None


def tied_with_best(values: Mapping[str, Sequence[float]], *, alpha: float = ALPHA,
                   permutations: int = 10000, seed: int = 0,
                   reference: str | None = None) -> dict[str, BestTie]:
    """``values``: run -> per-query values, all over the same queries in the same order.
    The best is ``reference`` when given (a table passes the run it marks best, whose mean
    over all its queries may differ from its mean over these shared ones), else the run with
    the highest mean here (the first such in ``values``' order); each other run is tested
    against it, Holm over the others."""
    names = list(values)
    if not names:
        return {}
    if reference is not None and reference not in values:
        raise ValueError(f"tied_with_best: the reference {reference!r} has no values")
    matrix = np.asarray([np.asarray(values[n], dtype=np.float64) for n in names])
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise ValueError("tied_with_best: every run needs the same, non-empty list of values")
    means = matrix.mean(axis=1)
    best = names.index(reference) if reference is not None else int(np.argmax(means))
    others = [i for i in range(len(names)) if i != best]
    out = {names[best]: BestTie(True, False, None, None)}
    if not others:
        return out
    draws = permutations
    while True:
        tests = paired_tests(matrix[best], matrix[others], permutations=draws,
                             rng=derive_rng(seed, "tied-with-best" if draws == permutations
                                            else f"tied-with-best/{draws}"))
        adjusted = holm([t.p for t in tests])
        close = [is_borderline(t.p, q, t.permutations, alpha) for t, q in zip(tests, adjusted)]
        if not any(close) or draws * 10 > max(MAX_PERMUTATIONS, permutations):
            break
        draws *= 10
    for i, test, p_holm, near in zip(others, tests, adjusted, close):
        out[names[i]] = BestTie(False, p_holm > alpha and not near, test.p, p_holm, near,
                                test.permutations)
    return out
