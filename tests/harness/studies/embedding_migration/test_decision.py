"""decide(): the reference's eight decisions, the regression case (bridging worse than doing
nothing), the borderline and straddle flags, and the thresholds as validated data.

The reference numbers (BEIR/scifact, 295 queries; reference 001's table) are copied from the
measurements, and the expected decisions are the reference's own."""

from __future__ import annotations

import pytest

from harness.claims.migration import DECISIONS
from harness.studies.embedding_migration.decision import THRESHOLDS, check_thresholds, decide

#: (scenario, tier, ARR, OLD's own retention, upgrade gain or None at T0, decision)
REFERENCE = [
    ("same_family", "T0", 0.942, 0.897, None, "bridge_and_migrate"),
    ("same_family", "T1", 0.946, 1.007, 0.993, "no_upgrade_needed"),
    ("different_family", "T0", 0.911, 0.858, None, "bridge_and_migrate"),
    ("different_family", "T1", 0.903, 0.944, 1.060, "full_reindex"),
    ("prefix_trap", "T0", 0.870, 0.838, None, "bridge_and_migrate"),
    ("prefix_trap", "T1", 0.921, 0.982, 1.018, "no_upgrade_needed"),
    ("hard_drift", "T0", 0.762, 0.688, None, "caution"),
    ("hard_drift", "T1", 0.971, 1.184, 0.845, "no_upgrade_needed"),
]


@pytest.mark.parametrize("scenario, tier, arr, old, gain, expected", REFERENCE,
                         ids=[f"{s}-{t}" for s, t, *_ in REFERENCE])
def test_the_reference_decisions_are_reproduced(scenario, tier, arr, old, gain, expected):
    assert decide(arr, old, gain).decision == expected


def test_bridging_worse_than_doing_nothing_means_full_reindex():
    # different_family at T1: the adapter recovers 0.903 of a re-index, keeping MiniLM
    # retains 0.944, NEW is worth having (1.060 >= floor 1.03): bridging trails doing
    # nothing by 0.944 - 0.903 = 0.041 > band 0.04
    d = decide(0.903, 0.944, 1.060)
    assert (d.decision, d.rule) == ("full_reindex", "bridge_worse_than_old")
    assert "worse than doing nothing" in d.reason and "0.041" in d.reason
    # the defect: without OLD's retention in the comparison, the ARR bands alone say
    # bridge_and_migrate (0.80 <= 0.903 < 0.97)
    assert decide(0.903, 0.903, 1.060).decision == "bridge_and_migrate"


def test_gain_below_the_floor_comes_first():
    # hard_drift T1: the highest ARR of the table, against an oracle weaker than OLD
    d = decide(0.971, 1.184, 0.845)
    assert (d.decision, d.rule) == ("no_upgrade_needed", "gain_below_floor")
    assert "weak_oracle" in d.flags
    # exactly at the floor the new model is worth having; bands decide
    assert decide(0.98, 0.97, THRESHOLDS["gain_floor"]).decision == "bridge_sufficient"


def test_the_bands_by_hand():
    assert decide(0.97, 0.5, 1.2).decision == "bridge_sufficient"       # >= 0.97
    assert decide(0.969, 0.5, 1.2).decision == "bridge_and_migrate"     # [0.80, 0.97)
    assert decide(0.80, 0.5, 1.2).decision == "bridge_and_migrate"
    assert decide(0.799, 0.5, 1.2).decision == "caution"                # [0.70, 0.80)
    assert decide(0.70, 0.5, 1.2).decision == "caution"
    d = decide(0.699, 0.5, 1.2)                                          # < 0.70
    assert (d.decision, d.rule) == ("full_reindex", "arr_band")


def test_bridging_slightly_below_old_is_a_warning_not_a_verdict():
    # 0.92 - 0.90 = 0.02 <= 0.04: the band decides, the flag warns
    d = decide(0.90, 0.92, 1.10)
    assert d.decision == "bridge_and_migrate" and d.rule == "arr_band"
    assert d.flags == ("borderline",)
    assert "within the borderline band" in d.reason
    assert "borderline" not in decide(0.90, 0.89, 1.10).flags


def test_t0_has_no_gain_and_says_so():
    d = decide(0.942, 0.897, None)
    assert d.flags == ("gain_not_measured",)
    # bridging worse than OLD at T0: re-index, stating that T0 assumes NEW is wanted
    d = decide(0.75, 0.85, None)
    assert (d.decision, d.rule) == ("full_reindex", "bridge_worse_than_old")
    assert "T0 measures no gain" in d.reason


