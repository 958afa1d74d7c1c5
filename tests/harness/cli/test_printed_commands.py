"""Commands the product prints work as printed, without an activated virtualenv: they name
the interpreter that is running (issue 29, item 8)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_the_retry_command_of_a_busy_warehouse_runs_as_printed(tmp_path, monkeypatch, capsys):
    """A busy warehouse leaves the results written and prints the command that finishes
    the job: run as printed, it ingests them into the same warehouse (``--db``)."""
    import os

    import pytest

    import warehouse
    from harness.cli import main
    from harness.cli.ingest import NOT_INGESTED
    from warehouse import queries
    from warehouse.errors import WarehouseBusy

    toy = Path(__file__).resolve().parents[3] / "examples" / "toy"
    db = tmp_path / "a warehouse" / "w.duckdb"
    out = tmp_path / "results dir" / "toy"

    def busy(results_dir, db_path=None):
        raise WarehouseBusy("held by another writer")

    monkeypatch.setattr(warehouse, "ingest_results", busy)
    with pytest.raises(SystemExit) as exc:
        main(["score", "--qrels", str(toy / "qrels.txt"), "--run", str(toy / "run.txt"),
              "--corpus-name", "toy", "--licence", "MIT", "--out", str(out), "--db", str(db)])
    assert exc.value.code == NOT_INGESTED
    printed = capsys.readouterr().err.split("retry later with: ", 1)[1].strip()
    assert shlex.split(printed)[0] == sys.executable
    monkeypatch.undo()
    env = {k: v for k, v in os.environ.items() if k != "HARNESS_WAREHOUSE"}
    done = subprocess.run(["bash", "-c", printed], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert list(queries.runs(db_path=db)["control_name"]) == ["toy"]


@pytest.mark.service
def test_the_demo_s_open_the_dashboard_line_serves_it(tmp_path):
    """``harness demo --no-serve`` ends with the command that opens the dashboard: run as
    printed, it serves the warehouse on the port it names."""
    import os
    import signal
    import socket
    import time
    import urllib.request

    import warehouse

    toy = Path(__file__).resolve().parents[3] / "examples" / "toy"
    from harness.cli import main

    db = tmp_path / "w.duckdb"
    assert main(["score", "--qrels", str(toy / "qrels.txt"), "--run", str(toy / "run.txt"),
                 "--corpus-name", "toy", "--licence", "MIT", "--out", str(tmp_path / "toy"),
                 "--no-warehouse"]) == 0
    warehouse.ingest_results(tmp_path / "toy", db_path=db)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = serve_hint(db, port).splitlines()[0].split(": ", 1)[1]
    proc = subprocess.Popen(["bash", "-c", f"{command} --server.headless true"],
                            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, "the dashboard exited"
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                            timeout=5) as answer:
                    assert answer.status == 200
                break
            except OSError:
                assert time.monotonic() < deadline, "the dashboard never answered"
                time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)
