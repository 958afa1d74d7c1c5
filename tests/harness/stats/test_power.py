"""Power: the formulas by hand, and the audit of published numbers."""

from __future__ import annotations

import math

import pytest

from harness.stats.power import (audit, minimum_detectable_effect, power_report, queries_needed,
                                 queries_needed_t, successes_from_value, t_test_power,
                                 z_multiplier)

Z975 = 1.959963984540054   # z_{0.975}
Z80 = 0.8416212335729143   # z_{0.80}


def test_multiplier_is_the_sum_of_two_normal_quantiles():
    assert z_multiplier() == pytest.approx(Z975 + Z80, abs=1e-12)


def test_queries_needed_for_a_two_point_mrr_move():
    # ((1.95996 + 0.84162) * 0.30 / 0.02)^2 = 1765.998 -> 1,766 (the reference's figure)
    assert queries_needed(0.02, 0.30) == math.ceil(((Z975 + Z80) * 0.30 / 0.02) ** 2) == 1766
    # a one-point move needs four times as many: ~7,000 (the reference's nightly-tuner figure)
    assert queries_needed(0.01, 0.30) == math.ceil(((Z975 + Z80) * 0.30 / 0.01) ** 2) == 7064


def test_minimum_detectable_effect_on_300_queries():
    assert minimum_detectable_effect(300, 0.30) == pytest.approx((Z975 + Z80) * 0.30 / math.sqrt(300))
    assert minimum_detectable_effect(300, 0.30) == pytest.approx(0.0485, abs=5e-5)


def _power_by_integration(n: int, d: float, alpha: float) -> float:
    """Independent reference: power of the two-sided paired t test on n differences with
    standardised effect d, integrating over the chi-square of the variance estimate.

    ``T = (Z + d sqrt(n)) / sqrt(V / nu)`` with ``nu = n - 1``, ``V ~ chi2(nu)``, so
    ``P(|T| > c) = E_V[Phi(-c s + lam) + Phi(-c s - lam)]``, ``s = sqrt(V / nu)``,
    ``lam = d sqrt(n)``, ``c = t_{1-alpha/2, nu}`` (no noncentral-t code involved).
    """
    from scipy.integrate import quad
    from scipy.stats import chi2, t

    nu, lam = n - 1, d * math.sqrt(n)
    c = t.ppf(1 - alpha / 2, nu)
    log_norm = -(nu / 2) * math.log(2) - math.lgamma(nu / 2)

    def phi(x):  # standard normal cdf
        return 0.5 * math.erfc(-x / math.sqrt(2))

    def integrand(v):  # chi-square density written out
        s = math.sqrt(v / nu)
        density = math.exp(log_norm + (nu / 2 - 1) * math.log(v) - v / 2)
        return (phi(-c * s + lam) + phi(-c * s - lam)) * density

    lo, mid, hi = chi2.ppf([1e-13, 0.5, 1 - 1e-13], nu)
    return sum(quad(integrand, a, b, epsabs=1e-13, epsrel=1e-12, limit=200)[0]
               for a, b in ((lo, mid), (mid, hi)))


#: statsmodels 0.15 ``TTestPower().solve_power(effect_size=d, alpha=a, power=p,
#: alternative="two-sided")``, rounded up (computed outside the suite, which does not depend
#: on statsmodels): (alpha, power, d) -> n
STATSMODELS = {(0.01, 0.8, 1.0): 16, (0.05, 0.8, 1.0): 10, (0.05, 0.95, 0.5): 54,
               (0.1, 0.9, 0.7): 19, (0.05, 0.8, 0.1): 787, (0.01, 0.95, 0.3): 202}

GRID = [(alpha, power, tenths / 10) for alpha in (0.01, 0.05, 0.10) for power in (0.8, 0.9, 0.95)
        for tenths in range(1, 11)]


