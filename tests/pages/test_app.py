"""Every page through ``streamlit.testing.v1.AppTest`` on the fixture warehouse
(``fixture_warehouse.py``): no exception in either tier view, the tier view changes the
rows, the publishable download holds no tier-B value, and a missing, empty or busy
warehouse shows the guidance instead of a traceback.  Expected numbers are worked out by
hand from the fixture's per-query values."""

from __future__ import annotations

import csv
import io
import shutil

import pytest

from dashboard.common import VIEWS
from tests.pages.conftest import download_bytes
from tests.pages.helpers import (DATA_PAGES, PAGE_FILES, frame_with, goto, static_table,
                                 table_text)


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("page", PAGE_FILES)
def test_every_page_renders_in_both_views(app, page, view):
    at = goto(app(), page, view)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert len(at.title) == 1 and len(at.dataframe) + len(at.table) >= 1
    assert at.radio(key="tier_view").value == view
    if view == "publishable":
        assert "secretcorpus" not in table_text(at)


def test_switching_the_tier_view_changes_the_rows(app):
    at = goto(app(), "results.py", "publishable")
    assert [s.value for s in at.subheader] == ["alt", "pub", "alt+pub", "Export"]
    publishable = table_text(at)
    at.radio(key="tier_view").set_value("internal").run()
    assert [s.value for s in at.subheader] == ["alt", "pub", "secretcorpus", "alt+pub",
                                               "alt+pub+secretcorpus", "Export"]
    assert "secretcorpus" not in publishable and "secretcorpus" in table_text(at)
    # the overview counts the runs each view can show: 6 of 7 (the later control run has a
    # tier-B corpus in its index)
    at.switch_page("pages/overview.py").run()
    assert at.metric[1].value == "7"
    at.radio(key="tier_view").set_value("publishable").run()
    assert at.metric[1].value == "6"


def _csv_rows(text: str) -> list[dict]:
    # the data rows only (the provenance is its own download)
    return list(csv.DictReader(io.StringIO(text)))


def test_the_publishable_download_holds_no_tier_b_value(app):
    at = goto(app(), "results.py", "publishable")
    buttons = {b.label: b for b in at.get("download_button")}
    assert set(buttons) == {"Download CSV", "Download Markdown", "Download LaTeX",
                            "Download Parquet", "Download provenance"}
    text = download_bytes(buttons["Download CSV"]).decode()
    rows = _csv_rows(text)
    assert rows and {r["tier"] for r in rows} == {"A"}
    assert {r["corpus"] for r in rows} == {"alt", "pub", "alt+pub"}
    for label in buttons:
        content = download_bytes(buttons[label]).decode("utf-8", "replace")
        assert "secretcorpus" not in content and "CC-BY-NC" not in content, label
    # the same download in the internal view does carry the tier-B corpus
    at.radio(key="tier_view").set_value("internal").run()
    internal = download_bytes({b.label: b for b in at.get("download_button")}["Download CSV"])
    assert "secretcorpus" in internal.decode() and "B" in {r["tier"] for r in
                                                          _csv_rows(internal.decode())}


def test_results_against_a_control_show_deltas_intervals_and_holm_marks(app, fixture_warehouse):
    at = goto(app(), "results.py", "publishable")
    at.selectbox(key="results_control_publishable").set_value(
        fixture_warehouse["ids"]["control"]).run()
    at.selectbox(key="results_pivot_publishable").set_value("class × measure columns").run()
    pub = [f.value for f in at.dataframe if "all · nDCG@10 Δ" in f.value.columns][1]
    arm = pub[pub["run"] == "arm-one"].iloc[0]
    # pub, arm-one vs control: +0.1 on queries 1, 3, 5 and +0.05 on 2, 4, 6: mean 0.075;
    # six improved queries: exact p = 2 / 2^6, doubled by Holm over the two arms; arm-two
    # also has six discordant queries on pub, so the family's smallest attainable Holm p is
    # 2 x 2^(1-6) = 0.0625 > 0.05: cannot be significant ("floor")
    cell = arm["all · nDCG@10 Δ"]
    assert cell.startswith("+0.0750 [") and cell.endswith("floor")
    # lookup holds queries 1, 3, 5 only: floor 2^(1-3) = 0.25 > 0.05
    cell = arm["lookup · nDCG@10 Δ"]
    assert cell.startswith("+0.1000") and cell.endswith("floor")
    assert pub[pub["run"].str.startswith("control")].iloc[0]["all · nDCG@10 Δ"] == "control"
    # values carry their stored interval: pub all = mean(0.1 .. 0.6) + 0.075 = 0.35 + 0.075
    assert arm["all · nDCG@10"].startswith("0.4250 [")


def test_compare_counts_wins_ties_and_losses_per_class(app):
    at = goto(app(), "compare.py", "internal")
    counts = frame_with(at, "win").set_index("class")
    # control -> arm-one on nDCG@10: every pub and alt query improves (3 lookup and 3
    # summarize queries in each corpus)
    columns = ["queries", "win", "tie", "loss", "missing"]
    assert counts.loc["lookup", columns].tolist() == [3 + 3, 6, 0, 0, 0]
    assert counts.loc["summarize", columns].tolist() == [6, 6, 0, 0, 0]
    assert counts.loc["all", columns].tolist() == [12, 12, 0, 0, 0]
    at.radio(key="tier_view").set_value("publishable").run()
    counts = frame_with(at, "win").set_index("class")
    assert counts.loc["all", ["queries", "win", "loss"]].tolist() == [12, 12, 0]


