"""The answer scoring engine: EM / partial / answered, worked out by hand."""

from __future__ import annotations

import pytest

from harness.studies.answers.answer import Answer
from harness.studies.answers.grading import (MEASURES, AnswerPolicy, GoldAnswer, answer_rows, evaluate,
                                     gold_from_query, normalise_name, score_answer)
from harness.core.records import Query

EXACT = AnswerPolicy()


def gold(value, kind, query_id="q1", corpus="c", rule="R") -> GoldAnswer:
    return GoldAnswer(query_id, corpus, "aggregation", rule, f"question {query_id}", kind, value)


def test_a_declined_query_stays_in_the_mean():
    """Two gold queries, one answered right, one declined: EM is (1 + 0) / 2, not the 1.0 a
    mean over the answered queries would read."""
    golds = [gold(3, "count", "q1"), gold(5, "count", "q2")]
    answers = {("c", "q1"): Answer(3, "m"), ("c", "q2"): Answer(None, "declined: x")}
    records = evaluate(golds, answers, EXACT, {"c": "A"})
    (row, _) = answer_rows(records)
    assert row["rule"] == "all" and row["n"] == 2 and row["unanswered"] == 1
    assert row["EM"] == (1 + 0) / 2
    assert row["answered"] == (1 + 0) / 2
    answered_only = [r["EM"] for r in records if r["answered"]]
    assert sum(answered_only) / len(answered_only) == 1.0 != row["EM"]


def test_a_query_with_no_answer_at_all_is_unanswered_and_counted():
    golds = [gold(3, "count", "q1"), gold(["a"], "file_set", "q2")]
    records = evaluate(golds, {("c", "q1"): Answer(3, "m")}, EXACT, {"c": "A"})
    assert [r["answered"] for r in records] == [1.0, 0.0]
    assert records[1]["mechanism"] == "no answer returned" and records[1]["predicted"] is None
    assert answer_rows(records)[0]["EM"] == 1 / 2


def test_answers_outside_the_gold_set_are_ignored():
    records = evaluate([gold(1, "count")], {("c", "q1"): Answer(1, "m"),
                                            ("c", "stray"): Answer(9, "m")}, EXACT, {"c": "A"})
    assert [r["query_id"] for r in records] == ["q1"]


def test_counts_are_exact_unless_a_tolerance_is_given():
    g = gold(7, "count")
    assert score_answer(g, 7, EXACT) == (1.0, 1.0)
    assert score_answer(g, 6, EXACT) == (0.0, 0.0)  # off by one is wrong, no partial credit
    assert score_answer(g, 8, AnswerPolicy(count_tolerance=1)) == (1.0, 1.0)
    assert score_answer(g, 9, AnswerPolicy(count_tolerance=1)) == (0.0, 0.0)


def test_file_set_em_is_equality_and_partial_is_f1():
    g = gold(["f1", "f2", "f3", "f4"], "file_set")
    assert score_answer(g, ["f4", "f3", "f2", "f1"], EXACT) == (1.0, 1.0)
    # 3 of 4 gold files plus one wrong: precision 3/4, recall 3/4 -> F1 3/4
    em, partial = score_answer(g, ["f1", "f2", "f3", "x"], EXACT)
    assert em == 0.0 and partial == pytest.approx(2 * (3 / 4) * (3 / 4) / (3 / 4 + 3 / 4))
    # a subset is wrong: 2 of 4, nothing extra -> P 1, R 1/2, F1 2/3
    em, partial = score_answer(g, ["f1", "f2"], EXACT)
    assert em == 0.0 and partial == pytest.approx(2 * 1 * 0.5 / (1 + 0.5))
    assert score_answer(g, [], EXACT) == (0.0, 0.0)
    assert score_answer(gold([], "file_set"), [], EXACT) == (1.0, 1.0)
    # --answer-set-credit exact collapses partial onto EM
    assert score_answer(g, ["f1", "f2", "f3", "x"], AnswerPolicy(set_credit="exact")) == (0.0, 0.0)


