"""What an Evaluation and a Comparison hold and show, checked by hand on the toy example
(``examples/toy/README.md`` says what each query tests)."""

from __future__ import annotations

import re

import math

import pytest

import harness
from harness.evaluation.family import StatsOptions

from tests.harness.api.helpers import TOY, TOY_ARGS, make_family


@pytest.fixture(scope="module")
def toy():
    return harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", **TOY_ARGS)


def test_means_per_class_and_per_query_values_by_hand(toy):
    # reciprocal rank: q1 1 (the grade-2 chunk 3 wins its tie), q2 1 (the chunk before the
    # digest), q3 1/2 (the negative label at rank 1 is non-relevant), q4 0 (unanswered)
    assert toy.per_query["q1"]["MRR"] == 1.0 and toy.per_query["q2"]["MRR"] == 1.0
    assert toy.per_query["q3"]["MRR"] == 0.5 and toy.per_query["q4"]["MRR"] == 0.0
    assert toy.means["all"]["MRR"] == (1 + 1 + 0.5 + 0) / 4
    assert toy.means["lookup"]["MRR"] == (1 + 0.5 + 0) / 3
    assert toy.means["summarize"]["MRR"] == 1.0
    # nDCG@10 of q1: ranks _3 (2), _4 (0), _10 (1) against the ideal 2, 1
    q1 = (2 + 1 / math.log2(4)) / (2 + 1 / math.log2(3))
    assert toy.per_query["q1"]["nDCG@10"] == round(q1, 10)
    assert set(toy.means) == {"lookup", "summarize", "all"}


def test_judgement_counts_and_provenance(toy):
    assert toy.judgements == {
        "queries_in_qrels": 4, "judged_documents": 8, "negative_labels": 1,
        # q1: _3, _10; q2: _7, digest; q3: covid_2_0; q4: ES2006b_5
        "relevant_documents": 6, "run_queries_not_in_qrels": 0,
        "queries_scored": 4, "queries_unanswered": 1, "queries_dropped_unjudgeable": 0}
    assert toy.metric_engine["name"] == "pytrec_eval_terrier"
    assert toy.relevance_policy["binary"] is False and toy.relevance_policy["graded_from"] == "qrels"
    assert toy.tier == "A" and toy.corpora[0]["licence"] == "CC0-1.0"
    assert harness.evaluate(TOY / "run.txt", TOY / "qrels.txt").tier == "B"  # licence unknown
    assert harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", licence="CC0-1.0", tier="B").tier == "B"
    with pytest.raises(ValueError, match="--tier A refused"):
        harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", tier="A")


def test_measures_are_chosen_by_name(toy):
    ev = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", ["MRR", "nDCG@10"])
    # the measures asked for, then Judged@10, which every scored run reports
    assert ev.measures == ("MRR", "nDCG@10", "Judged@10")
    assert harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", "AP").measures == ("AP",
                                                                                  "Judged@10")
    with pytest.raises(ValueError, match="unknown measure 'ndcg'; known measures"):
        harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", ["ndcg"])


def test_data_frames(toy):
    frame = toy.to_dataframe()
    assert list(frame.columns) == ["corpus", "tier", "query_class", "n", *toy.measures,
                                   "queries_unanswered", "queries_dropped_unjudgeable"]
    assert list(frame.query_class) == ["lookup", "summarize", "all"]
    assert list(frame.n) == [3, 1, 4]
    per_query = toy.to_dataframe(per_query=True)
    assert list(per_query.query_id) == ["q1", "q2", "q3", "q4"]
    assert list(per_query.answered) == [True, True, True, False]
    assert list(per_query.MRR) == [1.0, 1.0, 0.5, 0.0]
    assert per_query.MRR.mean() == toy.means["all"]["MRR"]


