"""The independent reference implementation checked by hand before it checks the harness."""

from __future__ import annotations

import math

from tests.harness.evaluation.scoring_reference import evaluate, harness_order, query_values


def test_reference_order_by_hand():
    docs = [("f_10", 0.5), ("f_9", 0.5), ("f_digest", 0.5), ("g_0", 0.5), ("doc", 0.5), ("z", 0.9)]
    assert [d for d, _ in harness_order(docs)] == ["z", "f_9", "f_10", "g_0", "f_digest", "doc"]
    # f_7 and f_07 parse alike; the id itself separates them
    assert [d for d, _ in harness_order([("f_7", 1.0), ("f_07", 1.0)])] == ["f_07", "f_7"]


def test_reference_values_by_hand():
    judged = {"d1": 3, "d2": 2, "d3": 1, "n": 0}
    values = query_values(judged, ["d2", "n", "d1", "x"])
    dcg = 2 + 0 + 3 / math.log2(4)
    idcg = 3 + 2 / math.log2(3) + 1 / math.log2(4)
    assert values["nDCG@10"] == dcg / idcg
    assert values["nDCG@5"] == dcg / idcg
    assert values["R@5"] == 2 / 3
    assert values["P@5"] == 2 / 5
    assert values["MRR"] == 1.0
    assert values["AP"] == (1 / 1 + 2 / 3) / 3
    assert values["Success@1"] == 1.0
    binary = query_values(judged, ["n", "d3"], binary=True)
    assert binary["nDCG@10"] == (1 / math.log2(3)) / (1 + 1 / math.log2(3) + 1 / math.log2(4))
    assert binary["MRR"] == 1 / 2 and binary["Success@1"] == 0.0


def test_reference_evaluate_drops_and_zeroes():
    out = evaluate({"a": {"x": 1}, "b": {"y": 0}, "c": {"z": 2}}, {"a": {"x": 1.0}})
    assert set(out) == {"a", "c"}
    assert out["c"]["nDCG@10"] == 0.0 and out["a"]["nDCG@10"] == 1.0
