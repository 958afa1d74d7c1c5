"""Helpers of the team-mode login tests in Chromium: servers started and stopped as
processes, waiting for a URL, logging in through the OIDC provider mock's page."""

from __future__ import annotations

import subprocess
import time
import urllib.request
from contextlib import contextmanager

from tests.browser.helpers import wait_settled


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
def process(args, **kwargs):
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            **kwargs)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


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