def test_markdown_is_metrics_md_and_latex_names_its_tier(tmp_path, toy):
    toy.write(tmp_path / "toy")
    assert (tmp_path / "toy" / "metrics.md").read_text() == "# toy\n\n" + toy.to_markdown()
    latex = toy.to_latex(caption="Toy: 4 queries & 1 unanswered", label="tab:toy",
                         measures=["MRR"])
    lines = latex.splitlines()
    assert lines[0] == "% publishable (tier A only)"
    assert r"\caption{Toy: 4 queries \& 1 unanswered}" in lines and r"\label{tab:toy}" in lines
    assert lines[lines.index(r"\toprule") + 1] == r"run & \multicolumn{2}{c}{MRR} \\"
    # MRR over all 4 queries: (1 + 1 + 1/2 + 0) / 4 = 0.625; lookup (q1, q3, q4): 1.5 / 3
    # (no interval: an Evaluation has none, so its column is empty)
    assert r"run & 0.625 &  \\" in lines and r"run & 0.500 &  \\" in lines
    internal = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", corpus="my_corpus")
    assert internal.to_latex().splitlines()[0] == "% INTERNAL: not for publication"
    assert r"Retrieval results on my\_corpus" in internal.to_latex()


def test_html_and_repr(toy):
    html = toy._repr_html_()
    assert html.startswith("<table><caption>run · pytrec_eval_terrier")
    assert "licence tier A: publishable" in html and "<td>0.6250</td>" in html
    assert repr(toy) == "<Evaluation 'run' corpus='toy' tier=A queries=4 nDCG@5=0.6453>"


def test_write_names_the_run_after_its_directory_unless_named(tmp_path, toy):
    toy.write(tmp_path / "arm-a")
    assert harness.load(tmp_path / "arm-a").name == "arm-a"
    toy.named("baseline").write(tmp_path / "arm-b")
    assert harness.load(tmp_path / "arm-b").name == "baseline"


def test_a_bench_directory_loads_with_its_own_metrics_md(tmp_path):
    from harness.cli import main
    from tests.harness.retrieval.tiny import write_qmsum

    corpus = write_qmsum(tmp_path / "qmsum")
    assert main(["bench", "--corpus", f"qmsum:{corpus}", "--mode", "bm25", "--out",
                 str(tmp_path / "bm25"), "--no-warehouse", "--no-progress"]) == 0
    ev = harness.load(tmp_path / "bm25")
    assert ev.measures[-1].startswith("file:") and ev.measures[0] == "nDCG@5"  # the run's order
    ev.write(tmp_path / "copy")
    for name in ("metrics.json", "metrics.md", "per_query.jsonl", "rankings.jsonl", "qrels.jsonl",
                 "queries.jsonl", "calibration.jsonl"):
        assert (tmp_path / "copy" / name).read_bytes() == (tmp_path / "bm25" / name).read_bytes(), name


def test_the_warehouse_helpers_read_in_a_tier_view(tmp_path, toy):
    db = tmp_path / "w.duckdb"
    toy.write(tmp_path / "public", ingest=True, db=db)
    internal_only = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", **{**TOY_ARGS, "licence": None})
    internal_only.write(tmp_path / "private", ingest=True, db=db)
    store = harness.warehouse(db)
    assert store.view == "publishable"
    assert list(store.runs().control_name) == ["public"]
    assert sorted(store.runs(view="internal").control_name) == ["private", "public"]
    rows = store.metric_rows(measures=["MRR"])
    assert list(zip(rows.query_class, rows.value)) == [("lookup", 0.5), ("summarize", 1.0), ("all", 0.625)]
    assert set(harness.warehouse(db, view="internal").metric_rows(measures=["MRR"]).control_name) == \
        {"public", "private"}
    values = store.per_query("public", measures=["MRR"])
    assert dict(zip(values.query_id, values.value)) == {q: v["MRR"] for q, v in toy.per_query.items()}
    assert store.per_query("private", measures=["MRR"], view="publishable").empty
    with pytest.raises(ValueError, match="unknown view 'everything'"):
        harness.warehouse(db, view="everything")


