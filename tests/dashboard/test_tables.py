"""The dashboard's data shaping and number formatting, without streamlit: hand-made
inputs, hand-derived outputs."""

from __future__ import annotations


import pandas as pd
import pytest

from dashboard import formatting as f
from dashboard import tables


def test_values_intervals_and_deltas_are_formatted_like_the_methodology_tables():
    assert f.fmt(0.12344) == "0.1234" and f.fmt(None) == "–" and f.fmt(float("nan")) == "–"
    assert f.fmt_interval(0.1234, 0.11, 0.14) == "0.1234 [0.11, 0.14]"
    # an interval narrower than 0.02 keeps 4 decimals, or its bounds would collapse
    assert f.fmt_interval(0.5, 0.495, 0.505) == "0.5000 [0.4950, 0.5050]"
    assert f.fmt_interval(0.5, None, None) == "0.5000"
    assert f.fmt_signed(-0.00001) == "+0.0000" and f.fmt_signed(0.01) == "+0.0100"
    assert f.fmt_delta(0.02, 0.01, 0.03, "significant") == "+0.0200 [+0.0100, +0.0300] *"
    assert f.fmt_delta(-0.02, None, None, "cannot be significant") == "-0.0200 floor"
    assert f.fmt_delta(0.0, None, None, None) == "+0.0000"
    assert [f.mark(v) for v in ("significant", "not significant", "cannot be significant",
                                None, float("nan"))] == ["*", "n.s.", "floor", "", ""]
    assert f.fmt_p(0.25) == "0.25" and f.fmt_p(0.0001234) == "1.23e-04"


def test_run_labels_number_repeated_names_in_order_never_by_hash():
    runs = pd.DataFrame({"run_id": ["a" * 64, "b" * 64, "c" * 64],
                         "control_name": ["ctl", "arm", "ctl"]})
    assert f.run_labels(runs) == {"a" * 64: "ctl (1)", "b" * 64: "arm", "c" * 64: "ctl (2)"}


def test_outcome_counts_per_class():
    pair = pd.DataFrame({
        "query_class": ["lookup", "lookup", "lookup", "summarize", None],
        "value_a": [0.5, 0.5, 0.5, 0.2, 0.1],
        "value_b": [0.7, 0.5, 0.1, None, 0.3],
    })
    pair["delta"] = pair["value_b"] - pair["value_a"]
    counts = tables.outcome_counts(pair).set_index("class")
    columns = ["queries", "win", "tie", "loss", "missing"]
    assert counts.loc["lookup", columns].tolist() == [3, 1, 1, 1, 0]
    assert counts.loc["summarize", ["queries", "missing"]].tolist() == [1, 1]
    assert counts.loc["(no class)", "win"] == 1
    assert counts.loc["all", columns].tolist() == [5, 2, 1, 1, 1]
    # mean delta over the answered lookup queries: (0.2 + 0 - 0.4) / 3
    assert counts.loc["lookup", "mean Δ"] == pytest.approx((0.2 + 0.0 - 0.4) / 3)


def test_latency_bands_span_each_arms_repeated_runs():
    latency = pd.DataFrame({"control_name": ["a", "a", "a", "b"],
                            "p50": [10.0, 12.0, 11.0, 5.0], "p95": [20.0, 30.0, 25.0, 9.0],
                            "p99": [40.0, 35.0, 50.0, 9.5]})
    bands = tables.latency_bands(latency).set_index(["arm", "percentile"])
    assert bands.loc[("a", "p95"), ["runs", "low", "median", "high"]].tolist() == \
        [3, 20.0, 25.0, 30.0]
    assert bands.loc[("b", "p50"), ["runs", "low", "high"]].tolist() == [1, 5.0, 5.0]


