"""Team mode's login in a real browser: Debian's Chromium, ``streamlit run app.py`` with
Streamlit's OIDC login against a real OIDC provider on 127.0.0.1 (``oidc-provider-mock``,
started here), over snapshots published by the ingester's own ``warehouse.snapshots``.

An internal user (group ``eval-internal``) logs in through the full redirect round trip and
sees the tier-B corpus in the internal view, and the view is audited; an external user
logs in and reaches no tier-B number by any page, the tier switch (there is none) or a URL
query parameter.  A visitor who has not logged in sees the login button only."""

from __future__ import annotations

import json

import pytest

from dashboard import PAGES
from tests.browser.helpers import launched_chromium, wait_settled
from tests.browser.login import login, page_text, team_dashboard

pytestmark = [pytest.mark.browser, pytest.mark.service]

# the provider's users (tools/team_demo.py, as `make team-demo` prints them): ines is in the
# group eval-internal, eve is not


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    """The OIDC provider and the team-mode dashboard; yields (base url, snapshots dir)."""
    pytest.importorskip("oidc_provider_mock")
    pytest.importorskip("authlib")
    with team_dashboard(tmp_path_factory.mktemp("team-login")) as (base, _, snapshots):
        yield base, snapshots


def test_a_visitor_without_login_sees_the_login_button_only(team):
    base, _ = team
    with launched_chromium() as browser:
        tab = browser.new_page()
        for path in ("", "results", "overview?tier_view=internal"):
            tab.goto(f"{base}/{path}")
            wait_settled(tab)
            text = page_text(tab)
            assert "Log in to see the results." in text and "secretcorpus" not in text
            # no page list before login: neither the pages nor the files they live in ("app")
            assert tab.locator("[data-testid='stSidebarNav']").count() == 0
            sidebar = tab.locator("[data-testid='stSidebar']")
            names = sidebar.inner_text() if sidebar.count() else ""
            assert "app" not in names.split() and "Results" not in names
            assert tab.locator("[data-testid='stDataFrame'], [data-testid='stTable']").count() == 0


def test_an_internal_user_logs_in_and_sees_tier_b_rows_audited(team):
    base, snapshots = team
    with launched_chromium() as browser:
        tab = login(browser, base, "ines")
        assert "internal audience" in page_text(tab)
        tab.goto(f"{base}/results")
        wait_settled(tab)
        tab.get_by_text("Internal (every tier; never publish)").click()
        wait_settled(tab)
        tab.get_by_text("secretcorpus").first.wait_for(timeout=30_000)
    records = [json.loads(line) for line in (snapshots / "audit.jsonl").read_text().splitlines()]
    assert {(r["who"], r["event"], r["page"]) for r in records} >= {
        ("ines@example.org", "view", "results")}


def test_an_external_user_reaches_no_tier_b_number(team):
    base, _ = team
    with launched_chromium() as browser:
        tab = login(browser, base, "eve")
        assert "publishable audience" in page_text(tab)
        assert tab.get_by_text("Internal (every tier; never publish)").count() == 0
        for file, _, _ in PAGES:
            slug = file.removesuffix(".py")
            tab.goto(f"{base}/{slug}?tier_view=internal")
            wait_settled(tab)
            text = page_text(tab)
            assert "secretcorpus" not in text and "CC-BY-NC" not in text, slug
            assert "internal view" not in text, slug
            if slug == "results":  # the publishable rows are there
                assert "alt+pub" in text and "publishable view" in text
