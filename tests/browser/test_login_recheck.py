"""A login's groups are re-read from the identity provider (a real OIDC provider on
127.0.0.1), so taking someone out of the internal group, or revoking their tokens, takes
effect within ``recheck_seconds``, not when the login cookie expires."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from tests.browser.helpers import launched_chromium, wait_settled
from tests.browser.login import login, page_text, team_dashboard

pytestmark = [pytest.mark.browser, pytest.mark.service]

#: the shortest interval a configuration may set (dashboard.audience.RECHECK_BOUNDS)
RECHECK = 10


@pytest.fixture(scope="module")
def team(tmp_path_factory):
    pytest.importorskip("oidc_provider_mock")
    pytest.importorskip("authlib")
    with team_dashboard(tmp_path_factory.mktemp("team-recheck"), RECHECK) as (base, idp, _):
        yield base, idp


def _provider(idp: str, method: str, path: str, body=None) -> None:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{idp}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status in (200, 204)


def _reload_after_recheck(tab, base: str) -> str:
    time.sleep(RECHECK + 1)
    tab.goto(f"{base}/results")
    wait_settled(tab)
    return page_text(tab)


def test_leaving_the_internal_group_ends_internal_access_within_the_interval(team):
    base, idp = team
    with launched_chromium() as browser:
        tab = login(browser, base, "ines")
        assert "internal audience" in page_text(tab)
        # an administrator takes ines out of eval-internal at the provider; her cookie
        # still says she is in it
        _provider(idp, "PUT", "/users/ines", {"email": "ines@example.org",
                                               "groups": ["staff"]})
        text = _reload_after_recheck(tab, base)
        assert "publishable audience" in text and "internal audience" not in text
        assert tab.get_by_text("Internal (every tier; never publish)").count() == 0
        assert "secretcorpus" not in text
        # and her tokens revoked: the login cannot be re-checked, so nothing is read
        _provider(idp, "POST", "/users/ines/revoke-tokens")
        text = _reload_after_recheck(tab, base)
        assert "could not be re-checked with the identity provider" in text
        assert "userinfo: HTTP 4" in text  # the provider refuses the revoked token
        assert tab.locator("[data-testid='stDataFrame'], [data-testid='stTable']").count() == 0
