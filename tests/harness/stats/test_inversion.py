"""Delta intervals inverted from the paired randomization test at the Holm level of each
verdict: they exclude 0 exactly when the verdict is significant."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from harness.claims.comparisons import holm, holm_divisors
from harness.stats.inversion import UNITS
from harness.stats.randomization import holm_family, quantize, sign_flip_tests


def brute_force_p(units, d, discordant):
    """Every one of the 2^n sign assignments of ``units - d``, in Python integers, with the
    test's rounding tolerance of 2 units per discordant query."""
    y = [int(u) - d for u in units]
    observed = abs(sum(y)) - 2 * discordant
    hits = sum(1 for s in itertools.product((1, -1), repeat=len(y))
               if abs(sum(a * b for a, b in zip(s, y))) >= observed)
    return hits / 2 ** len(y)


def test_exact_null_tests_every_shift_as_full_enumeration_does():
    rng = np.random.default_rng(7)
    for _ in range(60):
        n = int(rng.integers(2, 10))
        x = rng.integers(-3, 4, size=n) / 4  # ties and zero differences, as real metrics have
        x[rng.random(n) < 0.3] = 0
        tests, nulls = sign_flip_tests(x[:, None], rng=np.random.default_rng(0))
        units = quantize(x).astype(np.int64)
        k = int(np.count_nonzero(units))
        assert nulls[0].p(0) == pytest.approx(tests[0].p, abs=1e-12)
        for d in [int(v) for v in rng.integers(-15_000_000_000, 15_000_000_000, size=4)] + [1, -1]:
            assert nulls[0].p(d) == pytest.approx(brute_force_p(units, d, k), abs=1e-12)


def test_holm_divisors_by_hand():
    # m = 3, alpha 0.05.  Sorted: 0.01 (3 x 0.01 = 0.03 <= 0.05, rejected), 0.03
    # (2 x 0.03 = 0.06 > 0.05: the step-down stops).  R = 1: the rejected one is decided at
    # alpha/3, both retained at alpha/(3 - 1).
    assert holm_divisors([0.01, 0.04, 0.03], 0.05) == [3, 2, 2]
    # every one rejected: 2 x 0.02 = 0.04, then 1 x 0.03 = 0.03
    assert holm_divisors([0.03, 0.02], 0.05) == [1, 2]
    # the step-down subtlety: 0.04 passes its own rank's level (1 x 0.04 <= 0.05) but is
    # retained because 0.026 failed before it (2 x 0.026 = 0.052); its Holm p is 0.052
    p = [0.04, 0.026, 0.001]
    assert holm(p) == pytest.approx([0.052, 0.052, 0.003])
    assert holm_divisors(p, 0.05) == [2, 2, 3]
    assert 2 * 0.04 > 0.05  # at its divisor, 0.04 is not rejected: 0 stays inside


def test_family_of_one_is_the_tests_own_confidence_interval():
    # 10 queries, 8 improved by 0.25 and 2 tied: p(0) = 2 / 2^8 = 0.0078 <= 0.05
    x = np.array([0.25] * 8 + [0.0] * 2)
    tests, nulls = sign_flip_tests(x[:, None], rng=np.random.default_rng(0))
    assert tests[0].p == 2 / 2 ** 8
    (row,) = holm_family(tests, nulls, 0.05, (-1.0, 1.0))
    assert row["holm_divisor"] == 1 and row["delta_confidence"] == 0.95
    assert row["verdict"] == "significant"
    lo, hi = round(row["delta_lower"] * UNITS), round(row["delta_upper"] * UNITS)
    assert 0 < lo <= 0.2 * UNITS <= hi  # the mean is 8 x 0.25 / 10 = 0.2
    units = quantize(x).astype(np.int64)
    # the bounds are the last accepted grid points: accepted there, rejected one unit out
    for bound, outward in ((lo, -1), (hi, +1)):
        assert brute_force_p(units, bound, 8) > 0.05
        assert brute_force_p(units, bound + outward, 8) <= 0.05


def test_a_handful_of_queries_cannot_bound_the_delta():
    # 5 queries: the smallest p any shift can reach is 2 / 2^5 = 0.0625 > 0.05, so no delta
    # is rejected and the interval is the whole range a delta of a proportion can take
    tests, nulls = sign_flip_tests(np.array([[0.5], [0.25], [0.0], [0.75], [1.0]]),
                                   rng=np.random.default_rng(0))
    (row,) = holm_family(tests, nulls, 0.05, (-1.0, 1.0))
    assert (row["delta_lower"], row["delta_upper"]) == (-1.0, 1.0)
    assert row["verdict"] == "cannot be significant"


def _random_family(rng):
    """m arms against one control on n queries, values on a coarse grid (ties, zero
    differences) or continuous, with effects from none to large."""
    m = int(rng.integers(1, 5))
    n = int(np.exp(rng.uniform(np.log(5), np.log(2000))))
    grid = int(rng.choice([2, 4, 10, 0]))
    control = rng.random(n)
    arms = control[None, :] + rng.normal(rng.normal(0, 0.05, size=(m, 1)), rng.uniform(0.01, 0.4),
                                         size=(m, n))
    arms = np.clip(arms, 0, 1)
    if grid:
        control, arms = np.round(control * grid) / grid, np.round(arms * grid) / grid
    same = rng.random((m, n)) < rng.uniform(0, 0.9)  # zero differences
    arms = np.where(same, control[None, :], arms)
    if rng.random() < 0.05:
        arms[0] = control  # every query tied
    return arms - control[None, :]


@pytest.mark.slow  # about 15 s of CPU
def test_no_interval_contradicts_its_verdict_over_10000_random_paired_samples():
    rng = np.random.default_rng(20240601)
    samples = contradictions = significant = 0
    alphas = (0.05, 0.01, 0.1)
    while samples < 10_000:
        diffs = _random_family(rng)
        alpha = alphas[samples % 3]
        # exactness allows fewer draws: the property holds for any stream and any exact_max
        tests, nulls = sign_flip_tests(diffs.T, permutations=200, exact_max=10,
                                       rng=np.random.default_rng(samples))
        for row in holm_family(tests, nulls, alpha, (-1.0, 1.0)):
            excludes_zero = row["delta_lower"] > 0 or row["delta_upper"] < 0
            contradictions += excludes_zero != (row["verdict"] == "significant")
            contradictions += excludes_zero != (row["p_holm"] <= alpha)
            significant += row["verdict"] == "significant"
            samples += 1
    assert contradictions == 0
    assert 1000 < significant < samples - 1000  # both verdicts well represented
