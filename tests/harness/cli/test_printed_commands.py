"""Commands the product prints work as printed, without an activated virtualenv: they name
the interpreter that is running (issue 29, item 8)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

from harness.cli.demo import serve_hint


def test_the_demo_prints_the_running_interpreter_by_its_full_path():
    hint = serve_hint(Path("/tmp/some dir/w.duckdb"), 8601)
    command = hint.splitlines()[0].split(": ", 1)[1]
    words = shlex.split(command)
    assert words[0] == "HARNESS_WAREHOUSE=/tmp/some dir/w.duckdb"
    assert words[1] == sys.executable and Path(words[1]).is_absolute()
    assert words[2:5] == ["-m", "streamlit", "run"]
    # that interpreter has what the command needs (an unactivated shell finds it by path)
    done = subprocess.run([words[1], "-c", "import streamlit"], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
