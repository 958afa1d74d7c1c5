"""The Compare page's per-query table: sorted by change, worst first, with moved documents."""

from __future__ import annotations

import pandas as pd

from dashboard.tables import query_changes


def _ranks(run: dict) -> pd.DataFrame:
    return pd.DataFrame([dict(corpus="c", query_id=q, rank=i, doc_id=d, score=1.0 / i)
                         for q, docs in run.items() for i, d in enumerate(docs, 1)])


def test_queries_are_sorted_worst_first_with_the_documents_that_moved():
    pair = pd.DataFrame({"corpus": "c", "query_class": "x", "tier": "A",
                         "query_id": ["q1", "q2", "q3", "q4"],
                         "value_a": [0.5, 0.9, 0.2, 0.3], "value_b": [0.6, 0.1, 0.2, None]})
    pair["delta"] = pair["value_b"] - pair["value_a"]
    a = _ranks({"q1": ["d1", "d2", "d3"], "q2": ["d1", "d2"], "q3": ["d9"]})
    b = _ranks({"q1": ["d2", "d4", "d1"], "q2": ["d5", "d6", "d7", "d8", "d1"], "q3": ["d9"]})
    out = query_changes(pair, a, b, depth=3)
    # deltas: q1 +0.1, q2 -0.8, q3 0, q4 missing: q2, q3, q1, then q4
    assert list(out["query_id"]) == ["q2", "q3", "q1", "q4"]
    rows = out.set_index("query_id")
    # B's top 3 of q2 is d5, d6, d7 (d1 fell to rank 5): three entered, both of A's left
    assert rows.loc["q2", "entered B's top 3"] == "d5, d6, d7"
    assert rows.loc["q2", "left A's top 3"] == "d1, d2"
    assert rows.loc["q1", "entered B's top 3"] == "d4" and rows.loc["q1", "left A's top 3"] == "d3"
    assert rows.loc["q3", "entered B's top 3"] == "" and rows.loc["q3", "left A's top 3"] == ""


def test_a_long_list_of_moved_documents_is_counted_not_listed():
    pair = pd.DataFrame({"corpus": ["c"], "query_class": ["x"], "tier": ["A"],
                         "query_id": ["q"], "value_a": [1.0], "value_b": [0.0]})
    pair["delta"] = pair["value_b"] - pair["value_a"]
    out = query_changes(pair, _ranks({"q": ["a"]}), _ranks({"q": list("bcdefg")}), depth=10)
    assert out.loc[0, "entered B's top 10"] == "b, c, d (+3 more)"


def test_each_query_shows_its_text_from_either_run():
    pair = pd.DataFrame({"corpus": "c", "query_class": "x", "tier": "A",
                         "query_id": ["q1", "q2", "q3"],
                         "value_a": [0.5, 0.9, 0.2], "value_b": [0.6, 0.1, 0.2]})
    pair["delta"] = pair["value_b"] - pair["value_a"]
    # A stored q1's text, B q1's (a different copy: A's is kept) and q2's; no run stored q3's
    texts = pd.DataFrame({"corpus": ["c", "c", "c"], "query_id": ["q1", "q1", "q2"],
                          "text": ["what did A ask", "a later copy", "budget of the remote"]})
    ranks = _ranks({"q1": ["d1"]})
    out = query_changes(pair, ranks, ranks, texts=texts)
    assert list(out.columns[:5]) == ["corpus", "query_class", "tier", "query_id", "text"]
    assert dict(zip(out["query_id"], out["text"])) == {
        "q2": "budget of the remote", "q3": "", "q1": "what did A ask"}
