"""What the real-browser tests share: Chromium's path and flags, the dashboard served by
``streamlit run app.py`` on a free loopback port, and waiting for a page to settle."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ARTIFACTS = REPO / "test-artifacts" / "dashboard"


def require_chromium():
    """Playwright's sync API, or a skip naming what is missing."""
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is missing: the real-browser tests need Debian's chromium "
                    "(`.ci/run` installs it)")
    return pytest.importorskip("playwright.sync_api")


@contextmanager
def launched_chromium(**launch) -> Iterator:
    """Debian's headless Chromium driven by Playwright (``launch``: more launch options, e.g.
    a proxy), closed on the way out; a skip naming what is missing."""
    sync_api = require_chromium()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                             **launch)
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def served_fixture_warehouse(root: Path) -> Iterator[tuple[str, dict]]:
    """The pages' fixture warehouse built in ``root`` and served on 127.0.0.1; yields
    ``(base url, what build() returned)``."""
    from tests.pages.fixture_warehouse import build

    built = build(root)
    with serve_dashboard(built["db"]) as base:
        yield base, built


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(base: str, proc: subprocess.Popen, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"streamlit did not answer on {base} within {timeout} s")


@contextmanager
def process(args, **kwargs) -> Iterator[subprocess.Popen]:
    """``args`` as a process with its output discarded, stopped on the way out (terminate,
    then kill after 15 s)."""
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


@contextmanager
def serve_dashboard(db: Path) -> Iterator[str]:
    """``streamlit run app.py`` over the warehouse ``db`` on 127.0.0.1; yields its base URL
    and stops the server on the way out."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with process([sys.executable, "-m", "streamlit", "run", "app.py", "--server.address",
                  "127.0.0.1", "--server.port", str(port), "--server.headless", "true"],
                 cwd=REPO, env={**os.environ, "HARNESS_WAREHOUSE": str(db)}) as proc:
        wait_healthy(base, proc)
        yield base


def wait_settled(tab, quiet_ms: int = 1500, timeout_s: float = 60.0) -> None:
    """Until no script run has shown Streamlit's running indicator for ``quiet_ms`` (the
    indicator appears only after a run has lasted a moment, and a first visit runs twice)."""
    deadline = time.monotonic() + timeout_s
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        if tab.locator("[data-testid='stStatusWidgetRunningIcon']").count():
            quiet_since = time.monotonic()
        elif (time.monotonic() - quiet_since) * 1000 >= quiet_ms:
            return
        tab.wait_for_timeout(100)
    raise AssertionError(f"the page was still running after {timeout_s} s")
