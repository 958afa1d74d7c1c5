"""Markdown output escapes HTML and inline markup in every value (issue #16).

The review's repro: the Markdown export passed raw ``<script>`` and ``<img onerror>``
through.  Every renderer of Markdown here is fed hostile names and its output rendered by an
independent CommonMark implementation (``tests.markdown_check``): no active element comes out
and each name is shown as it was.
"""

from __future__ import annotations

import copy

import pytest

from harness.core.markdown import md_escape
from tests.markdown_check import HOSTILE, assert_inert, render


@pytest.mark.parametrize("value", HOSTILE)
def test_md_escape_leaves_nothing_a_renderer_would_run_or_format(value):
    escaped = md_escape(value)
    assert "<" not in escaped and ">" not in escaped
    for where in (f"| {escaped} | x |\n|---|---|\n| {escaped} | y |\n",  # a table cell
                  f"# {escaped}\n", f"- {escaped}\n", f"text {escaped} text\n"):
        assert_inert(where, value)


def test_md_escape_flattens_line_breaks_and_keeps_plain_names_plain():
    assert md_escape("a\nb\r\nc") == "a b  c"
    assert md_escape("hybrid-rrf-60") == "hybrid-rrf-60"
    assert md_escape("beir-nq+qmsum") == "beir-nq+qmsum"
    assert md_escape("a|b") == "a\\|b"
    # an underscore inside a word never opens emphasis (CommonMark): left as it is
    assert md_escape("relevance_policy min_max") == "relevance_policy min_max"
    assert md_escape("_em_ x_ _y") == "\\_em\\_ x\\_ \\_y"
    assert_inert(f"| {md_escape('a_b_c _em_ __s__')} |\n|---|\n", "a_b_c _em_ __s__")
    # a value cannot open a block at a line start: it is always inline
    assert "\n" not in md_escape("x\n# heading\n- item")


def test_the_metrics_and_compare_tables_escape_every_name():
    from harness.evaluation.rows import compare_table, metrics_table

    rows = [{"corpus": name, "tier": "A", "query_class": name, "n": 2, "metrics": {"MRR": 0.5},
             "queries_unanswered": 0, "queries_dropped_unjudgeable": 0} for name in HOSTILE]
    assert_inert(metrics_table(rows, ["MRR"]), *HOSTILE)
    control = {"rows": rows, "corpora": [], "metric_engine": {}, "relevance_policy": {}}
    candidate = copy.deepcopy(control)
    candidate["rows"] = [{**r, "n": 3} for r in rows]
    text = compare_table(control, candidate, ["MRR"])
    assert "different query counts" in text
    assert_inert(text, *HOSTILE)


def test_the_statistics_tables_escape_every_name():
    from harness.stats.markdown import comparisons_table, gate_summary, intervals_table

    intervals = {"confidence": 0.95, "seed": 0, "resamples": 10, "rows": [
        {"corpus": name, "tier": "A", "query_class": name, "measure": name, "n": 3,
         "estimate": 0.5, "lower": 0.4, "upper": 0.6, "method": name} for name in HOSTILE]}
    assert_inert(intervals_table(intervals), *HOSTILE)
    comparisons = {"confidence": 0.95, "alpha": 0.05, "permutations": 10, "seed": 0,
                   "exact_max_discordant": 16, "interval_method": "bca",
                   "control": {"name": HOSTILE[0]}, "rows": [
                       {"corpus": name, "query_class": name, "measure": name, "arm": name, "n": 3,
                        "delta": 0.1, "delta_lower": -0.1, "delta_upper": 0.3,
                        "delta_confidence": 0.95, "unadjusted_lower": 0.0,
                        "unadjusted_upper": 0.2, "discordant": 2,
                        "improved": 2, "worsened": 0, "p": 0.5, "p_holm": 0.5, "p_floor": 0.25,
                        "verdict": "not significant"} for name in HOSTILE]}
    assert_inert(comparisons_table(comparisons), *HOSTILE)
    assert_inert(intervals_table(intervals, {**comparisons, "rows": []}), *HOSTILE)

    from harness.stats.gate import GateResult

    for tier in ("A", "B"):
        result = GateResult(policy="point", measure=HOSTILE[1], threshold=0.5, corpus=HOSTILE[0],
                            query_class=HOSTILE[2], verdict="pass", mean=0.7,
                            scored=3, available=3, dropped=0,
                            reason="mean 0.7000 >= threshold 0.5000", extra={"tier": tier})
        text = gate_summary(result, internal=True)
        assert_inert(text, HOSTILE[0], HOSTILE[2], "mean 0.7000 >= threshold 0.5000")


def test_the_agreement_tables_escape_every_name():
    from harness.stats.markdown import agreement_tables

    a, b = HOSTILE[0], HOSTILE[1]
    coefficient = {"value": 0.5, "p": 0.5}
    summary = {"family": HOSTILE[2], "n": 2, "kendall_tau_b": coefficient,
               "spearman": coefficient, "pearson": {**coefficient, "outlier_driven": False},
               "signs": {"agree": 1, "disagree": 0, "inert": 0, "one_sided": 0},
               "winners": {a: {"arm": HOSTILE[3], "delta": 0.1},
                           b: {"arm": HOSTILE[4], "delta": 0.1}, "same": False},
               "delta_range": {a: 0.1, b: 0.2, "ratio": 2.0}}
    doc = {"corpora": [a, b], "measure": HOSTILE[3], "query_class": HOSTILE[4],
           "arms": [{"family": HOSTILE[2], "name": HOSTILE[3], "axis": HOSTILE[4],
                     "deltas": {a: 0.1, b: 0.2}, "sign": "same", "included": True}],
           "families": [summary], "pooled": {**summary, "caveat": "pooled over families"},
           "pearson_note": "Pearson is shown to be distrusted",
           "options": {"dropped": [HOSTILE[3]], "exclude_inert": True},
           "excluded_inert": [HOSTILE[4]]}
    text = agreement_tables(doc)
    assert_inert(text, *HOSTILE)


def test_the_answers_report_escapes_every_name():
    from harness.studies.answers.document import render_markdown
    from tests.warehouse.answers_builders import reference_document

    doc = copy.deepcopy(reference_document())  # its answers are shared with other tests
    names = {"pub": HOSTILE[0], "secretcorpus": HOSTILE[1]}
    for part in ("rows", "floor_rows", "answers"):
        for row in doc[part]:
            row["corpus"] = "+".join(names[c] for c in row["corpus"].split("+"))
    for c in doc["corpora"]:
        c["name"], c["licence"] = names[c["name"]], HOSTILE[2]
    doc["answers"][1]["query_id"] = HOSTILE[3]
    doc["answers"][1]["mechanism"] = HOSTILE[4]
    doc["answers"][1]["predicted"] = [HOSTILE[2], "f2"]
    doc["answerer"]["name"] = HOSTILE[4]
    doc["answerer"]["description"] = HOSTILE[3]
    assert_inert(render_markdown(doc), *HOSTILE)
    assert "<script>" not in render(render_markdown(doc))