def test_the_api_views_are_the_warehouse_views():
    from harness.api.store import VIEWS
    from warehouse.queries import VIEWS as WAREHOUSE_VIEWS

    assert tuple(VIEWS) == tuple(WAREHOUSE_VIEWS)


def test_compare_defaults_are_the_intervals_command_defaults():
    import inspect

    from harness.cli import build_parser, _available

    args = build_parser(_available()).parse_args(["intervals", "x"])
    options = StatsOptions()
    assert (args.seed, args.resamples, args.permutations, args.confidence, args.alpha, args.method) == \
        (options.seed, options.resamples, options.permutations, options.confidence, options.alpha,
         options.method)
    defaults = {k: p.default for k, p in inspect.signature(harness.compare).parameters.items()}
    assert (defaults["seed"], defaults["resamples"], defaults["permutations"], defaults["confidence"],
            defaults["alpha"], defaults["method"]) == \
        (options.seed, options.resamples, options.permutations, options.confidence, options.alpha,
         options.method)


def test_comparison_tables_and_what_the_gold_set_could_resolve(tmp_path):
    import numpy as np

    qrels, runs = make_family(tmp_path, queries=20)
    result = harness.compare(runs, qrels, ["MRR", "nDCG@10"], resamples=500, licence="CC0-1.0")
    frame = result.to_dataframe()
    # three systems x (the two measures asked for + Judged@10, which every run reports)
    assert len(frame) == 3 * 3 and set(frame.system) == {"bm25", "dense", "hybrid"}
    control = frame[frame.control]
    assert control.p.isna().all() and control.delta.isna().all()
    row = frame[(frame.system == "dense") & (frame.measure == "MRR")].iloc[0]
    ctl = np.array([v["MRR"] for _, v in sorted(result.evaluations["bm25"].per_query.items())])
    arm = np.array([v["MRR"] for _, v in sorted(result.evaluations["dense"].per_query.items())])
    d = arm - ctl
    assert row.delta == round(d.mean(), 10) and row.n == 20
    assert math.isclose(row.sd_delta, np.std(d, ddof=1), rel_tol=1e-12)
    # (z_0.975 + z_0.8) sd / sqrt(n) = (1.959964 + 0.841621) sd / sqrt(20)
    assert math.isclose(row.mde, 2.8015852 * np.std(d, ddof=1) / math.sqrt(20), rel_tol=1e-6)
    assert 0 < row.power_at_delta < 1 and row.queries_needed >= 2
    assert row.family_size == 2 and row.verdict in {"significant", "not significant",
                                                    "cannot be significant"}
    latex = result.to_latex(caption="Three systems", measures=["MRR"])
    assert latex.splitlines()[0] == "% publishable (tier A only)"
    # the control's delta cell is a dash; the legend names the control
    assert re.search(r"\nbm25 & [^\n]*& \{--\} &", latex) and "\ndense & " in latex
    assert "from the control (bm25)" in latex
    assert result._repr_html_().startswith("<table><caption>against bm25 · Holm across the 2 arms")
    assert repr(result) == "<Comparison control='bm25' arms=['dense', 'hybrid'] tier=A seed=0>"


def test_an_arm_that_wins_on_every_query_is_starred(tmp_path):
    """An oracle run (every relevant document first) against a run that puts them last: the
    paired test is significant after Holm, and the table marks it."""
    qrels, runs = make_family(tmp_path, queries=20)
    judged = {}
    for line in qrels.read_text().splitlines():
        q, _, d, r = line.split()
        judged.setdefault(q, {})[d] = int(r)
    oracle = {q: {d: float(r) for d, r in docs.items()} for q, docs in judged.items()}
    worst = {q: {d: float(-r) for d, r in docs.items()} for q, docs in judged.items()}
    result = harness.compare({"worst": worst, "oracle": oracle}, qrels, ["MRR"], resamples=200)
    row = result.comparisons["rows"][-1]
    assert (row["arm"], row["query_class"], row["improved"], row["worsened"]) == ("oracle", "all", 20, 0)
    # 20 discordant queries all improved: Monte Carlo p = (b + 1) / (N + 1); none of the
    # seeded 10,000 sign vectors is all +1 or all -1 (b = 0), so p = 1 / 10001, its floor
    assert row["p"] == round(1 / 10001, 10) and row["verdict"] == "significant"
    # the oracle's MRR is 1 on every query: the best (bold), its delta marked significant
    assert re.search(r"\noracle & \\bfseries 1\.000 & [^\n]*& \+\d\.\d{3}\$\^\{\*\}\$",
                     result.to_latex())