def test_methodology_table_puts_each_delta_beside_its_value():
    rows = pd.DataFrame({
        "run_id": ["c", "c", "x", "x"], "query_class": ["lookup", "all"] * 2,
        "measure": ["nDCG@10"] * 4, "value": [0.3, 0.35, 0.4, 0.45],
        "lower": [0.1, 0.2, None, 0.3], "upper": [0.5, 0.5, None, 0.6]})
    deltas = pd.DataFrame({"run_id": ["x", "x"], "query_class": ["lookup", "all"],
                           "measure": ["nDCG@10"] * 2, "delta": [0.1, 0.1],
                           "delta_lower": [None, 0.05], "delta_upper": [None, 0.15],
                           "verdict": [None, "significant"], "paired": [True, False],
                           "comparable": [True, True], "not_comparable_because": ["", ""],
                           "control_n": [3, 6], "n": [3, 5]})
    table = tables.methodology_table(rows, ["nDCG@10"], {"c": "control", "x": "arm"}, deltas, "c",
                                     tables.BY_MEASURE)
    # the all class first
    assert list(table.columns) == ["run", "all · nDCG@10", "all · nDCG@10 Δ",
                                   "lookup · nDCG@10", "lookup · nDCG@10 Δ"]
    arm = table.set_index("run").loc["arm"]
    assert arm["lookup · nDCG@10"] == "0.4000" and arm["all · nDCG@10"] == "0.4500 [0.30, 0.60]"
    assert arm["lookup · nDCG@10 Δ"] == "+0.1000"
    assert arm["all · nDCG@10 Δ"] == "+0.1000 [+0.0500, +0.1500] * (unpaired: n 6 vs 5)"
    assert table.set_index("run").loc["control", "all · nDCG@10 Δ"] == "control"


def test_arms_from_deltas_keep_runs_paired_on_both_corpora():
    deltas = pd.DataFrame({
        "run_id": ["r1", "r1", "r2", "r2", "r3"], "corpus": ["a", "b", "a", "b", "a"],
        "delta": [0.1, -0.2, 0.0, 0.0, 0.3], "tier": ["A", "B", "A", "A", "A"],
        "paired": [True, True, True, True, True]})
    arms = tables.arms_from_deltas(deltas, "a", "b", {"r1": "one", "r2": "two"}, "fam")
    assert arms[["arm", "delta_a", "delta_b", "sign", "tier"]].values.tolist() == [
        ["one", 0.1, -0.2, "disagree", "B"], ["two", 0.0, 0.0, "inert", "A"]]
    unpaired = deltas.assign(paired=[True, False, True, True, True])
    assert tables.arms_from_deltas(unpaired, "a", "b", {}, "fam")["run_id"].tolist() == ["r2"]


def test_a_delta_between_runs_that_measured_differently_is_never_marked():
    rows = pd.DataFrame({"run_id": ["c", "x"], "query_class": ["all", "all"],
                         "measure": ["nDCG@10"] * 2, "value": [0.3, 0.45],
                         "lower": [None, None], "upper": [None, None]})
    because = ("relevance_policy differs: the two files judge relevance differently; "
               "retrieval.granularity differs: 'chunk' vs 'file'")
    deltas = pd.DataFrame({"run_id": ["x"], "query_class": ["all"], "measure": ["nDCG@10"],
                           "delta": [0.15], "delta_lower": [0.1], "delta_upper": [0.2],
                           "verdict": ["significant"], "paired": [True], "comparable": [False],
                           "not_comparable_because": [because], "control_n": [6], "n": [6]})
    table = tables.methodology_table(rows, ["nDCG@10"], {"c": "control", "x": "arm"}, deltas, "c",
                                     tables.BY_MEASURE)
    cell = table.set_index("run").loc["arm", "all · nDCG@10 Δ"]
    assert cell == ("not comparable (relevance_policy differs: the two files judge relevance "
                    "differently, +1 more)")
    assert "*" not in cell and "0.15" not in cell  # neither the mark nor the number
    # agreement arms are built from comparable deltas only
    both = pd.DataFrame({"run_id": ["x", "x"], "corpus": ["a", "b"], "delta": [0.1, 0.2],
                         "tier": ["A", "A"], "paired": [True, True],
                         "comparable": [False, False]})
    assert tables.arms_from_deltas(both, "a", "b", {}, "fam").empty


