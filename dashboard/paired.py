"""The paired test the Compare page prints beside win / tie / loss: the sign-flip test of B
against A on the queries both answered, per class and ``all``, with the delta interval
inverted from that same test (:mod:`harness.stats.inversion`) and the unadjusted bootstrap
interval beside it, labelled so.

The page compares one pair on its own, so each row is a family of one: its level is alpha
and its interval excludes 0 exactly when its verdict is significant.  The Holm-corrected
verdicts of a stored family are on the Results page."""

from __future__ import annotations

import numpy as np
import pandas as pd

from harness.core.measures import delta_range
from harness.stats.intervals import interval_bounds, mean_jackknife, resample_sums
from harness.stats.randomization import holm_family, sign_flip_tests
from harness.core.seeding import derive_rng

ALPHA = 0.05
SEED = 0
PERMUTATIONS = 10000
RESAMPLES = 2000

COLUMNS = ["class", "n", "Δ", "interval", "confidence", "unadjusted 95% (bootstrap)", "p",
           "verdict"]


def paired_tests(pair: pd.DataFrame, measure: str) -> pd.DataFrame:
    """One row per class (sorted) and ``all``: n, mean delta (B - A), the test's interval at
    level alpha, p and verdict, and the unadjusted 95% BCa interval."""
    both = pair.dropna(subset=["value_a", "value_b"]).assign(
        query_class=lambda f: f["query_class"].fillna("(no class)"))
    parts = [(cls, part) for cls, part in both.groupby("query_class", sort=True)]
    parts.append(("all", both))
    return pd.DataFrame([_row(cls, part, measure) for cls, part in parts if len(part)],
                        columns=COLUMNS)


def _row(cls: str, part: pd.DataFrame, measure: str) -> dict:
    d = (part["value_b"] - part["value_a"]).to_numpy(dtype=np.float64)
    tests, nulls = sign_flip_tests(d[:, None], permutations=PERMUTATIONS,
                                   rng=derive_rng(SEED, "compare-page", cls))
    (decided,) = holm_family(tests, nulls, ALPHA, delta_range(measure))
    est = float(d.mean())
    if d.size < 2 or np.all(d == d[0]):
        lo, hi = est, est
    else:
        sums = resample_sums(d[None, :], RESAMPLES, derive_rng(SEED, "compare-page-delta", cls))
        lo, hi = interval_bounds("bca", sums[0] / d.size, est, mean_jackknife(d), 0.95)
    return {"class": cls, "n": int(d.size), "Δ": est,
            "interval": _interval(decided["delta_lower"], decided["delta_upper"]),
            "confidence": f"{decided['delta_confidence']:.0%}",
            "unadjusted 95% (bootstrap)": _interval(lo, hi),
            "p": tests[0].p, "verdict": decided["verdict"]}


def _interval(lo, hi) -> str:
    def bound(v) -> str:
        return "unbounded" if v is None else f"{v:+.4f}"
    return f"[{bound(lo)}, {bound(hi)}]"