def test_a_delta_over_different_queries_carries_no_stored_test(tmp_path):
    """An arm whose claim says it scored 10 queries against a control that scored 20 (runs
    ingested from elsewhere; :func:`harness.compare` itself scores every run on one qrels):
    the stored test of the 20-query family does not hold for this pair, so the export's
    delta has no interval, p or mark, as the warehouse joins a test only when the counts
    agree."""
    import copy

    from harness.api.comparison import Comparison

    qrels, runs = make_family(tmp_path, queries=20)
    result = harness.compare(runs, qrels, ["MRR"], resamples=200)
    dense = copy.deepcopy(result.evaluations["dense"])
    for row in dense._doc["rows"]:  # noqa: SLF001 (the claim as ingested from elsewhere)
        row["n"] = 10
    mixed = Comparison({"bm25": result.evaluations["bm25"], "dense": dense}, "bm25",
                       result.intervals, result.comparisons, result.resolution,
                       result.options)
    rows = mixed.export(measures=["MRR"]).rows
    got = rows[(rows["run"] == "dense") & (rows["class"] == "all")].iloc[0]
    ctl = [v["MRR"] for v in result.evaluations["bm25"].per_query.values()]
    arm = [v["MRR"] for v in result.evaluations["dense"].per_query.values()]
    # the delta is still the difference of the two means, each over its 20 queries
    assert got["n"] == 10
    assert got["delta"] == pytest.approx(sum(arm) / 20 - sum(ctl) / 20, abs=1e-9)
    assert math.isnan(got["delta_lower"]) and math.isnan(got["delta_upper"])
    assert math.isnan(got["p_holm"]) and got["mark"] == ""
    # the same runs with the counts the test was made on keep their test
    same = result.export(measures=["MRR"]).rows
    row = same[(same["run"] == "dense") & (same["class"] == "all")].iloc[0]
    assert not math.isnan(row["delta_lower"]) and row["mark"] != ""


def test_comparison_latex_keeps_one_query_class_when_asked(tmp_path):
    """``to_latex(query_class=...)`` (the argument callers of the earlier table passed)
    keeps that class only, as ``warehouse export --class`` does."""
    qrels, runs = make_family(tmp_path, queries=20)
    classes = tmp_path / "classes.tsv"
    classes.write_text("".join(f"q{i:02d}\t{'lookup' if i < 12 else 'summarize'}\n"
                               for i in range(20)))
    result = harness.compare(runs, qrels, ["MRR"], resamples=200, query_classes=classes)
    rows = result.export(measures=["MRR"], query_class="lookup").rows
    assert set(rows["class"]) == {"lookup"} and list(rows["n"]) == [12, 12, 12]
    dense = rows[rows["run"] == "dense"].iloc[0]
    lookup = [v["MRR"] for q, v in result.evaluations["dense"].per_query.items()
              if int(q[1:]) < 12]
    assert dense["value"] == pytest.approx(sum(lookup) / 12, abs=1e-9)
    one = result.to_latex(query_class="lookup", measures=["MRR"])
    every = result.to_latex(measures=["MRR"])
    assert "summarize" not in one and "lookup" in one
    assert "summarize" in every and "lookup" in every
    with pytest.raises(ValueError, match="unknown class 'nope'"):
        result.to_latex(query_class="nope")
