"""The dashboard's Migration page through ``streamlit.testing.v1.AppTest``: decisions with
their intervals, the tier view hiding a tier-B corpus, the thresholds always shown, and
guidance (not a traceback) when nothing is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
PAGE = ("migration.py", "Migration", ":material/swap_horiz:")


@pytest.fixture
def app(monkeypatch):
    """An AppTest of app.py with the Migration page registered (``dashboard.PAGES`` patched for
    the test, so the page runs inside the real app: sidebar tier switch included)."""
    import dashboard as pages
    from streamlit.testing.v1 import AppTest

    if PAGE[0] not in [p[0] for p in pages.PAGES]:
        monkeypatch.setattr(pages, "PAGES", [*pages.PAGES, PAGE])
    monkeypatch.chdir(REPO)

    def make(db):
        monkeypatch.setenv("HARNESS_WAREHOUSE", str(db))
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
        at.run()
        return at

    return make


def _open(at, view):
    at.radio(key="tier_view").set_value(view).run()
    at.switch_page("pages/migration.py").run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def filled(rotation_report, truncation_report, tmp_path_factory):
    from warehouse import ingest_document

    db = tmp_path_factory.mktemp("migration-page") / "wh.duckdb"
    ingest_document(rotation_report[1] / "migration.json", db_path=db)
    secret = json.loads((truncation_report[1] / "migration.json").read_text(encoding="utf-8"))
    secret["corpus"] = secret["corpora"][0]["name"] = "secretcorpus"
    secret["tier"] = secret["corpora"][0]["tier"] = "B"
    ingest_document(secret, db_path=db)
    return db, rotation_report[0], secret


def test_decisions_are_listed_with_their_intervals(app, filled):
    db, rotation, secret = filled
    at = _open(app(db), "internal")
    assert [t.value for t in at.title] == ["Migration"]
    table = at.dataframe[0].value
    assert len(table) == 4 and set(table["tier"]) == {"A", "B"}
    row = table[(table["corpus"] == "synthetic") & (table["eval tier"] == "T1")].iloc[0]
    gain = rotation["tiers"]["T1"]["gain"]
    assert row["decision"] == "equivalent_drop_in" and row["headline"] == "yes"
    assert row["upgrade gain"].startswith(f"{gain['estimate']:.4f} [")
    arr = secret["tiers"]["T1"]["arr"]
    shown = table[(table["corpus"] == "secretcorpus") & (table["eval tier"] == "T1")].iloc[0]
    assert shown["ARR"].startswith(f"{arr['estimate']:.4f} [") and shown["unadapted"] == "n/a"
    thresholds = at.dataframe[1].value
    assert dict(zip(thresholds["threshold"], thresholds["value"]))["gain_floor"] == 1.03


def test_the_publishable_view_hides_the_tier_b_corpus(app, filled):
    db, _, _ = filled
    at = _open(app(db), "publishable")
    table = at.dataframe[0].value
    assert set(table["tier"]) == {"A"} and "secretcorpus" not in table.to_csv()
    assert len(table) == 2


def test_an_empty_warehouse_shows_guidance(app, tmp_path):
    from warehouse import migrate

    db = tmp_path / "empty.duckdb"
    migrate(db)
    at = _open(app(db), "internal")
    assert any("holds no runs yet" in i.value for i in at.info)  # the fill command
    assert len(at.dataframe) == 1          # the thresholds are still shown
    at = _open(app(tmp_path / "missing.duckdb"), "internal")
    assert not at.error or all("Traceback" not in e.value for e in at.error)
    assert any("no warehouse" in i.value.lower() for i in at.info)