def test_intervals_that_straddle_a_consulted_threshold_are_flagged():
    d = decide(0.975, 0.5, 1.2, intervals={"arr": (0.95, 0.99), "gain": (1.1, 1.3),
                                           "bridge_minus_old": (0.4, 0.5)})
    assert d.decision == "bridge_sufficient"
    assert d.straddles == ("bridge_sufficient",) and "straddles_threshold" in d.flags
    # the gain interval (1.0, 1.1) holds the floor 1.03; the ARR interval lies above
    # every band; bridge - OLD = 0.975 - 0.5 is far from -0.04
    d = decide(0.99, 0.5, 1.05, intervals={"arr": (0.98, 1.0), "gain": (1.0, 1.1),
                                           "bridge_minus_old": (0.4, 0.6)})
    assert d.straddles == ("gain_floor",)
    # bridge - OLD interval (-0.06, -0.02) holds -0.04, the band's edge
    d = decide(0.90, 0.93, 1.2, intervals={"arr": (0.85, 0.95), "gain": (1.1, 1.3),
                                           "bridge_minus_old": (-0.06, -0.02)})
    assert d.straddles == ("borderline_band",)
    # a threshold the decision never consulted does not count: gain below the floor stops
    # before the ARR bands, so an ARR interval across 0.97 is not a straddle
    d = decide(0.97, 1.0, 1.0, intervals={"arr": (0.9, 1.0), "gain": (0.95, 1.02)})
    assert d.decision == "no_upgrade_needed" and d.straddles == ()
    # an interval that merely touches a threshold does not straddle it
    assert decide(0.98, 0.5, 1.2, intervals={"arr": (0.97, 0.99)}).straddles == ()


def test_thresholds_are_checked_data():
    assert set(THRESHOLDS) == {"gain_floor", "borderline_band", "bridge_sufficient",
                               "bridge_and_migrate", "caution", "drop_in_overlap",
                               "drop_in_ndcg"}
    with pytest.raises(ValueError, match=r"missing \['caution'\]"):
        check_thresholds({k: v for k, v in THRESHOLDS.items() if k != "caution"})
    with pytest.raises(ValueError, match="descending|bridge_sufficient > bridge_and_migrate"):
        check_thresholds({**THRESHOLDS, "caution": 0.9})
    # other thresholds change the decision: a floor of 0.99 makes same_family T1 a candidate,
    # and it bridges well enough (0.946 >= 0.80) with OLD only 0.061 ahead (> 0.04): reindex
    assert decide(0.946, 1.007, 0.993, thresholds={**THRESHOLDS, "gain_floor": 0.99}
                  ).decision == "full_reindex"
    with pytest.raises(ValueError, match="arr must be a non-negative number"):
        decide(float("nan"), 0.9, 1.0)
    assert set(d for *_, d in REFERENCE) <= set(DECISIONS)


def _drop_in(overlap, delta, interval, gain=1.0, **kw):
    return decide(0.99, 0.99, gain, overlap=overlap, ndcg_delta=delta,
                  intervals={"ndcg_delta": interval, "overlap": (overlap - 0.01, overlap)}, **kw)


def test_an_equivalent_model_is_a_drop_in_before_the_gain_floor():
    # gain 1.0 is below the 1.03 floor: without rule 0 it would read "no upgrade needed"
    d = _drop_in(0.97, 0.001, (-0.002, 0.004))
    assert (d.decision, d.rule) == ("equivalent_drop_in", "drop_in")
    assert "0.970" in d.reason and "+0.0010" in d.reason
    # at the thresholds exactly it is still a drop-in (>= 0.95, <= 0.005)
    assert _drop_in(0.95, -0.005, (-0.009, 0.0)).decision == "equivalent_drop_in"
    # the interval straddles -0.005: flagged, not overruled
    d = _drop_in(0.96, -0.003, (-0.008, 0.002))
    assert d.decision == "equivalent_drop_in" and d.straddles == ("drop_in_ndcg",)


def test_a_model_that_is_not_equivalent_falls_to_the_other_rules():
    # overlap 0.949 < 0.95
    assert _drop_in(0.949, 0.0, (-0.001, 0.001)).decision == "no_upgrade_needed"
    # |delta| 0.0051 > 0.005
    assert _drop_in(0.99, -0.0051, (-0.009, 0.0)).decision == "no_upgrade_needed"
    # the interval excludes 0 (a small but real loss)
    assert _drop_in(0.99, -0.004, (-0.0045, -0.0035)).decision == "no_upgrade_needed"
    # thresholds are data: a looser nDCG bar makes the second case a drop-in
    assert _drop_in(0.99, -0.0051, (-0.009, 0.0),
                    thresholds={**THRESHOLDS, "drop_in_ndcg": 0.01}).decision == \
        "equivalent_drop_in"
    # not measured (T0): the rule is not consulted
    assert decide(0.99, 0.99, None, overlap=None, ndcg_delta=None).rule == "arr_band"


def test_the_drop_in_inputs_are_checked():
    with pytest.raises(ValueError, match="measured together"):
        decide(0.99, 0.99, 1.0, overlap=0.99)
    with pytest.raises(ValueError, match="needs the ndcg_delta interval"):
        decide(0.99, 0.99, 1.0, overlap=0.99, ndcg_delta=0.0)
    with pytest.raises(ValueError, match="overlap must be in"):
        _drop_in(1.5, 0.0, (0.0, 0.0))
    with pytest.raises(ValueError, match="drop_in_overlap must be in"):
        check_thresholds({**THRESHOLDS, "drop_in_overlap": 1.2})
