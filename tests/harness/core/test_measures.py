"""harness.core.measures: canonical names mapped to trec_eval's measures."""

from __future__ import annotations

import pytest

from harness.core.measures import COMPARE_MEASURES, DEFAULT_MEASURES, MEASURES, resolve


def test_default_set_is_the_issue_list():
    # and Judged@10 (issue 29: every run says how much of its top 10 was judged)
    assert DEFAULT_MEASURES == ("nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "P@5",
                                "P@10", "MRR", "MRR@10", "AP", "Success@1", "Judged@10")
    assert set(COMPARE_MEASURES) == {"nDCG@5", "nDCG@10", "R@10", "MRR"}


@pytest.mark.parametrize("name, trec_measure, trec_key, cutoff", [
    ("nDCG@10", "ndcg_cut.10", "ndcg_cut_10", None),
    ("nDCG", "ndcg", "ndcg", None),
    ("R@20", "recall.20", "recall_20", None),
    ("P@5", "P.5", "P_5", None),
    ("MRR", "recip_rank", "recip_rank", None),
    ("MRR@10", "recip_rank", "recip_rank", 10),
    ("AP", "map", "map", None),
    ("Success@1", "success.1", "success_1", None),
])
def test_trec_eval_names(name, trec_measure, trec_key, cutoff):
    m = MEASURES[name]
    assert (m.trec_measure, m.trec_key, m.run_cutoff) == (trec_measure, trec_key, cutoff)


def test_every_measure_is_one_pytrec_eval_knows():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    by_trec = [m for m in MEASURES.values() if m.by_trec_eval]
    assert [m.name for m in MEASURES.values() if not m.by_trec_eval] == ["Judged@10"]
    evaluator = pytrec_eval.RelevanceEvaluator({"q": {"d": 1}}, {m.trec_measure for m in by_trec})
    values = evaluator.evaluate({"q": {"d": 1.0}})["q"]
    assert {m.trec_key for m in by_trec} <= set(values)


def test_resolve_keeps_order_and_drops_repeats():
    assert [m.name for m in resolve(["MRR", "nDCG@10", "MRR"])] == ["MRR", "nDCG@10"]
    assert [m.name for m in resolve()] == list(DEFAULT_MEASURES)


def test_resolve_refuses_unknown_and_empty():
    with pytest.raises(ValueError) as info:
        resolve(["ndcg@10"])
    assert str(sorted(MEASURES)) in str(info.value)
    with pytest.raises(ValueError, match="at least one"):
        resolve([])