def _rows(run_ids, classes, values, lowers, uppers, measure="nDCG@10"):
    return pd.DataFrame({"run_id": run_ids, "query_class": classes, "measure": [measure] *
                         len(run_ids), "value": values, "lower": lowers, "upper": uppers})


def test_measures_as_columns_with_classes_as_row_groups_all_first():
    rows = pd.concat([
        _rows(["c", "c", "x", "x"], ["lookup", "all"] * 2, [0.3, 0.35, 0.4, 0.45],
              [0.1, 0.2, 0.2, 0.3], [0.5, 0.5, 0.6, 0.6]),
        _rows(["c", "c", "x", "x"], ["lookup", "all"] * 2, [0.5, 0.6, 0.7, 0.8],
              [None] * 4, [None] * 4, measure="MRR")])
    deltas = pd.DataFrame({"run_id": ["x"] * 4, "query_class": ["lookup", "all"] * 2,
                           "measure": ["nDCG@10", "nDCG@10", "MRR", "MRR"],
                           "delta": [0.1, 0.1, 0.2, 0.2], "delta_lower": [None] * 4,
                           "delta_upper": [None] * 4, "verdict": [None] * 4,
                           "paired": [True] * 4, "comparable": [True] * 4,
                           "not_comparable_because": [""] * 4, "control_n": [3] * 4,
                           "n": [3] * 4})
    table = tables.methodology_table(rows, ["nDCG@10", "MRR"], {"c": "control", "x": "arm"},
                                     deltas, "c")
    assert list(table.columns) == ["run", "class", "nDCG@10", "nDCG@10 Δ", "MRR", "MRR Δ"]
    assert table[["run", "class"]].values.tolist() == [
        ["control", "all"], ["arm", "all"], ["control", "lookup"], ["arm", "lookup"]]
    assert table.iloc[1].tolist() == ["arm", "all", "0.4500 [0.30, 0.60]", "+0.1000",
                                      "0.8000", "+0.2000"]
    assert table.iloc[0]["MRR Δ"] == "control"


def test_no_control_line_in_a_corpus_the_control_has_no_rows_on():
    rows = _rows(["x", "y"], ["all", "all"], [0.4, 0.5], [None, None], [None, None])
    # deltas of another corpus (the page filters by corpus; none here)
    deltas = pd.DataFrame(columns=["run_id", "query_class", "measure", "delta", "delta_lower",
                                   "delta_upper", "verdict", "paired", "comparable",
                                   "not_comparable_because", "control_n", "n"])
    for pivot in tables.PIVOTS:
        table = tables.methodology_table(rows, ["nDCG@10"], {"c": "control", "x": "arm",
                                                             "y": "other"}, deltas, "c", pivot)
        assert table["run"].tolist() == ["arm", "other"]
        assert not any("Δ" in c for c in table.columns)


def test_intervals_share_one_precision_within_a_table():
    # one interval is narrower than 0.02: every interval of the table gets 4 decimals
    rows = _rows(["x", "y"], ["all", "all"], [0.4, 0.5], [0.3, 0.495], [0.5, 0.505])
    table = tables.methodology_table(rows, ["nDCG@10"], {"x": "a", "y": "b"}, None, None)
    assert table["nDCG@10"].tolist() == ["0.4000 [0.3000, 0.5000]", "0.5000 [0.4950, 0.5050]"]
    wide = _rows(["x", "y"], ["all", "all"], [0.4, 0.5], [0.3, 0.4], [0.5, 0.6])
    table = tables.methodology_table(wide, ["nDCG@10"], {"x": "a", "y": "b"}, None, None)
    assert table["nDCG@10"].tolist() == ["0.4000 [0.30, 0.50]", "0.5000 [0.40, 0.60]"]