def test_speaker_answers_need_both_fields_and_partial_counts_fields():
    g = gold({"speaker": "Dana Whitfield", "count": 4}, "speaker")
    assert score_answer(g, {"speaker": "Dana Whitfield", "count": 4}, EXACT) == (1.0, 1.0)
    # casefolded, whitespace collapsed: the only tolerance
    assert score_answer(g, {"speaker": "  dana   WHITFIELD ", "count": 4}, EXACT) == (1.0, 1.0)
    assert score_answer(g, {"speaker": "Dana Whitfield", "count": 3}, EXACT) == (0.0, 1 / 2)
    assert score_answer(g, {"speaker": "Priya Raman", "count": 4}, EXACT) == (0.0, 1 / 2)
    assert score_answer(g, {"speaker": "Priya Raman", "count": 1}, EXACT) == (0.0, 0 / 2)
    assert score_answer(g, {"speaker": "D. Whitfield", "count": 4}, EXACT) == (0.0, 1 / 2)
    assert normalise_name("A\tB  c") == "a b c"


def test_an_answer_of_the_wrong_kind_scores_zero():
    assert score_answer(gold(2, "count"), ["a", "b"], EXACT) == (0.0, 0.0)
    assert score_answer(gold(["a"], "file_set"), 1, EXACT) == (0.0, 0.0)
    assert score_answer(gold(1, "count"), True, EXACT) == (0.0, 0.0)


def test_rows_per_rule_and_pooled_rows_take_the_most_restrictive_tier():
    golds = [gold(1, "count", "q1", "a", "R3"), gold(2, "count", "q2", "a", "R5"),
             gold(3, "count", "q1", "b", "R3")]
    answers = {("a", "q1"): Answer(1, "m"), ("a", "q2"): Answer(0, "m"),
               ("b", "q1"): Answer(3, "m")}
    rows = answer_rows(evaluate(golds, answers, EXACT, {"a": "A", "b": "B"}))
    got = {(r["corpus"], r["rule"]): r for r in rows}
    assert sorted(got) == [("a", "R3"), ("a", "R5"), ("a", "all"), ("a+b", "R3"), ("a+b", "R5"),
                           ("a+b", "all"), ("b", "R3"), ("b", "all")]
    assert got[("a", "all")]["EM"] == (1 + 0) / 2 and got[("a", "all")]["tier"] == "A"
    assert got[("a+b", "all")]["EM"] == (1 + 0 + 1) / 3 and got[("a+b", "all")]["tier"] == "B"
    assert got[("a+b", "R3")]["n"] == 2 and got[("b", "R3")]["tier"] == "B"
    assert all(r["scored_on"] == "answer" and r["query_class"] == "aggregation" for r in rows)
    # no measure name of the answer table is a retrieval measure or column
    from harness.core.measures import DEFAULT_MEASURES
    assert not set(MEASURES) & set(DEFAULT_MEASURES)
    assert not set(rows[0]) & {"metrics", "queries_unanswered", "queries_dropped_unjudgeable"}


def test_sets_are_emitted_sorted():
    records = evaluate([gold(["a", "b", "c"], "file_set")],
                       {("c", "q1"): Answer({"c", "b", "a", "z"}, "m")}, EXACT, {"c": "A"})
    assert records[0]["predicted"] == ["a", "b", "c", "z"]
    assert records[0]["partial"] == pytest.approx(2 * 3 / (4 + 3))


def test_gold_from_query_validates_and_sorts():
    q = Query("q", "Which?", "aggregation", "c", scored_on="answer", answer=["b", "a"],
              extra=(("rule", "R4-list-files"),))
    g = gold_from_query(q)
    assert (g.kind, g.gold, g.rule) == ("file_set", ["a", "b"], "R4-list-files")
    with pytest.raises(ValueError, match=r"query 'q'.*field 'answer'"):
        gold_from_query(Query("q", "?", "aggregation", "c", scored_on="answer", answer=None))
    with pytest.raises(ValueError, match="field 'scored_on'"):
        gold_from_query(Query("q", "?", "lookup", "c", answer=1))


def test_policy_refuses_bad_parameters_and_is_written_out():
    with pytest.raises(ValueError, match="non-negative"):
        AnswerPolicy(count_tolerance=-1)
    with pytest.raises(ValueError, match=r"\['exact', 'f1'\]"):
        AnswerPolicy(set_credit="half")
    doc = AnswerPolicy(2, "exact").to_dict()
    assert doc["count_tolerance"] == 2 and doc["set_credit"] == "exact"
    assert "collapsed onto EM" in doc["file_set"]


def test_duplicate_gold_ids_within_a_corpus_are_refused():
    with pytest.raises(ValueError, match="repeat"):
        evaluate([gold(1, "count"), gold(2, "count")], {}, EXACT, {"c": "A"})
