"""Results and Compare built for publishing (issue #17), through AppTest on the fixture
warehouse: the withheld note, no phantom control row, the ``all`` class first, the exports
holding the screen's numbers, Compare's counts.  Expected values are worked out by hand
from the fixture's per-query values (:mod:`tests.pages.fixture_warehouse`)."""

from __future__ import annotations

import io

import pandas as pd
import pytest

from dashboard import tables
from tests.pages.conftest import download_bytes


def goto(at, page: str, view: str):
    at.run()
    at.radio(key="tier_view").set_value(view).run()
    at.switch_page(f"pages/{page}").run()
    return at


def _tables(at) -> dict[str, pd.DataFrame]:
    """The per-corpus tables under their subheadings (in page order)."""
    heads = [s.value for s in at.subheader if s.value != "Export"]
    frames = [f.value for f in at.dataframe][:len(heads)]
    return dict(zip(heads, frames))


def test_the_publishable_view_says_what_it_withholds(app):
    at = goto(app(), "results.py", "publishable")
    notes = [i.value for i in at.info]
    # one run (the later control, whose index also held secretcorpus) and one corpus
    assert any(n.startswith("1 run / 1 corpus withheld (not tier A): secretcorpus") for n in notes), notes
    at.radio(key="tier_view").set_value("internal").run()
    assert not any("withheld" in i.value for i in at.info)


def test_all_first_measures_as_columns_and_no_phantom_control_row(app, fixture_warehouse):
    ids = fixture_warehouse["ids"]
    at = goto(app(), "results.py", "internal")
    at.selectbox(key="results_control_internal").set_value(ids["control"]).run()
    shown = _tables(at)
    pub = shown["pub"]
    assert list(pub.columns[:4]) == ["run", "class", "nDCG@10", "nDCG@10 Δ"]
    assert pub["class"].tolist()[0] == "all"
    assert list(dict.fromkeys(pub["class"])) == ["all", "lookup", "summarize"]
    # the first control never ran on secretcorpus: no control line, no delta column there
    secret = shown["secretcorpus"]
    assert not any("Δ" in c for c in secret.columns)
    # internally the two control runs are "control (1)" (the chosen control, pub and alt
    # only) and "control (2)" (all three corpora)
    assert set(secret["run"]) == {"control (2)"}
    assert any("has no row on secretcorpus" in c.value for c in at.caption)


def _md_cells(text: str) -> dict[tuple, list[str]]:
    out = {}
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split(" | ")]
    for line in lines[1:]:
        cells = [c.strip().replace("\\[", "[").replace("\\]", "]")
                 for c in line.strip()[2:-2].split(" | ")]
        row = dict(zip(head, cells))
        out[(row["run"], row["corpus"], row["class"])] = row
    return out


def test_the_exports_hold_the_screens_numbers_with_a_control(app, fixture_warehouse):
    ids = fixture_warehouse["ids"]
    at = goto(app(), "results.py", "publishable")
    at.selectbox(key="results_control_publishable").set_value(ids["control"]).run()
    shown = _tables(at)
    buttons = {b.label: b for b in at.get("download_button")}
    md = _md_cells(download_bytes(buttons["Download Markdown"]).decode())
    csv = pd.read_csv(io.BytesIO(download_bytes(buttons["Download CSV"])))
    compared, marks = 0, set()
    for corpus in ("pub", "alt"):
        for row in shown[corpus].to_dict("records"):
            exported = md[(row["run"], corpus, row["class"])]
            # the page's default measures: nDCG@10 (MRR is not among them)
            assert list(shown[corpus].columns) == ["run", "class", "nDCG@10", "nDCG@10 Δ"]
            for column in ("nDCG@10", "nDCG@10 Δ"):
                assert exported[column] == row[column], (corpus, row["run"], column)
                compared += 1
            line = csv[(csv["run"] == row["run"]) & (csv["corpus"] == corpus)
                       & (csv["class"] == row["class"])].iloc[0]
            # the screen's "0.4250 [0.31, 0.55]" is the CSV's value and bounds, rounded
            # (then the best's ★ or a tied run's †, the Markdown's marks too)
            value = row["nDCG@10"].split(" [")[0].split(" ")[0]
            assert f"{line['nDCG@10']:.4f}" == value
            if row["nDCG@10 Δ"] not in ("control", "–"):
                assert f"{line['nDCG@10 delta']:+.4f}" == row["nDCG@10 Δ"].split(" ")[0]
                last = row["nDCG@10 Δ"].rsplit(" ", 1)[-1]
                mark = last if last in ("*", "n.s.", "floor") else ""  # no stored test: none
                exported_mark = line["nDCG@10 mark"]
                assert ("" if pd.isna(exported_mark) else exported_mark) == mark
                marks.add(mark)
    # 6 publishable runs (control, arm-one, arm-two, served twice, steady) x 3 classes x
    # 2 corpora x 2 cells; arm-one and arm-two have stored tests against the control
    assert compared == 6 * 3 * 2 * 2
    assert "floor" in marks and "" in marks


def test_compare_prints_wins_ties_and_losses(app):
    at = goto(app(), "compare.py", "internal")
    metrics = {m.label: m.value for m in at.metric}
    # control -> arm-one on nDCG@10 over pub and alt: all 12 queries improve
    assert metrics["B better (win)"] == "12" and metrics["tie"] == "0"
    assert metrics["B worse (loss)"] == "0"


