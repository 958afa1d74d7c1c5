"""Power: the formulas by hand, and the audit of published numbers."""

from __future__ import annotations

import math

import pytest

from harness.stats.power import (audit, minimum_detectable_effect, power_report, queries_needed,
                                 queries_needed_t, successes_from_value, z_multiplier)

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


def _noncentral_t_sample_size(d: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Independent reference: smallest n whose exact paired t-test power reaches ``power``."""
    from scipy.stats import nct, t

    n = 2
    while True:
        crit = t.ppf(1 - alpha / 2, n - 1)
        nc = d * math.sqrt(n)
        if 1 - nct.cdf(crit, n - 1, nc) + nct.cdf(-crit, n - 1, nc) >= power:
            return n
        n += 1


def test_t_refined_count_matches_the_exact_noncentral_t_sample_size():
    # effect = sd (d = 1): the z formula says ceil(2.80159^2) = 8; the exact answer is 10
    assert queries_needed(0.3, 0.3) == math.ceil((Z975 + Z80) ** 2) == 8
    for d in (1.0, 0.5, 0.2, 0.1):
        assert queries_needed_t(d * 0.3, 0.3) == _noncentral_t_sample_size(d)
    # for large n the t refinement barely moves the answer
    assert 1766 <= queries_needed_t(0.02, 0.30) <= 1766 * 1.01


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
