"""Results in a real browser, for publishing (issue #17): ``streamlit run app.py`` on
127.0.0.1 driven by headless Chromium through Playwright.

The exports downloaded with a control chosen hold the numbers the grid shows; tables offer
no toolbar download (the export buttons are the only way out); the publishable view says
what it withholds; the headline table fits 1366x768 and 1920x1080 without horizontal
scrolling.
"""

from __future__ import annotations

import io
from contextlib import contextmanager
from pathlib import Path

import pandas as pd
import pytest

from dashboard import tables
from tests.browser.helpers import ARTIFACTS, launched_chromium, served_fixture_warehouse
from tests.browser.helpers import wait_settled as _settled

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def chromium():
    with launched_chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
def served(tmp_path_factory, chromium):
    """The fixture warehouse served by streamlit; yields (base url, built fixture)."""
    with served_fixture_warehouse(tmp_path_factory.mktemp("publishing-browser")) as found:
        yield found


@contextmanager
def _tab(chromium, width: int, height: int):
    """A new tab at ``width`` x ``height`` in a fresh context, closed on the way out."""
    context = chromium.new_context(viewport={"width": width, "height": height},
                                   accept_downloads=True)
    try:
        yield context.new_page()
    finally:
        context.close()


def _open_results(tab, base: str) -> None:
    tab.goto(f"{base}/results")
    tab.get_by_role("heading", name="Results", level=1).wait_for(timeout=60_000)
    tab.locator("[data-testid='stDataFrame']").first.wait_for(timeout=60_000)
    _settled(tab)


def _grid(frame) -> list[list[str]]:
    """The rows a Streamlit dataframe renders (its accessible grid: header, then the rows
    in view)."""
    frame.locator("td[role='gridcell']").first.wait_for(state="attached", timeout=30_000)
    head = frame.locator("th[role='columnheader']").all_inner_texts()
    cells = frame.locator("td[role='gridcell']").all_inner_texts()
    return [head] + [cells[i:i + len(head)] for i in range(0, len(cells), len(head))]


def _choose(tab, label: str, option: str) -> None:
    box = tab.locator("[data-testid='stSelectbox']").filter(has_text=label)
    box.click()
    tab.get_by_role("option", name=option, exact=True).click()
    _settled(tab)


def _download(tab, label: str) -> bytes:
    with tab.expect_download(timeout=60_000) as info:
        tab.get_by_role("button", name=label).click()
    return Path(info.value.path()).read_bytes()


def test_the_exports_hold_the_numbers_the_screen_shows_with_a_control(served, chromium):
    base, _ = served
    with _tab(chromium, 1440, 2000) as tab:
        _open_results(tab, base)
        _choose(tab, "Control run (deltas)", "control")
        heading = tab.locator("[data-testid='stHeadingWithActionElements'] h3").first
        assert heading.inner_text() == "alt"
        grid = _grid(tab.locator("[data-testid='stDataFrame']").first)
        head, rows = grid[0], grid[1:]
        assert head == ["run", "class", "nDCG@10", "nDCG@10 Δ"]
        md = _download(tab, "Download Markdown").decode("utf-8")
        frame = pd.read_csv(io.BytesIO(_download(tab, "Download CSV")))
    exported = {}
    for line in md.splitlines()[2:]:
        if not line.startswith("| "):
            break
        cells = [c.replace("\\[", "[").replace("\\]", "]")
                 for c in line.strip()[2:-2].split(" | ")]
        exported[(cells[0], cells[1], cells[2])] = cells[4:]
    assert len(rows) >= 10
    marked = 0
    for run, cls, value, delta in rows:
        assert exported[(run, "alt", cls)] == [value, delta], (run, cls)
        line = frame[(frame["run"] == run) & (frame["corpus"] == "alt")
                     & (frame["class"] == cls)]
        assert len(line) == 1, (run, cls)
        line = line.iloc[0]
        # a value may end with the best's ★ or a tied run's † (the exports show the same)
        value = value.removesuffix(tables.BEST_MARK).removesuffix(tables.TIED_MARK)
        assert f"{line['nDCG@10']:.4f}" == value.split(" [")[0]
        if " [" in value:  # the bounds, at the table's precision (2 decimals here)
            lower, upper = value.split(" [")[1].rstrip("]").split(", ")
            assert (f"{line['nDCG@10 lower']:.2f}", f"{line['nDCG@10 upper']:.2f}") == \
                (lower, upper)
        if delta == "control":
            assert line["nDCG@10 mark"] == "control"
        elif delta != "–":
            assert f"{line['nDCG@10 delta']:+.4f}" == delta.split(" ")[0]
            if delta.endswith(("floor", "*", "n.s.")):
                assert line["nDCG@10 mark"] == delta.rsplit(" ", 1)[1]
                assert f"{line['nDCG@10 delta_lower']:+.4f}" == \
                    delta.split(" [")[1].split(",")[0]
                assert 0 < line["nDCG@10 p_holm"] <= 1
                marked += 1
    # arm-one and arm-two carry stored tests against the control on alt (all, lookup and
    # summarize when in view)
    assert marked >= 2


