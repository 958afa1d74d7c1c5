"""Fusion formulas worked by hand, arm ids, weight refusal and the fusion window."""

from __future__ import annotations

import math

import pytest

from harness.retrieval.arms import FusionSpec, fusion_window, parse_weights, resolve_fusion
from harness.retrieval.fusion import (
    arithmetic_mean,
    fuse,
    geometric_mean,
    harmonic_mean,
    l2,
    min_max,
    normalization_fusion,
    rrf,
    z_score,
)

BM25 = [("a_1", 12.0), ("b_1", 8.0), ("c_1", 4.0)]
DENSE = [("b_1", 0.9), ("d_1", 0.7), ("a_1", 0.5)]


def test_rrf_sums_reciprocal_ranks():
    got = rrf([BM25, DENSE], rank_constant=60)
    assert got == pytest.approx({
        "a_1": 1 / 61 + 1 / 63,   # rank 1 in bm25, rank 3 in dense
        "b_1": 1 / 62 + 1 / 61,
        "c_1": 1 / 63,            # bm25 only: still scores
        "d_1": 1 / 62,            # dense only
    })
    assert rrf([BM25, DENSE], rank_constant=1)["a_1"] == pytest.approx(1 / 2 + 1 / 4)


def test_min_max_l2_z_score_by_hand():
    assert min_max([12.0, 8.0, 4.0]) == pytest.approx([1.0, 0.5, 0.0])
    assert min_max([3.0, 3.0]) == [1.0, 1.0]
    norm = math.sqrt(12 ** 2 + 8 ** 2 + 4 ** 2)  # sqrt(224)
    assert l2([12.0, 8.0, 4.0]) == pytest.approx([12 / norm, 8 / norm, 4 / norm])
    assert l2([0.0, 0.0]) == [0.0, 0.0]
    # mean 8, population std sqrt(((4)^2 + 0 + (-4)^2)/3) = sqrt(32/3)
    std = math.sqrt(32 / 3)
    assert z_score([12.0, 8.0, 4.0]) == pytest.approx([4 / std, 0.0, -4 / std])
    assert z_score([5.0, 5.0]) == [0.0, 0.0]


def test_normalization_arithmetic_unweighted_and_weighted():
    # min_max bm25: a=1, b=0.5, c=0; dense: b=1, d=(0.7-0.5)/0.4=0.5, a=0
    got = normalization_fusion([BM25, DENSE], "min_max", "arithmetic_mean")
    assert got == pytest.approx({"a_1": (1 + 0) / 2, "b_1": (0.5 + 1) / 2,
                                 "c_1": (0 + 0) / 2, "d_1": (0 + 0.5) / 2})
    weighted = normalization_fusion([BM25, DENSE], "min_max", "arithmetic_mean", [0.7, 0.3])
    assert weighted == pytest.approx({"a_1": 0.7 * 1, "b_1": 0.7 * 0.5 + 0.3 * 1,
                                      "c_1": 0.0, "d_1": 0.3 * 0.5})


def test_combinations_by_hand():
    assert arithmetic_mean([0.2, 0.8], [1, 1]) == pytest.approx(0.5)
    assert geometric_mean([0.2, 0.8], [1, 1]) == pytest.approx(math.sqrt(0.2 * 0.8))
    assert harmonic_mean([0.2, 0.8], [1, 1]) == pytest.approx(2 / (1 / 0.2 + 1 / 0.8))
    assert geometric_mean([0.2, 0.8], [0.7, 0.3]) == pytest.approx(0.2 ** 0.7 * 0.8 ** 0.3)
    assert harmonic_mean([0.2, 0.8], [0.7, 0.3]) == pytest.approx(1 / (0.7 / 0.2 + 0.3 / 0.8))


@pytest.mark.parametrize("combination", ["geometric_mean", "harmonic_mean"])
def test_geometric_and_harmonic_annihilate_single_leg_hits(combination):
    """A document one leg did not return scores 0 there, so these means zero it: the
    reason those arms collapse on speaker-turn chunks (mostly single-leg hits)."""
    bm25 = [("solo_1", 30.0), ("both_1", 20.0), ("low_1", 10.0)]
    dense = [("both_1", 0.9), ("other_1", 0.8), ("low_1", 0.1)]
    got = normalization_fusion([bm25, dense], "min_max", combination)
    # solo_1 is the BM25 leg's best hit (normalised 1.0) and other_1 scores 0.875 on the
    # dense leg, yet both are annihilated; both_1 (0.5 and 1.0) survives
    assert got["solo_1"] == 0.0
    assert got["other_1"] == 0.0
    expected = math.sqrt(0.5 * 1.0) if combination == "geometric_mean" else 2 / (1 / 0.5 + 1)
    assert got["both_1"] == pytest.approx(expected)
    # the arithmetic mean ranks the same single-leg hits instead
    arith = normalization_fusion([bm25, dense], "min_max", "arithmetic_mean")
    assert arith["solo_1"] == pytest.approx(0.5) and arith["other_1"] == pytest.approx(0.4375)
    # in the fused list the annihilated hits fall below every document both legs found
    spec = FusionSpec("normalization", normalization="min_max", combination=combination)
    ranked = [d for d, _ in fuse([bm25, dense], spec, size=10)]
    assert ranked[0] == "both_1"
    assert set(ranked[2:]) >= {"solo_1", "other_1"}


def test_rrf_keeps_single_leg_hits():
    got = rrf([[("solo_1", 30.0)], [("other_1", 0.8)]], 60)
    assert got == pytest.approx({"solo_1": 1 / 61, "other_1": 1 / 61})


