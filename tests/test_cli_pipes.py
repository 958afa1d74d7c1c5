"""A reader that goes away (``| head``) is not an error for the CLIs: exit 0, no traceback."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("argv", [["ingestion", "sources"], ["harness", "demo", "--toy"]])
def test_a_closed_pipe_is_not_a_traceback(argv, repo_root, tmp_path):
    # the read end is closed before the command writes anything: its first flush fails
    proc = subprocess.Popen([sys.executable, "-m", *argv], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err[-2000:]
    assert proc.returncode == 0
