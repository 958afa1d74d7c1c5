"""Ctrl-C during a run against a live system: exit 130, one line, no results directory,
and the queries still queued are never sent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from .server import SystemServer


def test_ctrl_c_stops_sending_and_writes_nothing(tmp_path, synthetic, rankings, repo_root):
    out = tmp_path / "out"
    with SystemServer(rankings, delay=0.1) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness", "bench", "--corpus", f"synthetic:{synthetic}",
             "--backend", "http", "--url-template",
             server.url + "/search?qid={query_id}&q={query}&k={k}", "--http-concurrency", "2",
             "--no-progress", "--no-warehouse", "--out", str(out)],
            cwd=repo_root, env={**os.environ, "PYTHONPATH": str(repo_root)},
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while server.requests < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        at_signal = server.requests
        _, err = proc.communicate(timeout=60)
        time.sleep(0.3)
        sent = server.requests
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sent <= at_signal + 2 < len(rankings)  # at most the requests already in flight
    assert not out.exists()
