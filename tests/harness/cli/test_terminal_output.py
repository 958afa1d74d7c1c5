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


def test_durations_are_rounded_for_a_reader():
    from harness.cli.summary import measure, ms

    assert ms(0.42469999999999997) == "0.425"      # the p50
    assert ms(15.94425) == "15.9" and ms(0.3110800000000003) == "0.311"
    assert ms(1240.2) == "1240" and ms(0) == "0" and ms(None) == "n/a"
    assert measure(0.17269999999) == "0.1727"


def test_bench_prints_a_short_summary_and_the_path_of_metrics_md(tmp_path, capsys):
    import json
    import re

    from harness.cli import main
    from ingestion.synthetic import generate

    corpus = generate(7, 4, tmp_path / "corpus")
    out = tmp_path / "bm25"
    assert main(["bench", "--corpus", f"synthetic:{corpus}", "--mode", "bm25", "--out",
                 str(out), "--no-warehouse", "--no-progress"]) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    assert "| corpus |" not in text and len(lines) == 4, text
    assert lines[0] == f"bm25: wrote {out}"
    (row,) = [r for r in json.loads((out / "metrics.json").read_text())["rows"]
              if r["query_class"] == "all"]
    assert lines[1] == (f"  synthetic (tier A), {row['n']} queries: nDCG@10 "
                        f"{row['metrics']['nDCG@10']:.4f}, R@10 {row['metrics']['R@10']:.4f}, "
                        f"MRR {row['metrics']['MRR']:.4f}")
    p50, p95 = re.search(r"p50 (\S+) ms, p95 (\S+) ms", lines[2]).groups()
    for shown in (p50, p95):  # at most 3 significant digits below 100 ms
        assert len(shown.replace(".", "").lstrip("0")) <= 3, shown
    assert lines[3] == f"  every measure and query class: {out / 'metrics.md'}"
