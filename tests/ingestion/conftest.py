"""Fixtures of the ingestion tests: a small synthetic corpus and a local HTTP server."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

SYNTH_SEED = 11
SYNTH_MEETINGS = 30


@pytest.fixture(scope="session")
def synthetic_dir(tmp_path_factory) -> Path:
    """One valid synthetic corpus, generated once per session (treat as read-only)."""
    from ingestion.synthetic import generate

    return generate(SYNTH_SEED, SYNTH_MEETINGS, tmp_path_factory.mktemp("synthetic") / "corpus")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        return


@pytest.fixture
def http_dir(tmp_path):
    """``(root_dir, base_url)``: files written under root_dir are served on 127.0.0.1."""
    root = tmp_path / "served"
    root.mkdir()
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
