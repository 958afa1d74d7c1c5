"""Split conformal context sizing: exact quantiles, and the promise checked by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.certificates.conformal import (
    Candidates, conformal_quantile, evaluate, fit_coverage, fixed_k, nonconformity,
    quantile_index, round_up, split_indices,
)

from .synth import candidates

ALPHA = 0.1
REPS = 150
N = 600            # 150 tune / 210 calibrate / 240 held out
SPLITS = (0.25, 0.35, 0.40)
#: tolerance on the mean held-out coverage over REPS repetitions: the sd of that mean is
#: about sqrt(0.09/240 + 0.09/210)/sqrt(150) = 0.0023, so 0.01 is over four sd
TOLERANCE = 0.01


def test_quantile_index_by_hand():
    assert quantile_index(9, 0.1) == 9        # ceil(10 * 0.9) = 9
    assert quantile_index(8, 0.1) == 9        # ceil(9 * 0.9) = ceil(8.1) = 9 > 8
    assert quantile_index(99, 0.07) == 93     # ceil(100 * 0.93) = 93 exactly, no float drift
    assert quantile_index(288, 0.1) == 261    # ceil(289 * 0.9) = ceil(260.1)


def test_conformal_quantile_by_hand():
    values = np.array([0.5, 0.1, 0.9, 0.3, 0.7, 0.2, 0.8, 0.4, 0.6, 1.0])
    # n = 10, k = ceil(11 * 0.9) = 10: the largest value
    assert conformal_quantile(values, 0.1) == 1.0
    # alpha 0.2: k = ceil(11 * 0.8) = ceil(8.8) = 9: the ninth smallest = 0.9
    assert conformal_quantile(values, 0.2) == 0.9
    # n = 8 < 9 needed: nothing finite
    assert conformal_quantile(values[:8], 0.1) == math.inf
    # a miss (inf) at the quantile index makes it infinite
    assert conformal_quantile(np.array([0.1] * 8 + [math.inf] * 2), 0.2) == math.inf


def test_round_up_only_widens():
    assert round_up(0.12345678901234) == 0.1234567891
    assert round_up(0.5) == 0.5
    assert round_up(0.99999999999) == 1.0


def test_nonconformity_is_mass_through_first_relevant_and_zero_at_rank_one():
    # weights 4, 2, 1, 1 at temperature 1 -> C = 0.5, 0.75, 0.875, 1
    scores = [math.log(w) for w in (4, 2, 1, 1)]
    c = Candidates.from_lists([scores, scores, scores, scores[:2]], [1, 3, None, 3])
    e = nonconformity(c, 1.0)
    assert e[0] == 0.0                         # rank 1: the top is always sent
    assert e[1] == pytest.approx(0.875)        # 4/8 + 2/8 + 1/8
    assert e[2] == math.inf                    # no relevant candidate: a miss
    assert e[3] == math.inf                    # relevant beyond the recorded list


def test_fixed_k_is_the_same_quantile_over_ranks():
    ranks = np.array([1, 1, 2, 1, 5, 3, 1, 2, 8, math.inf], dtype=float)
    # n = 10, alpha 0.2: k = 9 -> the ninth smallest rank = 8
    assert fixed_k(ranks, 0.2) == 8
    assert fixed_k(ranks, 0.1) is None         # k = 10 lands on the miss


def test_splits_are_seeded_disjoint_and_complete():
    a = split_indices(100, SPLITS, seed=3)
    b = split_indices(100, SPLITS, seed=3)
    c = split_indices(100, SPLITS, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    assert [len(x) for x in a] == [25, 35, 40]
    assert sorted(np.concatenate(a).tolist()) == list(range(100))
    with pytest.raises(ValueError, match="summing to 1"):
        split_indices(100, (0.5, 0.5, 0.5), 0)
    with pytest.raises(ValueError, match="non-empty"):
        split_indices(3, (0.2, 0.3, 0.5), 0)


def simulate(rng, reps, **scorer):
    coverage, sizes, ks, fixed_cov = [], [], [], []
    for rep in range(reps):
        c = candidates(rng, N, **scorer)
        tune, cal, held = split_indices(c.n, SPLITS, rep)
        fit = fit_coverage(c.subset(tune), c.subset(cal), ALPHA)
        h = c.subset(held)
        size, hit = evaluate(h, fit)
        coverage.append(hit.mean())
        sizes.append(size.mean())
        ks.append(fit.fixed_k)
        fixed_cov.append(np.mean(h.first_rank <= fit.fixed_k))
    return np.mean(coverage), np.mean(sizes), np.mean(ks), np.mean(fixed_cov)


def test_held_out_coverage_keeps_the_promise_and_is_not_wasteful():
    coverage, _, _, fixed_coverage = simulate(np.random.default_rng(11), REPS)
    n_cal = int(N * SPLITS[1])
    assert coverage >= 1 - ALPHA - TOLERANCE
    # split conformal without ties also covers < 1 - alpha + 1/(n+1): not trivially safe
    assert coverage <= 1 - ALPHA + 1 / (n_cal + 1) + TOLERANCE
    assert fixed_coverage >= 1 - ALPHA - TOLERANCE


def test_adaptive_sets_are_smaller_than_fixed_k_when_the_scorer_is_informative():
    coverage, mean_size, mean_k, _ = simulate(np.random.default_rng(12), 60)
    assert coverage >= 1 - ALPHA - 2 * TOLERANCE
    # 60% easy queries (boost 4) sit at rank 1; the rest are nearly flat, so one K must be
    # large for everyone while adaptive sets stay short where the scores are confident
    assert mean_size < 0.75 * mean_k


def test_adaptive_sets_are_no_worse_than_fixed_k_when_the_scorer_is_useless():
    coverage, mean_size, mean_k, _ = simulate(np.random.default_rng(13), 60,
                                              mu_easy=0.0, mu_hard=0.0)
    assert coverage >= 1 - ALPHA - 2 * TOLERANCE
    # useless scores: the first relevant rank is uniform on 1..20; both need about 19
    assert mean_k > 17
    assert mean_size <= mean_k + 0.5


def test_too_few_calibration_queries_certify_nothing():
    rng = np.random.default_rng(5)
    c = candidates(rng, 40)
    fit = fit_coverage(c.subset(np.arange(20)), c.subset(np.arange(20, 28)), ALPHA)
    assert fit.quantile_index == 9 and fit.calibration_n == 8   # ceil(9 * 0.9) = 9 > 8
    assert fit.threshold is None
    with pytest.raises(ValueError, match="nothing was certified"):
        evaluate(c, fit)


def test_too_many_misses_certify_nothing():
    rng = np.random.default_rng(6)
    c = candidates(rng, 400, p_none=0.3)       # 30% of queries have no relevant candidate
    fit = fit_coverage(c.subset(np.arange(100)), c.subset(np.arange(100, 400)), ALPHA)
    assert fit.calibration_misses > 300 - fit.quantile_index
    assert fit.threshold is None
