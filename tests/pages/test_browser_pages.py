"""The pages in a real browser (issue 17): ``streamlit run app.py`` on 127.0.0.1 (a free
port) driven by headless Chromium through Playwright, as ``tests/browser/`` does.

Every request is recorded while every page is opened in both views, twice over: the
page's own requests through Playwright, and everything the browser sends anywhere but
127.0.0.1 through a recording proxy on loopback (the tab icon, which Playwright does not
report, used to come from a font host); any host but 127.0.0.1 fails the test; the
certificates' "why" is shown whole and wrapped at 1366 px; every page shows its purpose line
under the title.  Skipped with the reason when ``/usr/bin/chromium`` is
missing.
"""

from __future__ import annotations

import socketserver
import threading
from pathlib import Path
from urllib.parse import urlparse

import pytest

from dashboard import PAGES

from tests.browser import helpers
from tests.browser.helpers import ARTIFACTS, launched_chromium, served_fixture_warehouse, wait_settled

CHROMIUM_ARGS = [*helpers.CHROMIUM_ARGS, "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-features=AutofillServerCommunication,OptimizationHints,Translate"]
VIEW_LABELS = {"publishable": "Publishable (tier A only)",
               "internal": "Internal (every tier; never publish)"}
HEADINGS = {"Agreement": "Do the corpora agree?", "Compare": "Compare two runs"}
#: URLs without a host that stay inside the page
LOCAL_SCHEMES = ("data", "blob", "about")
#: what Chromium itself sends whatever page it shows (component updates, its clock, account
#: and autofill checks; seen with about:blank alone): never a request of the dashboard
CHROMIUM_OWN = frozenset({"update.googleapis.com", "clients2.google.com",
                          "accounts.google.com", "redirector.gvt1.com",
                          "optimizationguide-pa.googleapis.com",
                          "content-autofill.googleapis.com"})

pytestmark = [pytest.mark.browser, pytest.mark.slow]


class _Recorder(socketserver.StreamRequestHandler):
    """A proxy that forwards nothing: it records each request line and answers 403."""

    seen: list[str] = []

    def handle(self):
        line = self.rfile.readline().decode("latin-1").strip()
        if line:
            type(self).seen.append(line)
        self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n"
                         b"Connection: close\r\n\r\n")


def proxied_host(line: str) -> str:
    """The host of a proxy request line (``CONNECT host:443 ...`` or ``GET http://host/...``)."""
    method, target = line.split()[:2]
    return (target if method == "CONNECT" else urlparse(target).netloc).rsplit(":", 1)[0]


@pytest.fixture(scope="module")
def proxy():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Recorder)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], _Recorder.seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def browser(proxy):
    # everything but loopback goes to the recording proxy
    with launched_chromium(proxy={"server": f"http://127.0.0.1:{proxy[0]}",
                                  "bypass": "127.0.0.1"}) as chromium:
        yield chromium


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser):
    """The fixture warehouse served by ``streamlit run app.py``; yields the base URL."""
    with served_fixture_warehouse(tmp_path_factory.mktemp("browser-pages")) as (base, _):
        yield base


def open_page(tab, base: str, title: str, view: str) -> None:
    tab.locator("[data-testid='stSidebarNav']").get_by_text(title, exact=True).click()
    tab.get_by_role("heading", name=HEADINGS.get(title, title), level=1).wait_for(
        timeout=60_000)
    wait_settled(tab)