def test_t_count_is_the_exact_paired_t_sample_size_on_a_grid_of_90_cells():
    # effect = sd (d = 1): the z formula says ceil(2.80159^2) = 8; the exact answer is 10
    assert queries_needed(0.3, 0.3) == math.ceil((Z975 + Z80) ** 2) == 8
    for (alpha, power, d), n in STATSMODELS.items():
        assert queries_needed_t(d * 0.3, 0.3, alpha, power) == n
    for alpha, power, d in GRID:
        n = queries_needed_t(d * 0.3, 0.3, alpha, power)
        # smallest n: it reaches the power and n - 1 does not (power rises with n)
        assert _power_by_integration(n, d, alpha) >= power, (alpha, power, d, n)
        assert n == 2 or _power_by_integration(n - 1, d, alpha) < power, (alpha, power, d, n)
    # for large n the t count barely moves the answer
    assert 1766 <= queries_needed_t(0.02, 0.30) <= 1766 * 1.01


def test_t_test_power_matches_the_integral():
    for n, d, alpha in ((16, 1.0, 0.01), (15, 1.0, 0.01), (300, 0.15, 0.05), (3, 2.0, 0.1)):
        assert t_test_power(n, d * 0.3, 0.3, alpha) == pytest.approx(
            _power_by_integration(n, d, alpha), abs=1e-9)
    # alpha 0.01, d = 1: 15 queries fall short of 80% power, 16 reach it (the old
    # fixed-point t count said 15)
    assert t_test_power(15, 1.0, 1.0, 0.01) < 0.8 <= t_test_power(16, 1.0, 1.0, 0.01)


def test_power_report_states_floor_and_shortfall():
    doc = power_report(300, measure="MRR@10", sd=0.30, sd_source="given", effect=0.02)
    assert doc["smallest_attainable_p"] == 2.0 ** (1 - 300)
    assert doc["queries_needed"] == 1766 and doc["shortfall"] == 1766 - 300
    assert doc["queries_that_must_differ"] == 6 and doc["can_be_significant"]
    small = power_report(4)
    assert not small["can_be_significant"] and small["smallest_attainable_p"] == 2.0 ** -3
    with pytest.raises(ValueError, match="requires an sd"):
        power_report(300, effect=0.02)


def test_published_values_become_counts_or_are_refused():
    assert successes_from_value("1.00", 10) == 10
    assert successes_from_value("0.70", 10) == 7
    assert successes_from_value("0.67", 3) == 2  # 2/3 printed to two decimals
    with pytest.raises(ValueError, match="not k/10"):
        successes_from_value("0.73", 10)
    with pytest.raises(ValueError, match="ambiguous"):
        successes_from_value("0.7", 30)  # 20/30 .. 22/30 all print as 0.7


def test_audit_of_the_reference_headline():
    doc = audit(10, ["1.00"], "0.70")
    assert doc["queries_that_must_differ"] == 6
    top, base = doc["values"][0], doc["baseline"]
    assert top["lower"] == pytest.approx(0.025 ** 0.1) and top["upper"] == 1.0
    assert (round(base["lower"], 3), round(base["upper"], 3)) == (0.348, 0.933)
    (cmp,) = doc["comparisons"]
    # 10/10 vs 7/10: exactly three queries differ, all one way: p = 2 / 2^3
    assert (cmp["discordant_min"], cmp["discordant_max"]) == (3, 3)
    assert cmp["p_best"] == cmp["p_worst"] == 0.25 and cmp["verdict"] == "cannot be significant"


def test_audit_range_of_discordant_queries():
    (cmp,) = audit(10, ["0.9"], "0.7")["comparisons"]
    # 9/10 vs 7/10: 2 or 4 queries differ; net +2 -> p = 2/4 (d = 2) or 10/16 (d = 4: w = 3, l = 1)
    assert (cmp["discordant_min"], cmp["discordant_max"]) == (2, 4)
    assert cmp["p_best"] == 2 / 4 and cmp["p_worst"] == 10 / 16
