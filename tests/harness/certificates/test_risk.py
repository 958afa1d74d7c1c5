"""Risk-controlled abstention: p-values and walk by hand, type-I error by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad

from harness.certificates.risk import (
    certify_risk, losses_for_context, p_value, queries_needed, risk_at, walk,
)

TARGET = 0.05
DELTA = 0.1


def binom_cdf_by_hand(k, n, p):
    return sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k + 1))


def test_p_value_is_the_binomial_lower_tail():
    for k, n in [(0, 10), (1, 20), (3, 50), (7, 100)]:
        assert p_value(k, n, TARGET) == pytest.approx(binom_cdf_by_hand(k, n, TARGET), rel=1e-10)


def test_walk_by_hand():
    top = np.array([0.9, 0.8, 0.8, 0.5, -math.inf, 0.2])
    loss = np.array([False, True, False, True, True, False])
    lams, losses, answered = walk(top, loss)
    assert lams.tolist() == [0.9, 0.8, 0.5, 0.2]     # distinct, descending; -inf never answers
    assert losses.tolist() == [0, 1, 2, 2]
    assert answered.tolist() == [1, 3, 4, 5]


def test_certified_threshold_by_hand():
    # 60 queries, tops 60/60, 59/60, ...; the loss hits the 41st and 51st highest tops.
    top = np.arange(60, 0, -1) / 60
    loss = np.zeros(60, dtype=bool)
    loss[[40, 50]] = True
    fit = certify_risk(top, loss, TARGET, DELTA)
    # with 0 losses p = 0.95^60 = 0.046 <= 0.1: rejected for the first 40 steps;
    # at step 41 p = P(Bin(60, .05) <= 1) = 0.95^60 + 60 * .05 * .95^59 = 0.19 > 0.1: stop.
    assert binom_cdf_by_hand(0, 60, TARGET) < DELTA < binom_cdf_by_hand(1, 60, TARGET)
    assert fit.lam == pytest.approx(21 / 60)         # the 40th highest top score
    assert fit.certified.answered == 40 and fit.certified.losses == 0
    assert fit.stopped_at.answered == 41 and fit.stopped_at.losses == 1
    assert fit.tested == 41 and not fit.degenerate


def test_losses_and_risk_at():
    ranks = np.array([1, 0, 4, 2])
    assert losses_for_context(ranks, 3).tolist() == [False, True, True, False]
    assert risk_at([0.9, 0.8, 0.1, 0.5], [False, True, True, False], 0.5) == (1, 3, 4)


def true_risk(lam):
    """Top ~ U(0, 1), P(loss | top = s) = 0.6 (1 - s): R(l) = 0.3 (1 - l)^2."""
    lam = min(max(lam, 0.0), 1.0)
    return 0.3 * (1 - lam) ** 2


def test_type_one_error_is_under_delta():
    rng = np.random.default_rng(21)
    reps, n = 1000, 400
    violations, risks = 0, []
    for _ in range(reps):
        top = rng.random(n)
        loss = rng.random(n) < 0.6 * (1 - top)
        fit = certify_risk(top, loss, TARGET, DELTA)
        r = 0.0 if fit.lam is None else true_risk(fit.lam)
        risks.append(r)
        violations += r > TARGET
    # sd of the violation rate at delta = 0.1 over 1000 repetitions is 0.0095
    assert violations / reps <= DELTA + 0.03
    # and the certificate is not trivially safe: it answers close to the allowed risk
    assert 0.03 < np.mean(risks) < TARGET


def test_degenerate_when_the_top_scores_are_wrong_and_data_is_short():
    # 30 queries; the single most confident one is a loss, all others fine
    top = np.linspace(1.0, 0.0, 30)
    loss = np.zeros(30, dtype=bool)
    loss[0] = True
    fit = certify_risk(top, loss, TARGET, DELTA)
    assert fit.degenerate and fit.lam is None and fit.certified is None
    assert fit.stopped_at.lam == 1.0 and fit.stopped_at.losses == 1
    # the most permissive threshold with the same single loss answers everything
    assert fit.best_observed.answered == 30
    assert fit.queries_needed is not None and fit.queries_needed > 30


def incomplete_beta(x, a, b):
    """Regularised incomplete beta by numerical integration (independent of scipy.special)."""
    log_b = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    value, _ = quad(lambda t: math.exp((a - 1) * math.log(t) + (b - 1) * math.log1p(-t) - log_b),
                    0, x, limit=200)
    return value


def test_queries_needed_by_hand_and_independently():
    # zero observed losses: P(Bin(n, p) <= 0) = 0.95^n <= 0.1  <=>  n >= ln 0.1 / ln 0.95 = 44.9
    assert queries_needed(0.0, TARGET, DELTA) == math.ceil(math.log(DELTA) / math.log(1 - TARGET))
    n = queries_needed(0.028, TARGET, 0.05)
    proves = lambda m: incomplete_beta(1 - TARGET, m - m * 0.028, m * 0.028 + 1) <= 0.05  # noqa: E731
    assert proves(n) and not proves(n - 1)
    # an observed risk at or above the target is never proven, however many queries
    assert queries_needed(0.05, TARGET, DELTA) is None
    assert queries_needed(0.2, TARGET, DELTA) is None


def test_degenerate_with_no_hope_says_so():
    # 10 queries, every answer would be a loss: the first step already shows risk 1/10
    top = np.linspace(1.0, 0.0, 10)
    fit = certify_risk(top, np.ones(10, dtype=bool), TARGET, DELTA)
    # P(Bin(10, .05) <= 1) = .95^10 + 10 * .05 * .95^9 = 0.914 > 0.1: not rejected
    assert fit.stopped_at.p_value == pytest.approx(0.95 ** 10 + 0.5 * 0.95 ** 9)
    assert fit.degenerate and fit.best_observed.answered == 1
    assert fit.queries_needed is None                # 0.1 >= 0.05: no n proves it


def test_a_wrong_scorer_is_only_allowed_to_answer_rarely():
    # every answer is a loss; the joint risk P(answer and loss) <= 0.05 still allows
    # answering a few queries, never more than the target fraction
    top = np.linspace(1.0, 0.0, 200)
    fit = certify_risk(top, np.ones(200, dtype=bool), TARGET, DELTA)
    assert not fit.degenerate
    assert fit.certified.answered == fit.certified.losses
    assert fit.certified.answered / 200 < TARGET


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="target"):
        certify_risk([0.5], [False], 1.5, DELTA)
    with pytest.raises(ValueError, match="delta"):
        certify_risk([0.5], [False], TARGET, 0.0)
    with pytest.raises(ValueError, match="no calibration"):
        certify_risk([], [], TARGET, DELTA)