def test_compare_prints_the_paired_test_its_interval_and_verdict(app):
    at = goto(app(), "compare.py", "internal")
    heads = [s.value for s in at.subheader]
    frame = at.dataframe[heads.index("Paired test per class (B against A)")].value
    every = frame.set_index("class").loc["all"]
    # control -> arm-one on nDCG@10: 12 queries, 6 up by 0.1 and 6 by 0.05, all discordant:
    # exact p = 2 / 2^12; delta (6 x 0.1 + 6 x 0.05) / 12 = 0.075
    assert every["n"] == 12 and every["Δ"] == pytest.approx((6 * 0.1 + 6 * 0.05) / 12)
    assert every["p"] == pytest.approx(2 / 2 ** 12) and every["verdict"] == "significant"
    lower = float(every["interval"].strip("[]").split(",")[0])
    assert 0 < lower <= 0.075 and every["confidence"] == "95%"
    for _, row in frame.iterrows():  # no interval contradicts its verdict
        lo, hi = (float(v) for v in row["interval"].strip("[]").split(","))
        assert (lo > 0 or hi < 0) == (row["verdict"] == "significant")


def test_the_scatter_leaves_a_margin_round_its_points(app):
    import json

    at = goto(app(), "compare.py", "internal")
    (spec,) = [json.loads(e.proto.spec) for e in at.get("vega_lite_chart")]
    domains = [layer["encoding"]["x"]["scale"]["domain"] for layer in spec["layer"]]
    # the values lie in [0, 1]; 6% of that width on each side, so a circle at (0, 0) (where
    # QMSum's ties sit) is drawn inside the plot, not over its axes
    assert domains == [pytest.approx([0 - 0.06 * 1, 1 + 0.06 * 1])] * 2


def test_coinciding_queries_become_one_circle_of_their_count():
    pair = pd.DataFrame({"corpus": ["c"] * 5, "query_id": ["q1", "q2", "q3", "q4", "q5"],
                         "query_class": ["a", "a", "b", None, "a"],
                         "value_a": [0.0, 0.0, 0.0, 0.5, 0.2],
                         "value_b": [0.0, 0.0, 0.0, 0.25, None]})
    pair["delta"] = pair["value_b"] - pair["value_a"]
    points = tables.scatter_points(pair).set_index(["value_a", "value_b"])
    assert len(points) == 2  # q5 lacks B's value: not drawn
    assert points.loc[(0.0, 0.0), "queries"] == 3
    assert points.loc[(0.0, 0.0), "outcome"] == "tie"
    assert points.loc[(0.0, 0.0), "classes"] == "a, b"
    assert points.loc[(0.5, 0.25), "outcome"] == "B worse"
    assert tables.square_domain(points.reset_index()) == (0.0, 1.0)


def test_the_overview_says_what_the_publishable_view_withholds(app):
    at = goto(app(), "overview.py", "publishable")
    notes = [i.value for i in at.info]
    # as on Results: the later control run, whose index also held secretcorpus
    assert any(n.startswith("1 run / 1 corpus withheld (not tier A): secretcorpus") for n in notes), notes
    at.radio(key="tier_view").set_value("internal").run()
    assert not any("withheld" in i.value for i in at.info)


def test_the_best_is_starred_and_runs_tied_with_it_carry_a_dagger(app, fixture_warehouse):
    """pub, all, nDCG@10 with control, arm-one and arm-two chosen: arm-two (0.35 + 0.1 =
    0.45) is the best; the control (-0.1 on all 6 queries: p = 2 / 2^6 = 0.03125, Holm
    2 x 0.03125 = 0.0625) and arm-one (-0.05 on the 3 even queries: p = 2 / 2^3 = 0.25) are
    both tied with it at 0.05."""
    ids = fixture_warehouse["ids"]
    at = goto(app(), "results.py", "publishable")
    at.multiselect(key="results_runs_publishable").set_value(
        [ids["control"], ids["arm-one"], ids["arm-two"]]).run()
    pub = _tables(at)["pub"]
    cells = {r["run"]: r["nDCG@10"] for r in pub.to_dict("records") if r["class"] == "all"}
    assert cells["arm-two"].endswith(tables.BEST_MARK)
    assert cells["control"].endswith(tables.TIED_MARK)
    assert cells["arm-one"].endswith(tables.TIED_MARK)


def test_results_has_no_copy_of_the_withheld_note():
    # one implementation: the page calls dashboard.common.withheld_note, defines none
    import ast
    from pathlib import Path

    tree = ast.parse(Path("pages/results.py").read_text(encoding="utf-8"))
    defined = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    assert "withheld_note" not in defined
    assert "common.withheld_note" in calls


def test_compare_lists_the_worst_changes_first_with_their_query_text(app):
    at = goto(app(), "compare.py", "internal")
    assert at.subheader[-1].value == "The queries that changed most (B against A)"
    frame = at.dataframe[-1].value
    # control -> arm-one on nDCG@10 over pub and alt: +0.05 on even queries, +0.1 on odd
    # ones, so the even queries come first (smallest change), ids in corpus order
    assert list(frame["Δ"]) == sorted(frame["Δ"])
    first = frame.iloc[0]
    assert first["Δ"] == pytest.approx(0.05) and int(first["query"][1:]) % 2 == 0
    assert first["query text"] == f"{first['corpus']} question {first['query']}"
    assert all(t == f"{c} question {q}"
               for c, q, t in zip(frame["corpus"], frame["query"], frame["query text"]))


def test_the_publishable_compare_never_shows_a_tier_b_query_text(app):
    at = goto(app(), "compare.py", "publishable")
    shown = " ".join(str(f.value.to_dict()) for f in at.dataframe)
    assert "secretcorpus" not in shown and "pub question" in shown
