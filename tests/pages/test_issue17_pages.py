"""The pages as a team preparing a paper reads them (issue 17): a purpose under every title,
a glossary, Agreement's labels and small-n caveat, Latency's axes, legend, whiskers and
notes, certificates named by arm and corpus with their whole "why", an Overview that leads
with runs per corpus, verdicts and certificates due, Corpora rows that say where they
differ, and a zero-byte or garbage warehouse file answered with the fix command.  Expected
values are counted by hand from the fixture (``fixture_warehouse.py``)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from tests.pages.helpers import DATA_PAGES, PAGE_FILES, frame_with, goto, static_table


def table_with(at, column: str) -> pd.DataFrame:
    """The first static table (``st.table``) or dataframe with ``column``."""
    frames = [static_table(at, i) for i in range(len(at.table))] + [f.value for f in
                                                                       at.dataframe]
    for frame in frames:
        if column in frame.columns:
            return frame
    raise AssertionError(f"no table with a column {column!r}")


def specs(at) -> list[str]:
    return [e.proto.spec for e in at.get("vega_lite_chart")]


def all_text(at) -> str:
    parts = [e.value for kind in ("markdown", "caption", "info", "warning", "subheader")
             for e in getattr(at, kind)]
    parts += [e.label for e in at.expander]
    return "\n".join(str(p) for p in parts)


@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_states_its_purpose_right_under_its_title(app, page):
    at = goto(app(), page, "internal")
    first, second = (at.main.children[i] for i in (0, 1))
    assert first.type == "title", page
    assert second.type == "caption" and len(second.value) > 30, page
    assert "\n" not in second.value.strip(), page


def test_the_glossary_defines_every_term_the_pages_use(app):
    at = goto(app(), "glossary.py", "publishable")
    table = static_table(at).set_index("term")
    terms = set(table.index)
    assert {"Holm", "p floor", "BCa", "e-value", "conformal set", "fixed K", "ARR", "T0 / T1",
            "tier A / B / C"} <= terms
    meaning = table.loc["p floor"].iloc[0]
    assert "2^(1−k)" in meaning


# --------------------------------------------------------------------------- agreement


def test_agreement_labels_each_point_with_its_arm(app):
    at = goto(app(), "agreement.py", "publishable")
    spec = json.loads(specs(at)[0])
    text_layers = [layer for layer in spec["layer"] if
                   (layer.get("mark") or {}).get("type") == "text"]
    assert text_layers and text_layers[0]["encoding"]["text"]["field"] == "arm"


def test_agreement_warns_when_a_coefficient_rests_on_fewer_than_five_arms(app):
    at = goto(app(), "agreement.py", "publishable")
    # the stored document: pooled over two arms, each family one arm
    warning = " ".join(w.value for w in at.warning)
    assert "pooled (n = 2)" in warning and "fusion (n = 1)" in warning
    assert "2 / 4! = 0.083" in warning
    # computed from a picked control: five arms (arm-one, arm-two, served, steady,
    # served-2): no caveat
    at.radio(key="agreement_mode_publishable").set_value("a control run picked here").run()
    assert frame_with(at, "Kendall tau-b").iloc[0]["arms"] == 5
    assert not [w for w in at.warning if "Too few arms" in w.value]


def test_agreement_offers_no_source_choice_without_a_stored_document(app, fixture_warehouse,
                                                                     tmp_path):
    from warehouse import ingest_results

    db = tmp_path / "runs-only.duckdb"
    for name in ("control", "arm-one", "arm-two"):
        ingest_results(fixture_warehouse["dirs"][name], db)
    at = goto(app(db), "agreement.py", "publishable")
    assert not [r for r in at.radio if r.label == "Families and controls from"]
    assert "Coefficients (computed here, not stored)" in [s.value for s in at.subheader]
    # the fixture warehouse has documents: the choice is there
    at = goto(app(), "agreement.py", "publishable")
    assert [r for r in at.radio if r.label == "Families and controls from"]


# --------------------------------------------------------------------------- latency


def test_one_arm_over_time_has_a_tick_per_run_with_its_date_and_time(app):
    at = goto(app(), "latency.py", "internal")
    assert at.selectbox(key="latency_arm_internal").value == "control"
    (spec,) = [json.loads(s) for s in specs(at) if "run created (UTC)" in s]
    axis = [layer["encoding"]["x"]["axis"] for layer in spec["layer"]
            if "x" in layer["encoding"]][0]
    assert axis["format"] == "%Y-%m-%d %H:%M:%S"
    # the two control runs: 2026-01-05 09:00 and 09:10 (fixture START, +10 minutes)
    assert [(v["hours"], v["minutes"]) for v in axis["values"]] == [(9, 0), (9, 10)]
    assert {(v["year"], v["month"], v["date"]) for v in axis["values"]} == {(2026, 1, 5)}


def test_latency_legends_draw_opaque_swatches(app):
    at = goto(app(), "latency.py", "internal")
    band = [json.loads(s) for s in specs(at) if "lowest (ms)" in s][0]
    legends = [layer["encoding"]["color"]["legend"] for layer in band["layer"]]
    assert all(legend["symbolOpacity"] == 1 and legend["symbolSize"] >= 150
               for legend in legends)


def test_the_box_plot_says_what_its_whiskers_are(app):
    at = goto(app(), "latency.py", "internal")
    box = [json.loads(s) for s in specs(at) if "boxplot" in s][0]
    assert box["mark"]["extent"] == "min-max"
    assert any("whiskers reach the fastest and the slowest sample" in c.value
               for c in at.caption)


def test_latency_notes_runs_timed_before_blas_was_held_to_one_thread(app, fixture_warehouse,
                                                                     tmp_path):
    from tests.pages.fixture_warehouse import control_values, retrieval, write_run
    from warehouse import ingest_results

    at = goto(app(), "latency.py", "internal")
    table = frame_with(at, "p95").set_index("run_id")
    ids = fixture_warehouse["ids"]
    # the fixture's samples record no BLAS limit: every hybrid run carries the note, the
    # bm25 arm (arm-two) has no dense matmul and none
    assert table.loc[ids["control"], "note"].startswith("timed before the harness held BLAS")
    assert table.loc[ids["arm-two"], "note"] == ""
    assert any("cannot be compared on these numbers" in w.value for w in at.warning)
    # a run timed under the limit carries no note
    db = tmp_path / "blas.duckdb"
    shutil.copy(fixture_warehouse["db"], db)
    out = write_run(tmp_path / "timed", "timed", control_values(["pub"]), minutes=30,
                    retrieval=retrieval(), latency=[1.0, 2.0])
    info = json.loads((out / "runinfo.json").read_text())
    info["retrieval_latency_ms"]["blas_threads"] = 1
    (out / "runinfo.json").write_text(json.dumps(info))
    run_id = ingest_results(out, db).run_id
    at = goto(app(db), "latency.py", "internal")
    assert frame_with(at, "p95").set_index("run_id").loc[run_id, "note"] == ""


# --------------------------------------------------------------------------- certificates


def test_certificates_are_named_by_arm_and_corpus_with_the_whole_why(app, fixture_warehouse):
    at = goto(app(), "certificates.py", "internal")
    table = table_with(at, "certificate").set_index("certificate")
    # coverage certificates of control, served and steady (alpha 0.2 and 0.01), on alt+pub
    assert sorted(table.index) == ["control · alt+pub · coverage α 0.2",
                                   "served · alt+pub · coverage α 0.2",
                                   "steady · alt+pub · coverage α 0.01",
                                   "steady · alt+pub · coverage α 0.2"]
    from warehouse import queries

    ids = set(queries.certificates("internal", db_path=fixture_warehouse["db"])["certificate_id"])
    assert len(ids) == 4
    shown = all_text(at) + table.to_csv()
    assert not [i for i in ids if i[:12] in " ".join(e.label for e in at.expander)]
    # the why in full: the expired one lists both changes (nothing cut)
    why = table.loc["control · alt+pub · coverage α 0.2", "why"]
    assert "arm.size: 48 -> 12" in why and "secretcorpus" in why
    assert not table["why"].str.startswith(("valid", "expired", "alarm", "degenerate")).any()
    assert "valid: valid" not in shown and "expired: expired" not in shown
    assert "**valid**: valid" not in " ".join(m.value for m in at.markdown)


def test_a_state_is_not_said_twice():
    from dashboard.certificate_status import why_text

    assert why_text("valid", "valid: fingerprint unchanged") == "fingerprint unchanged"
    assert why_text("degenerate", "degenerate: degenerate: no quantile") == "no quantile"
    assert why_text("valid", "valid") == "no further detail"
    assert why_text("alarm", "a rate is ruled out") == "a rate is ruled out"


# --------------------------------------------------------------------------- overview


def test_overview_leads_with_runs_per_corpus_verdicts_and_certificates_due(app):
    at = goto(app(), "overview.py", "internal")
    subheaders = [s.value for s in at.subheader]
    assert subheaders[:3] == ["Runs per corpus and tier", "Latest comparisons",
                              "Certificates due for recalibration"]
    per_corpus = frame_with(at, "arms").set_index("corpus")
    # seven runs over alt and pub; only the later control run also over secretcorpus
    assert per_corpus["runs"].to_dict() == {"alt": 7, "pub": 7, "secretcorpus": 1}
    assert per_corpus.loc["secretcorpus", "tier"] == "B"
    tests = frame_with(at, "verdict")
    # arm-one and arm-two against control, class all, nDCG@10, on alt, pub and alt+pub
    assert len(tests) == 6 and set(tests["arm"]) == {"arm-one", "arm-two"}
    assert set(tests["verdict"]) <= {"significant", "not significant", "cannot be significant"}
    due = table_with(at, "certificate").set_index("certificate")["status"].to_dict()
    assert due == {"control · alt+pub · coverage α 0.2": "expired",
                   "served · alt+pub · coverage α 0.2": "alarm"}
    at.radio(key="tier_view").set_value("publishable").run()
    per_corpus = frame_with(at, "arms").set_index("corpus")
    assert per_corpus["runs"].to_dict() == {"alt": 6, "pub": 6}
    due = table_with(at, "certificate").set_index("certificate")["status"].to_dict()
    assert due == {"served · alt+pub · coverage α 0.2": "alarm"}


def test_overview_counts_per_query_values_in_the_current_view(app):
    at = goto(app(), "overview.py", "internal")
    values = {m.label: m.value for m in at.metric}
    # two measures per query; six runs over alt + pub (12 queries), the later control run
    # over alt + pub + secretcorpus (16 queries): 6 x 24 + 32 = 176
    assert values["Per-query values"] == "176"
    assert "Documents" not in values and "Claim documents ingested" in values
    at.radio(key="tier_view").set_value("publishable").run()
    assert {m.label: m.value for m in at.metric}["Per-query values"] == "144"


def test_overview_keeps_schema_and_change_stamp_in_an_expander(app):
    at = goto(app(), "overview.py", "internal")
    assert "Schema version" not in [m.label for m in at.metric]
    (expander,) = [e for e in at.expander if e.label == "Warehouse schema and change stamp"]
    text = " ".join(m.value for m in expander.markdown)
    assert "Schema version" in text and "Change stamp" in text


# --------------------------------------------------------------------------- corpora


def test_identical_looking_corpus_rows_show_the_column_that_differs_first(app, fixture_warehouse,
                                                                          tmp_path):
    from tests.pages.fixture_warehouse import CORPORA, control_values, query_class, retrieval
    from tests.warehouse.builders import build_results
    from warehouse import ingest_results

    db = tmp_path / "two-pubs.duckdb"
    shutil.copy(fixture_warehouse["db"], db)
    values = control_values(["pub"])
    # the same corpus, re-fetched: only the checksum's last character differs from the
    # fixture's ("2" * 64), past what a table cell shows
    out = build_results(
        tmp_path / "refetched", values, corpora={"pub": CORPORA["pub"]},
        classes={q: query_class(c, int(q[1:])) for c, q in values}, control_name="refetched",
        retrieval=retrieval(),
        corpus_fields={"pub": {"sha256": "2" * 63 + "9", "files": 3, "chunks": 12,
                               "evidence": "licence MIT declared for pub (test fixture)"}},
        runinfo_fields={"command": "fixture", "created_at": "2026-01-05T10:00:00"})
    ingest_results(out, db)
    at = goto(app(db), "corpora.py", "internal")
    table = frame_with(at, "differs in")
    assert list(table.columns[:3]) == ["name", "differs in", "sha256"]
    pubs = table[table["name"] == "pub"]
    assert len(pubs) == 2 and set(pubs["differs in"]) == {"sha256"}
    assert set(table.loc[table["name"] != "pub", "differs in"]) == {""}
    # one declaration per corpus: no such column
    at = goto(app(), "corpora.py", "internal")
    assert "differs in" not in frame_with(at, "licence").columns


# --------------------------------------------------------------------------- broken files


@pytest.mark.parametrize("content", [b"", b"not a database " * 500],
                         ids=["zero-byte", "garbage"])
@pytest.mark.parametrize("page", DATA_PAGES)
def test_a_file_that_is_not_a_warehouse_shows_the_fix_command(app, tmp_path, page, content):
    db = tmp_path / "broken.duckdb"
    db.write_bytes(content)
    at = goto(app(db), page, "internal")
    assert not at.exception
    assert any("the dashboard cannot read it" in e.value for e in at.error), page
    code = "\n".join(c.value for c in at.code)
    assert f"mv {db} {db}.broken" in code and "make demo" in code
    assert db.read_bytes() == content  # never touched


def test_a_static_table_shows_hostile_text_as_text():
    # st.table reads Markdown in its cells: every cell and heading must come out inert
    from streamlit.testing.v1 import AppTest

    from tests.markdown_check import HOSTILE, assert_inert

    def script():
        import pandas as pd

        from dashboard.common import static_table
        from tests.markdown_check import HOSTILE

        static_table(pd.DataFrame({"why": list(HOSTILE), HOSTILE[0]: range(len(HOSTILE))}),
                     wrap=["why"])

    at = AppTest.from_function(script).run()
    assert not at.exception
    table = at.table[0].value
    for cell, value in zip(table.iloc[:, 0], HOSTILE):
        assert_inert(cell, value)
    assert_inert(str(table.columns[1]), HOSTILE[0])


def _layers(spec: dict) -> list[dict]:
    out = []
    for layer in spec.get("layer", [spec]):
        out += _layers(layer) if "layer" in layer else [layer]
    return out


def test_agreement_axes_have_whole_titles_a_colour_legend_and_a_tick_at_zero(app):
    import json

    at = goto(app(), "agreement.py", "publishable")
    spec = json.loads(specs(at)[0])
    points = next(layer for layer in _layers(spec) if "shape" in layer.get("encoding", {}))
    enc = points["encoding"]
    for axis in ("x", "y"):
        assert enc[axis]["axis"]["titleLimit"] == 0  # 0: the title is never cut
        assert 0.0 in enc[axis]["axis"]["values"]
        assert "control" not in enc[axis]["title"]  # the long explanation is in the caption
    assert enc["color"]["legend"]["titleLimit"] == 0 and enc["color"]["title"] == "family (colour)"
    # no layer switches the shared colour legend off
    assert all((layer.get("encoding", {}).get("color") or {}).get("legend", {}) is not None
               for layer in _layers(spec))


def test_latency_axes_are_logarithmic(app):
    import json

    at = goto(app(), "latency.py", "internal")
    scales = [enc.get(axis, {}).get("scale", {}).get("type")
              for spec in specs(at) for layer in _layers(json.loads(spec))
              for enc in [layer.get("encoding", {})] for axis in ("x", "y")
              if enc.get(axis, {}).get("field") in ("ms", "low")]
    assert scales and set(scales) == {"log"}