def test_no_request_leaves_loopback_on_any_page(server, browser, proxy):
    base = server
    proxied = proxy[1]
    before = len(proxied)
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    seen: list[str] = []
    context.on("request", lambda request: seen.append(request.url))
    tab = context.new_page()
    try:
        tab.goto(base)
        tab.get_by_role("heading", name="Overview", level=1).wait_for(timeout=60_000)
        wait_settled(tab)
        icon = tab.locator("link[rel~='icon']").first.get_attribute("href") or ""
        assert icon.startswith("data:image/svg+xml"), icon[:80]
        for view, label in VIEW_LABELS.items():
            tab.locator("[data-testid='stSidebar']").get_by_text(label, exact=True).click()
            wait_settled(tab)
            for _, title, _ in PAGES:
                open_page(tab, base, title, view)
                # expanders hold text too: open every one
                for summary in tab.locator("[data-testid='stExpander'] summary").all():
                    summary.click()
                wait_settled(tab, quiet_ms=500)
        # a first visit straight to a page URL (served through the entrypoint)
        for file, title, _ in PAGES:
            tab.goto(f"{base}/{Path(file).stem}")
            tab.get_by_role("heading", name=HEADINGS.get(title, title), level=1).wait_for(
                timeout=60_000)
            wait_settled(tab, quiet_ms=800)
    finally:
        context.close()
    assert len(seen) > 20
    outside = sorted({url for url in seen if urlparse(url).scheme not in LOCAL_SCHEMES
                      and urlparse(url).hostname != "127.0.0.1"})
    assert outside == []
    # what the browser sent past loopback while the dashboard was open (the tab icon
    # included), Chromium's own start-up traffic aside
    hosts = sorted({proxied_host(line) for line in proxied[before:]} - CHROMIUM_OWN)
    assert hosts == []


def test_every_page_shows_its_purpose_under_its_title(server, browser):
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    tab = context.new_page()
    try:
        tab.goto(server)
        tab.get_by_role("heading", name="Overview", level=1).wait_for(timeout=60_000)
        wait_settled(tab)
        for _, title, _ in PAGES:
            open_page(tab, server, title, "publishable")
            main = tab.locator("[data-testid='stMain']")
            first = main.locator("[data-testid='stCaptionContainer']").first
            heading = main.get_by_role("heading", level=1).first
            assert first.is_visible(), title
            assert len(first.inner_text()) > 30, title
            # right under the title: nothing between the two
            assert 0 <= first.bounding_box()["y"] - heading.bounding_box()["y"] < 90, title
    finally:
        context.close()


@pytest.mark.parametrize("width, height", [(1366, 768), (1920, 1080)])
def test_the_certificates_why_is_shown_whole_and_wrapped(server, browser, width, height):
    context = browser.new_context(viewport={"width": width, "height": height})
    tab = context.new_page()
    try:
        tab.goto(server)
        tab.get_by_role("heading", name="Overview", level=1).wait_for(timeout=60_000)
        wait_settled(tab)
        tab.locator("[data-testid='stSidebar']").get_by_text(VIEW_LABELS["internal"],
                                                              exact=True).click()
        wait_settled(tab)
        open_page(tab, server, "Certificates", "internal")
        table = tab.locator("[data-testid='stTable']").first
        cell = table.locator("td", has_text="arm.size: 48").first
        text = cell.inner_text()
        # the whole reason: both changes, through to its last word
        assert "secretcorpus" in text and text.rstrip().endswith(")"), text
        assert "expired: expired" not in table.inner_text()
        # every character inside the cell (a checksum has no space to break at), over
        # several lines
        text_right, cell_right, text_height, line = cell.evaluate(
            "e => { const p = e.querySelector('p'); const r = document.createRange(); "
            "r.selectNodeContents(p); const t = r.getBoundingClientRect(); "
            "return [t.right, e.getBoundingClientRect().right, t.height, "
            "parseFloat(getComputedStyle(p).lineHeight) || 24]; }")
        assert text_right <= cell_right + 0.5, (text_right, cell_right)
        assert text_height > 1.5 * line, (text_height, line)
        # a short word is never broken: the status column reads "degenerate" on one line
        status = table.locator("td", has_text="degenerate").first
        assert status.evaluate("e => e.querySelector('p').getClientRects().length "
                               "&& e.querySelector('p').getBoundingClientRect().height") < 30
        # named by arm and corpus, never by a hash
        assert "control · alt+pub · coverage α 0.2" in table.inner_text()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(ARTIFACTS / f"certificates-{width}.png"), full_page=True)
    finally:
        context.close()