def test_tables_offer_no_toolbar_download(served, chromium):
    base, _ = served
    with _tab(chromium, 1366, 768) as tab:
        _open_results(tab, base)
        frame = tab.locator("[data-testid='stDataFrame']").first
        frame.hover()
        toolbar = tab.locator("[data-testid='stElementToolbar']").first
        toolbar.wait_for(state="attached", timeout=30_000)
        labels = toolbar.locator("button").evaluate_all(
            "buttons => buttons.map(b => b.getAttribute('aria-label'))")
        # the toolbar is there (search, full screen) but holds no download
        assert "Search" in labels or "Fullscreen" in labels, labels
        assert not any("download" in (label or "").lower() for label in labels), labels
        assert tab.get_by_role("button", name="Download as CSV").count() == 0


def test_the_publishable_view_says_what_it_withholds(served, chromium):
    base, _ = served
    with _tab(chromium, 1366, 768) as tab:
        _open_results(tab, base)
        note = tab.get_by_text("1 run / 1 corpus withheld (not tier A): secretcorpus",
                               exact=False)
        note.wait_for(timeout=30_000)
        assert note.count() == 1
        tab.locator("[data-testid='stSidebar']").get_by_text(
            "Internal (every tier; never publish)", exact=True).click()
        _settled(tab)
        assert tab.get_by_text("withheld (not tier A)", exact=False).count() == 0


@pytest.mark.parametrize("width,height", [(1366, 768), (1920, 1080)])
def test_the_headline_table_fits_without_horizontal_scrolling(served, chromium, width, height):
    base, _ = served
    with _tab(chromium, width, height) as tab:
        _open_results(tab, base)
        _choose(tab, "Control run (deltas)", "control")
        frame = tab.locator("[data-testid='stDataFrame']").first
        assert _grid(frame)[0] == ["run", "class", "nDCG@10", "nDCG@10 Δ"]
        scroll = frame.locator(".dvn-scroller").first.evaluate(
            "s => [s.scrollWidth, s.clientWidth]")
        assert scroll[0] <= scroll[1], f"the table scrolls sideways: {scroll}"
        page = tab.evaluate("() => [document.scrollingElement.scrollWidth, window.innerWidth]")
        assert page[0] <= page[1], f"the page scrolls sideways: {page}"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(ARTIFACTS / f"results-{width}x{height}.png"))


def test_the_compare_scatter_is_square_with_counts_printed(served, chromium):
    base, _ = served
    with _tab(chromium, 1366, 768) as tab:
        tab.goto(f"{base}/compare")
        tab.get_by_role("heading", name="Compare two runs", level=1).wait_for(timeout=60_000)
        chart = tab.locator("svg.marks").first
        chart.wait_for(timeout=60_000)
        _settled(tab)
        frame = chart.locator(".role-frame > g > path.background").first.bounding_box()
        assert frame is not None and frame["width"] > 200
        assert abs(frame["width"] - frame["height"]) < 1, frame
        # control -> arm-one on nDCG@10: every one of the 12 pub and alt queries improves
        values = tab.locator("[data-testid='stMetricValue']").all_inner_texts()
        assert values[:4] == ["12", "0", "0", "0"]
        assert tab.get_by_text("queries at this point").count() == 1
        # the full run names under the choice
        assert tab.get_by_text("A: control (run ", exact=False).count() == 1
