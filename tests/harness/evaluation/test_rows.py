"""harness.evaluation.rows: rows per corpus x class (and pooled), per-query rows, Markdown tables."""

from __future__ import annotations

import pytest

from harness.claims.metrics import pooled_name
from harness.evaluation.rows import (QueryMeta, build_rows, compare_table, metrics_table, per_query_rows)
from harness.evaluation.scoring import score

QRELS = {
    "a1": {"x": 1}, "a2": {"y": 1}, "a3": {"z": 0},  # corpus a: a3 unjudgeable
    "b1": {"x": 1}, "b2": {"y": 1},                   # corpus b: b2 unanswered
}
RUN = {"a1": {"x": 1.0}, "a2": {"n": 2.0, "y": 1.0}, "a3": {"z": 1.0}, "b1": {"n": 2.0, "x": 1.0}}
META = {"a1": QueryMeta("a", "lookup"), "a2": QueryMeta("a", "summarize"), "a3": QueryMeta("a", "lookup"),
        "b1": QueryMeta("b", "lookup"), "b2": QueryMeta("b", None)}
TIERS = {"a": "A", "b": "B"}


def rows():
    return build_rows(score(QRELS, RUN, ["MRR"]), META, TIERS)


def test_rows_per_corpus_class_all_and_pooled():
    got = {(r["corpus"], r["query_class"]): r for r in rows()}
    assert list(got) == [("a", "lookup"), ("a", "summarize"), ("a", "all"),
                         ("b", "lookup"), ("b", "all"), ("a+b", "all")]
    assert got[("a", "lookup")] == {"corpus": "a", "tier": "A", "query_class": "lookup", "n": 1,
                                    "metrics": {"MRR": 1.0}, "queries_unanswered": 0,
                                    "queries_dropped_unjudgeable": 1}
    assert got[("a", "summarize")]["metrics"] == {"MRR": 1 / 2}
    assert got[("a", "all")]["metrics"] == {"MRR": (1 + 1 / 2) / 2}
    assert got[("a", "all")]["queries_dropped_unjudgeable"] == 1
    assert got[("b", "all")]["metrics"] == {"MRR": (1 / 2 + 0) / 2}  # b2 scores 0, counted
    assert got[("b", "all")]["queries_unanswered"] == 1 and got[("b", "lookup")]["n"] == 1
    pooled = got[("a+b", "all")]
    assert pooled["tier"] == "B"  # the most restrictive of A and B
    assert pooled["n"] == 4 and pooled["metrics"] == {"MRR": (1 + 1 / 2 + 1 / 2 + 0) / 4}
    assert pooled_name(["b", "a", "b"]) == "a+b"


def test_rows_refuse_unknown_queries_and_tiers():
    with pytest.raises(ValueError, match="no corpus/class known"):
        build_rows(score(QRELS, RUN, ["MRR"]), {"a1": META["a1"]}, TIERS)
    with pytest.raises(ValueError, match="no licence tier for corpus 'b'"):
        build_rows(score(QRELS, RUN, ["MRR"]), META, {"a": "A"})


def test_per_query_rows():
    result = score(QRELS, RUN, ["MRR", "P@5"])
    out = per_query_rows(result, META, TIERS)
    assert [(r["query_id"], r["measure"]) for r in out] == [
        ("a1", "MRR"), ("a1", "P@5"), ("a2", "MRR"), ("a2", "P@5"),
        ("b1", "MRR"), ("b1", "P@5"), ("b2", "MRR"), ("b2", "P@5")]
    b2 = [r for r in out if r["query_id"] == "b2"]
    assert all(r["value"] == 0.0 and r["answered"] is False and r["tier"] == "B" for r in b2)


def test_metrics_table():
    text = metrics_table(rows()[:1], ["MRR"])
    assert text == ("| corpus | tier | class | n | MRR | unanswered | dropped |\n"
                    "|---|---|---|---|---|---|---|\n"
                    "| a | A | lookup | 1 | 1.0000 | 0 | 1 |\n")


def _doc(rows, engine=None):
    return {"rows": rows, "metric_engine": engine or {"name": "e", "version": "1"},
            "relevance_policy": {"binary": False}, "corpora": [{"name": "a", "sha256": "x"}]}


def _row(cls, n, ndcg, mrr):
    return {"corpus": "a", "query_class": cls, "n": n, "metrics": {"nDCG@10": ndcg, "MRR": mrr}}


def test_compare_table_deltas_and_differing_n():
    control = _doc([_row("lookup", 4, 0.5, 0.25), _row("all", 6, 0.4, 0.5), _row("gone", 1, 0.1, 0.1)])
    candidate = _doc([_row("lookup", 4, 0.625, 0.25), _row("all", 7, 0.375, 0.75)])
    text = compare_table(control, candidate, ["nDCG@10", "MRR"])
    lines = text.splitlines()
    assert lines[0] == "| corpus | class | n | nDCG@10 control | nDCG@10 candidate | Δ nDCG@10 | Δ MRR |"
    assert lines[2] == "| a | lookup | 4 | 0.5000 | 0.6250 | +0.1250 | +0.0000 |"
    assert lines[3] == "| a | all | 6 vs 7 (differs) | 0.4000 | 0.3750 | -0.0250 | +0.2500 |"
    assert "- a / all: different query counts; the delta is not paired" in lines
    assert "- a / gone: only in the control" in lines


def test_compare_flags_different_measurements():
    control = _doc([_row("all", 1, 0.5, 0.5)])
    candidate = _doc([_row("all", 1, 0.5, 0.5)], engine={"name": "e", "version": "2"})
    candidate["relevance_policy"] = {"binary": True}
    candidate["corpora"] = [{"name": "a", "sha256": "y"}]
    text = compare_table(control, candidate, ["nDCG@10"])
    assert "- metric_engine.version differs: '1' vs '2'" in text
    assert "- relevance_policy differs" in text
    assert "- corpus a: sha256 differs ('x' vs 'y')" in text
    assert "differs" not in compare_table(control, control, ["nDCG@10"])
