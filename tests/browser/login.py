"""Helpers of the team-mode login tests in Chromium: the provider and the dashboard started
and stopped, waiting for a URL, logging in through the OIDC provider mock's page."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from tests.browser.helpers import REPO, free_port, process, wait_healthy, wait_settled


def wait_http(url: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{url}: the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"{url} did not answer within {timeout} s")


@contextmanager
def team_dashboard(root: Path, recheck_seconds: int | None = None,
                   store: str | None = None) -> Iterator[tuple]:
    """The OIDC provider mock and a team-mode dashboard over snapshots of the fixture
    warehouse, under ``root`` (``store``: the store its Judge page submits labels to);
    yields (dashboard URL, provider URL, snapshots directory)."""
    from tests.pages.fixture_warehouse import build
    from tools.team_demo import login_secrets, provider_command
    from warehouse.snapshots import publish

    snapshots = root / "snapshots"
    snapshots.mkdir()
    publish(build(root / "fixture")["db"], snapshots)
    idp_port, app_port = free_port(), free_port()
    idp, base = f"http://127.0.0.1:{idp_port}", f"http://127.0.0.1:{app_port}"
    secrets = login_secrets(root / "secrets.toml", snapshots, base, idp, store=store)
    if recheck_seconds is not None:
        secrets.write_text(secrets.read_text().replace(
            "[team]\n", f"[team]\nrecheck_seconds = {recheck_seconds}\n", 1))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HARNESS_TEAM_")}
    with process(provider_command(idp_port)) as idp_proc:
        wait_http(f"{idp}/.well-known/openid-configuration", idp_proc)
        with process([sys.executable, "-m", "streamlit", "run", "app.py",
                      "--server.address", "127.0.0.1", "--server.port", str(app_port),
                      "--server.headless", "true", "--secrets.files", str(secrets)],
                     cwd=REPO, env={**env, "HARNESS_WAREHOUSE": str(root / "none.duckdb")}
                     ) as app:
            wait_healthy(base, app)
            yield base, idp, snapshots


def login(browser, base: str, sub: str):
    tab = browser.new_page()
    tab.goto(base)
    wait_settled(tab)
    assert tab.get_by_text("Log in to see the results.").count() == 1
    tab.get_by_role("button", name="Log in").click()
    tab.wait_for_url("**/oauth2/authorize**", timeout=30_000)
    tab.locator(f"button[name='sub'][value='{sub}']").click()
    tab.wait_for_url(f"{base}/**", timeout=30_000)
    tab.get_by_text("Signed in as").wait_for(timeout=60_000)
    wait_settled(tab)
    return tab


def page_text(tab) -> str:
    return tab.locator("[data-testid='stApp']").inner_text()
