"""Judged@10: the share of the top 10 that the qrels judge, checked against ir_measures."""

from __future__ import annotations

import numpy as np
import pytest

from harness.core.measures import DEFAULT_MEASURES, JUDGED
from harness.evaluation.judged import judged_share
from harness.evaluation.engine import metric_engine_block
from harness.evaluation.scoring import score
from harness.core.measures import resolve


def test_judged_share_by_hand():
    # 12 retrieved, the top 10 holds d1, d3, d5, d7, d9 judged: 5 / 10
    ranked = [f"d{i}" for i in range(1, 13)]
    judged = {"d1", "d3", "d5", "d7", "d9", "d11"}
    assert judged_share(ranked, judged) == 5 / 10
    # four retrieved, three judged: the share is of what was retrieved, 3 / 4
    assert judged_share(["a", "b", "c", "x"], {"a", "b", "c"}) == 3 / 4
    assert judged_share([], {"a"}) == 0.0


def test_score_reports_judged_with_the_default_measures_and_unanswered_is_zero():
    assert JUDGED in DEFAULT_MEASURES
    qrels = {"q1": {"d1": 1, "d2": 0, "d9": 2}, "q2": {"d1": 1}, "q3": {"d4": 1}}
    run = {"q1": {"d1": 3.0, "d3": 2.0, "d2": 1.0}, "q2": {"x": 1.0}}
    result = score(qrels, run)
    # q1: d1 and d2 (label 0 is a judgement) of three retrieved; q2: none; q3 unanswered
    assert [result.per_query[q][JUDGED] for q in ("q1", "q2", "q3")] == [2 / 3, 0.0, 0.0]
    assert result.mean(JUDGED) == pytest.approx((2 / 3 + 0 + 0) / 3)
    engine = metric_engine_block(resolve([JUDGED]))
    assert engine["measures"][JUDGED] == "harness.evaluation.judged (top 10)"


def test_judged_agrees_with_ir_measures_on_random_runs():
    ir_measures = pytest.importorskip("ir_measures")
    rng = np.random.default_rng(3)
    qrels, run = {}, {}
    for q in range(40):
        qid = f"q{q}"
        docs = [f"d{i}" for i in range(60)]
        judged = rng.choice(60, size=int(rng.integers(1, 30)), replace=False)
        qrels[qid] = {docs[i]: int(rng.integers(0, 3)) for i in judged}
        qrels[qid][docs[int(judged[0])]] = 1  # judgeable: at least one relevant
        size = int(rng.integers(1, 25))
        scores = rng.permutation(1000)[:size] / 7.0  # distinct: no tie-order question
        run[qid] = {docs[int(i)]: float(s) for i, s in zip(rng.choice(60, size, replace=False),
                                                             scores)}
    ours = score(qrels, run, [JUDGED]).per_query
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc(
        [ir_measures.Judged @ 10],
        [ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()],
        [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()])}
    assert set(theirs) == set(ours)
    for q in ours:
        assert ours[q][JUDGED] == pytest.approx(theirs[q], abs=1e-12)
    assert len({round(v, 6) for v in theirs.values()}) > 5  # the runs differ in judged share


def test_every_scored_run_reports_judged_even_when_the_measures_omit_it():
    from harness.core.measures import reported
    from harness.evaluation.scored_run import score_run

    assert reported(["MRR"]) == ("MRR", JUDGED)
    assert reported(["MRR", JUDGED, "AP"]) == ("MRR", JUDGED, "AP")
    assert reported(None) == DEFAULT_MEASURES
    # an HTTP system answering outside the qrels: 1 of 4 judged for q1, none for q2
    qrels = {"q1": {"d1": 1, "d2": 0}, "q2": {"d5": 1}}
    run = {"q1": {"x1": 4.0, "d2": 3.0, "x2": 2.0, "x3": 1.0}, "q2": {"y": 1.0}}
    scored = score_run(qrels, run, ["MRR"], corpus="toy", control_name="sys",
                       qrels_sha256="0" * 64, run_sha256="1" * 64, licence="CC0-1.0")
    assert scored.measures == ("MRR", JUDGED)
    assert scored.result is not None
    assert scored.result.per_query["q1"][JUDGED] == 1 / 4
    assert scored.result.per_query["q2"][JUDGED] == 0.0
    assert scored.result.mean(JUDGED) == pytest.approx(1 / 8)
