"""What a paired comparison could resolve, checked by hand and by simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.stats.resolution import resolution

#: z_0.975 + z_0.8 (normal quantiles, to 7 places)
Z = 1.9599640 + 0.8416212
#: Student t 0.975 quantile on 3 degrees of freedom (tables)
T_3 = 3.1824463


def test_by_hand_on_four_differences():
    out = resolution([0.1, 0.3, -0.1, 0.5])
    # mean 0.2; deviations -0.1, 0.1, -0.3, 0.3: sd = sqrt(0.2 / 3)
    sd = math.sqrt(0.2 / 3)
    assert out["n"] == 4 and math.isclose(out["delta"], 0.2)
    assert math.isclose(out["sd_delta"], sd, rel_tol=1e-12)
    assert math.isclose(out["mde"], Z * sd / 2, rel_tol=1e-6)
    # the normal count ceil((Z sd / delta)^2) = ceil(13.08) = 14; the t count is at least that
    assert math.ceil((Z * sd / 0.2) ** 2) == 14
    assert 14 <= out["queries_needed"] <= 17


def test_power_at_the_observed_delta_matches_a_simulated_t_test():
    d = [0.1, 0.3, -0.1, 0.5]
    out = resolution(d)
    rng = np.random.default_rng(20260812)
    sd = math.sqrt(0.2 / 3)
    draws = rng.normal(0.2, sd, size=(200_000, 4))
    t = draws.mean(axis=1) / (draws.std(axis=1, ddof=1) / 2)
    simulated = float(np.mean(np.abs(t) > T_3))
    se = math.sqrt(simulated * (1 - simulated) / 200_000)
    assert abs(out["power_at_delta"] - simulated) < 4 * se


def test_no_power_or_count_where_none_exists():
    assert resolution([0.25])["sd_delta"] is None  # one query: no sd
    flat = resolution([0.2, 0.2, 0.2])
    assert flat["sd_delta"] < 1e-15 and flat["mde"] is None and flat["power_at_delta"] is None
    tie = resolution([0.1, -0.1, 0.2, -0.2])
    assert abs(tie["delta"]) < 1e-16 and tie["mde"] is not None and tie["power_at_delta"] is None
    assert tie["queries_needed"] is None
    tiny = resolution([1e-9, -1e-9 + 1e-12, 2e-9, -2e-9])  # a mean below the stored precision
    assert tiny["power_at_delta"] is None
    with pytest.raises(ValueError, match="finite differences"):
        resolution([0.1, float("nan")])


def test_a_tiny_delta_gets_the_normal_count():
    out = resolution([0.3, -0.3, 0.3, -0.3, 0.3, -0.3 + 6e-4])  # mean 1e-4, sd about 0.33
    expected = math.ceil((Z * out["sd_delta"] / out["delta"]) ** 2)
    assert expected > 1_000_000
    assert abs(out["queries_needed"] - expected) <= 1
