"""Statistics at evaluation scale, vectorised, against a naive per-permutation loop.

* paired randomization tests: 1,600 queries x 20 arms x 10,000 sign flips (target <= 2 s)
* BCa bootstrap intervals: 20 rows x 10,000 resamples over 1,600 queries each, every row
  with its own resample stream (no sharing between rows; target <= 3 s)

The baselines are the same computations written as one numpy step per permutation /
resample, timed on a small slice in the same run and extrapolated linearly to full size.
"""

from __future__ import annotations

import time

import numpy as np

from harness.stats.intervals import bootstrap_mean_interval
from harness.stats.randomization import tests_from_differences


def _naive_permutations(diffs: np.ndarray, permutations: int, rng) -> np.ndarray:
    """One sign vector per iteration, every arm tested with it: the loop a first draft writes."""
    n, arms = diffs.shape
    observed = np.abs(diffs.sum(axis=0))
    extreme = np.zeros(arms)
    for _ in range(permutations):
        signs = rng.choice((-1.0, 1.0), size=n)
        for j in range(arms):
            extreme[j] += abs(float(signs @ diffs[:, j])) >= observed[j]
    return (extreme + 1) / (permutations + 1)


def _naive_bootstrap(values: np.ndarray, resamples: int, rng) -> np.ndarray:
    n = values.size
    return np.array([values[rng.integers(0, n, size=n)].mean() for _ in range(resamples)])


def _row(name, ours, baseline, target):
    return {"benchmark": name, "ours": ours, "baseline": baseline, "unit": "s",
            "ratio": baseline / ours if ours > 0 else None, "target": f"<= {target} s",
            "ok": ours <= target}


def run(quick: bool = False) -> list[dict]:
    queries, arms, perms, rows_n, resamples = (1600, 20, 10000, 20, 10000) if not quick \
        else (400, 5, 2000, 5, 2000)
    rng = np.random.default_rng(0)
    control = rng.beta(2, 5, size=queries)
    candidates = np.clip(control[None, :] + rng.normal(0.003, 0.08, size=(arms, queries)), 0, 1)
    diffs = (candidates - control[None, :]).T

    started = time.perf_counter()
    tests = tests_from_differences(diffs, permutations=perms, rng=np.random.default_rng(1))
    ours = time.perf_counter() - started
    if any(t.method != "monte-carlo" for t in tests):
        raise RuntimeError("benchmark set-up error: every arm should need Monte Carlo")
    slice_perms = max(20, perms // 100)
    started = time.perf_counter()
    _naive_permutations(diffs, slice_perms, np.random.default_rng(1))
    naive = (time.perf_counter() - started) * perms / slice_perms
    out = [_row(f"randomization {queries} q x {arms} arms x {perms} flips", ours, naive, 2.0)]

    data = rng.beta(0.5, 3.0, size=(rows_n, queries))
    started = time.perf_counter()
    for i in range(rows_n):
        bootstrap_mean_interval(data[i], resamples=resamples, seed=i)
    ours = time.perf_counter() - started
    slice_resamples = max(50, resamples // 50)
    started = time.perf_counter()
    _naive_bootstrap(data[0], slice_resamples, np.random.default_rng(1))
    naive = (time.perf_counter() - started) * rows_n * resamples / slice_resamples
    out.append(_row(f"BCa bootstrap {rows_n} rows x {resamples} resamples ({queries} q)", ours, naive, 3.0))
    return out