def test_agreement_shows_the_stored_coefficients(app):
    at = goto(app(), "agreement.py", "publishable")
    table = frame_with(at, "Kendall tau-b").set_index("family")
    # arm-one moves pub +0.075 and alt +0.075; arm-two pub +0.1 and alt 0: the two arms are
    # ordered oppositely on the two corpora, so tau-b over both is -1
    assert table.loc["pooled", "Kendall tau-b"].startswith("-1.000")
    assert table.loc["pooled", "arms"] == 2
    # one arm per family: undefined, never 0
    assert table.loc["fusion", "Kendall tau-b"] == "undefined"
    assert table.loc["legs", "agree / disagree / inert / one-sided"] == "0 / 0 / 0 / 1"


def test_agreement_without_a_document_uses_a_picked_control(app):
    at = goto(app(), "agreement.py", "publishable")
    at.radio(key="agreement_mode_publishable").set_value("a control run picked here").run()
    assert "Coefficients (computed here, not stored)" in [s.value for s in at.subheader]
    row = frame_with(at, "Kendall tau-b").iloc[0]
    # every other publishable run scored alt and pub with the control's query counts:
    # arm-one, arm-two, served, steady, served-2 (the later control run is tier B)
    assert row["arms"] == 5


def test_certificates_show_each_state_and_why(app):
    at = goto(app(), "certificates.py", "internal")
    table = static_table(at)
    assert sorted(table["status"]) == ["alarm", "degenerate", "expired", "valid"]
    expired = table[table["status"] == "expired"].iloc[0]
    # internally, the control's certificate is judged against the later control run, which
    # changed the request size and added secretcorpus to the index
    assert "arm.size: 48 -> 12" in expired["why"] and "secretcorpus" in expired["why"]
    assert expired["tier"] == "A"
    alarm = table[table["status"] == "alarm"].iloc[0]
    assert alarm["why"].startswith("a bad-event rate <= 0.2 is ruled out")
    at.radio(key="tier_view").set_value("publishable").run()
    # publishable: judged against the newest tier-A run of the arm (the control itself),
    # so it is valid and no "why" names the tier-B corpus
    table = static_table(at)
    assert sorted(table["status"]) == ["alarm", "degenerate", "valid", "valid"]
    assert not table["why"].str.contains("secretcorpus").any()


def test_latency_percentiles_and_bands(app):
    at = goto(app(), "latency.py", "internal")
    table = frame_with(at, "p95")
    assert len(table) == 6
    first = table[table["run"].str.startswith("control")].iloc[0]
    # samples 10, 20, 30, 40: p50 = 25; p95 at position 0.95 * 3 = 2.85 -> 30 + 0.85 * 10
    assert (first["p50"], first["p95"]) == (pytest.approx(25.0), pytest.approx(38.5))
    at.radio(key="tier_view").set_value("publishable").run()
    # every run with latency but the later control run (its index held secretcorpus)
    assert sorted(frame_with(at, "p95")["control_name"]) == ["arm-one", "arm-two", "control",
                                                             "served", "served"]


@pytest.mark.parametrize("page", DATA_PAGES)
def test_a_missing_warehouse_shows_the_guidance(app, tmp_path, page):
    at = goto(app(tmp_path / "absent.duckdb"), page, "publishable")
    assert not at.exception and not at.error
    assert any("no warehouse at" in i.value for i in at.info)
    assert any("make demo" in c.value for c in at.code)
    assert not (tmp_path / "absent.duckdb").exists()


def test_an_empty_warehouse_shows_the_guidance(app, tmp_path):
    from warehouse import migrate

    db = tmp_path / "empty.duckdb"
    migrate(db)
    for page in DATA_PAGES:
        at = goto(app(db), page, "internal")
        assert not at.exception and not at.error, page
        assert any("holds no runs yet" in i.value for i in at.info), page


def test_a_busy_warehouse_shows_a_message_not_a_traceback(app, fixture_warehouse, tmp_path,
                                                          monkeypatch):
    import warehouse.db

    db = tmp_path / "busy.duckdb"
    shutil.copy(fixture_warehouse["db"], db)
    monkeypatch.setattr(warehouse.db, "READ_TIMEOUT_SECONDS", 0.2)
    at = app(db)
    with warehouse.db.connect(db, read_only=False):
        goto(at, "overview.py", "internal")
    assert not at.exception
    assert any("warehouse busy" in w.value for w in at.warning)
    at.run()  # the writer has gone: the page reads again
    assert not at.warning and at.metric[1].value == "7"


def test_a_new_ingest_shows_after_a_rerun(app, fixture_warehouse, tmp_path):
    from tests.pages.fixture_warehouse import control_values, retrieval, write_run
    from warehouse import ingest_results

    db = tmp_path / "live.duckdb"
    shutil.copy(fixture_warehouse["db"], db)
    at = goto(app(db), "overview.py", "internal")
    assert at.metric[1].value == "7"
    out = write_run(tmp_path / "late", "late-arm", control_values(["pub"]), minutes=30,
                    retrieval=retrieval(size=24))
    ingest_results(out, db)
    at.run()
    assert at.metric[1].value == "8"
    assert "late-arm" in table_text(at)
