"""Terminal output is for a reader: no library INFO lines unless ``--verbose``, each message
once, floats rounded, a short summary instead of the per-arm table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TOY = REPO / "examples" / "toy"

LOGS = ("import logging, sys\n"
        "from harness.core.commands import configure_logging\n"
        "configure_logging(sys.argv[1] == 'verbose')\n"
        "logging.getLogger('somelibrary.base').info('library info line')\n"
        "logging.getLogger('harness.x').info('product info line')\n"
        "logging.getLogger('harness.x').debug('product debug line')\n"
        "logging.getLogger('somelibrary.base').warning('library warning line')\n")


def _python(*argv, cwd=REPO, env_extra=None):
    env = {"PYTHONPATH": str(REPO), "PATH": "", "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", **(env_extra or {})}
    return subprocess.run([sys.executable, *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env=env)


def test_library_info_lines_only_with_verbose():
    quiet = _python("-c", LOGS, "quiet")
    assert quiet.stderr.splitlines() == ["product info line", "warning: library warning line"]
    loud = _python("-c", LOGS, "verbose")
    assert loud.stderr.splitlines() == ["INFO somelibrary.base: library info line",
                                        "INFO harness.x: product info line",
                                        "DEBUG harness.x: product debug line",
                                        "WARNING somelibrary.base: library warning line"]


def test_the_ingest_message_is_printed_once(tmp_path):
    proc = _python("-m", "harness", "score", "--qrels", str(TOY / "qrels.txt"), "--run",
                   str(TOY / "run.txt"), "--corpus-name", "toy", "--licence", "CC0-1.0",
                   "--out", str(tmp_path / "toy"), "--db", str(tmp_path / "w.duckdb"),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    both = proc.stdout + proc.stderr
    assert both.count("ingested run") == 1, both
    assert "applied migration" not in both and "INFO" not in both
