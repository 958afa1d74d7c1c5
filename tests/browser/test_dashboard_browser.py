"""The dashboard in a real browser: ``streamlit run app.py`` on 127.0.0.1 (a free port) as a
subprocess, driven by headless Chromium through Playwright.

Every page is opened (a screenshot of each lands in ``test-artifacts/dashboard/``), the tier
view is switched, a publishable CSV is downloaded and read, and a run scored by
``python -m harness score`` while the server is up is ingested at once and shows after a
refresh.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dashboard import PAGES

from tests.browser.helpers import (ARTIFACTS, REPO, launched_chromium, served_fixture_warehouse,
                                   wait_settled)

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def browser():
    with launched_chromium() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser):
    """The fixture warehouse served by ``streamlit run app.py``; yields (base url, db, root)."""
    root = tmp_path_factory.mktemp("browser")
    with served_fixture_warehouse(root) as (base, built):
        yield base, built["db"], root


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 2200}, accept_downloads=True)
    tab = context.new_page()
    try:
        yield tab
    finally:
        context.close()


def open_page(tab, base: str, path: str, title: str) -> None:
    tab.goto(f"{base}/{path}")
    tab.get_by_role("heading", name=title, level=1).wait_for(timeout=60_000)
    wait_settled(tab)


def set_view(tab, label: str) -> None:
    tab.locator("[data-testid='stSidebar']").get_by_text(label, exact=True).click()
    wait_settled(tab)


def shot(tab, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    tab.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def no_exception(tab) -> None:
    assert tab.locator("[data-testid='stException']").count() == 0
    assert "Traceback" not in tab.locator("[data-testid='stMain']").inner_text()


def test_every_page_opens_in_both_views(server, page):
    base, _, _ = server
    for view, label in (("publishable", "Publishable (tier A only)"),
                        ("internal", "Internal (every tier; never publish)")):
        open_page(page, base, "", "Overview")
        set_view(page, label)
        for file, title, _ in PAGES:
            path = "" if file == PAGES[0][0] else Path(file).stem
            page.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True).click()
            page.get_by_role("heading", name=title if title != "Agreement" else
                             "Do the corpora agree?", level=1).wait_for(timeout=60_000)
            wait_settled(page)
            assert page.url.rstrip("/").endswith(path)
            no_exception(page)
            badges = page.get_by_text(f"{view} view", exact=False)
            if title != "Glossary":  # definitions only: no warehouse row, so no tier badge
                assert badges.count() >= 1, (title, view)
            shot(page, f"{Path(file).stem}-{view}")


def test_switching_the_tier_view_changes_the_rows(server, page):
    base, _, _ = server
    open_page(page, base, "results", "Results")
    headings = page.locator("[data-testid='stHeadingWithActionElements'] h3")
    assert "secretcorpus" not in headings.all_inner_texts()
    set_view(page, "Internal (every tier; never publish)")
    page.get_by_role("heading", name="secretcorpus", level=3, exact=True).wait_for(timeout=60_000)
    assert "alt+pub+secretcorpus" in headings.all_inner_texts()
    set_view(page, "Publishable (tier A only)")
    page.get_by_role("heading", name="secretcorpus", level=3, exact=True).wait_for(state="detached",
                                                                       timeout=60_000)


def test_a_publishable_csv_download_holds_tier_a_rows_only(server, page, tmp_path):
    base, _, _ = server
    open_page(page, base, "results", "Results")
    with page.expect_download(timeout=60_000) as info:
        page.get_by_role("button", name="Download CSV").click()
    target = tmp_path / "results.csv"
    info.value.save_as(str(target))
    text = target.read_text(encoding="utf-8")
    body = [line for line in text.splitlines() if not line.lstrip('"').startswith("# ")]
    rows = list(csv.DictReader(io.StringIO("\n".join(body))))
    assert rows and {r["tier"] for r in rows} == {"A"}
    assert {r["corpus"] for r in rows} == {"alt", "pub", "alt+pub"}
    assert "secretcorpus" not in text and "CC-BY-NC" not in text
    # the name carries the selection: view, corpora, measures
    assert info.value.suggested_filename == "results-publishable-alt,alt+pub,pub-nDCG@10.csv"


def test_a_run_scored_while_the_dashboard_is_up_is_ingested_at_once(server, page, tmp_path):
    base, db, _ = server
    open_page(page, base, "", "Overview")
    runs = page.locator("[data-testid='stMetricValue']").nth(1)
    before = int(runs.inner_text())
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 2\n")
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 d1 1 2.0 t\nq1 Q0 d9 2 1.0 t\nq2 Q0 d9 1 2.0 t\nq2 Q0 d2 2 1.0 t\n"
                   "q3 Q0 d3 1 1.0 t\n")
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "score", "--qrels", str(qrels), "--run", str(run),
         "--corpus-name", "late", "--tier", "A", "--licence", "MIT", "--control-name",
         "scored-while-serving", "--out", str(tmp_path / "late"), "--db", str(db)],
        cwd=REPO, capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - started
    print(f"harness score + ingest with the dashboard up: {elapsed:.1f} s")
    assert proc.returncode == 0, proc.stderr
    assert "ingested run" in proc.stdout
    # process start, scoring and ingest: the dashboard never holds the file, so the writer
    # does not wait for it
    assert elapsed < 30, f"harness score took {elapsed:.1f} s with the dashboard up"
    page.reload()
    page.get_by_role("heading", name="Overview", level=1).wait_for(timeout=60_000)
    wait_settled(page)
    assert int(page.locator("[data-testid='stMetricValue']").nth(1).inner_text()) == before + 1
    shot(page, "overview-after-ingest")