def test_weights_parse_to_integer_percent_and_refuse_more_precision():
    assert parse_weights("0.7,0.3") == (70, 30)
    assert parse_weights("0.3, 0.7") == (30, 70)
    assert parse_weights("0.5,0.5") is None  # equal weights are the unweighted mean
    with pytest.raises(ValueError, match="more precision"):
        parse_weights("0.705,0.295")
    with pytest.raises(ValueError, match="sum to 1"):
        parse_weights("0.7,0.4")
    with pytest.raises(ValueError, match="two weights"):
        parse_weights("1")
    with pytest.raises(ValueError):
        parse_weights("-0.2,1.2")
    with pytest.raises(ValueError, match="not a number"):
        parse_weights("a,b")


def test_arm_ids_are_derived_from_parameters():
    assert resolve_fusion().arm_id == "hybrid-rrf-60"
    assert resolve_fusion().selected_explicitly is False
    assert resolve_fusion("rrf", 30).arm_id == "hybrid-rrf-30"
    explicit = resolve_fusion("rrf", 60)
    assert explicit.arm_id == resolve_fusion().arm_id and explicit.selected_explicitly
    assert resolve_fusion("normalization").arm_id == "hybrid-norm-min_max-arithmetic_mean"
    assert resolve_fusion("normalization", None, "min_max", "arithmetic_mean",
                          "0.7,0.3").arm_id == "hybrid-norm-min_max-arithmetic_mean-w70_30"
    assert resolve_fusion("normalization", None, "z_score").arm_id == \
        "hybrid-norm-z_score-arithmetic_mean"
    block = resolve_fusion("normalization", None, "l2", "harmonic_mean", "0.3,0.7").block(48)
    assert block["parameters"]["weights"] == {"bm25": 0.3, "vector": 0.7}
    assert block["window"] == 192 and block["selected_explicitly"] is True


def test_fusion_configuration_refusals():
    with pytest.raises(ValueError, match="without --fusion"):
        resolve_fusion(None, 30)
    with pytest.raises(ValueError, match="normalization only"):
        resolve_fusion("rrf", None, "min_max")
    with pytest.raises(ValueError, match="rrf only"):
        resolve_fusion("normalization", 60)
    with pytest.raises(ValueError, match="arithmetic_mean"):
        resolve_fusion("normalization", None, "z_score", "geometric_mean")
    with pytest.raises(ValueError, match="unknown --fusion"):
        resolve_fusion("borda")


def test_fusion_window():
    assert fusion_window(12) == 100   # max(100, 48)
    assert fusion_window(48) == 192   # 48 * 4
    assert fusion_window(100) == 400
    assert fusion_window(200) == 500  # capped
    with pytest.raises(ValueError):
        fusion_window(0)


def test_size_12_and_48_give_different_top_10s_through_the_fusion_window():
    """--size is not a truncation knob: it sets the depth each leg is fused over.

    Both legs rank ``s1..s8`` first (RRF 2/(60+i)).  BM25 then ranks ``b9..b149`` and puts
    ``x`` 150th; the dense leg puts ``y`` 9th and ``x`` 10th.  At size 12 the window is 100,
    so x's BM25 rank is cut away: x = 1/70, below y = b9 = 1/69, and x misses the top ten.
    At size 48 the window is 192: x = 1/70 + 1/210 = 0.019048, above 1/69, and x enters
    the top ten while y (tied with b9 at 1/69, and ``b9`` sorts first) leaves it.
    """
    shared = [(f"s{i}_0", 1.0) for i in range(1, 9)]
    bm25 = [(f"s{i}_0", 1000.0 - i) for i in range(1, 9)]
    bm25 += [(f"b{i}_0", 1000.0 - i) for i in range(9, 150)]
    bm25 += [("x_0", 850.0)] + [(f"b{i}_0", 1000.0 - i) for i in range(151, 200)]
    dense = [(f"s{i}_0", 1.0 - i / 1000) for i in range(1, 9)]
    dense += [("y_0", 0.991), ("x_0", 0.990)] + [(f"w{i}_0", 0.5 - i / 1000)
                                                 for i in range(11, 200)]
    assert [d for d, _ in bm25].index("x_0") + 1 == 150
    assert [d for d, _ in dense].index("x_0") + 1 == 10
    spec = FusionSpec()
    top12, top48 = fuse([bm25, dense], spec, size=12), fuse([bm25, dense], spec, size=48)
    s12, s48 = dict(top12), dict(top48)
    assert s12["x_0"] == pytest.approx(1 / 70)
    assert s48["x_0"] == pytest.approx(1 / 70 + 1 / 210)
    assert s12["y_0"] == s48["y_0"] == pytest.approx(1 / 69)
    ids12, ids48 = [d for d, _ in top12[:10]], [d for d, _ in top48[:10]]
    assert ids12[:8] == ids48[:8] == [d for d, _ in shared]
    assert ids12[8:] == ["b9_0", "y_0"]
    assert ids48[8:] == ["x_0", "b9_0"]


def test_fused_ties_break_by_document_structure_not_input_order():
    legs = [[("f_10", 2.0), ("f_9", 1.0)], [("f_9", 2.0), ("f_10", 1.0)]]
    reversed_legs = [legs[1], legs[0]]
    a = fuse(legs, FusionSpec(), size=10)
    b = fuse(reversed_legs, FusionSpec(), size=10)
    assert a == b
    # equal RRF scores 1/61 + 1/62: chunk 9 sorts before chunk 10 (integer index, not text)
    assert [d for d, _ in a] == ["f_9", "f_10"]


def test_duplicate_or_non_finite_leg_entries_are_refused():
    with pytest.raises(ValueError, match="duplicate"):
        rrf([[("a_1", 1.0), ("a_1", 0.5)]])
    with pytest.raises(ValueError, match="non-finite"):
        normalization_fusion([[("a_1", float("nan"))]], "min_max", "arithmetic_mean")
