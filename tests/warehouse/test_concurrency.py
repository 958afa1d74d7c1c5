"""Real processes: readers during writes, a writer killed mid-transaction, lock messages."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.warehouse.builders import build_results, simple_run
from warehouse import change_stamp, connect, ingest_results
from warehouse.errors import WarehouseBusy
from warehouse.ingest import store
from warehouse.load import load_results

REPO = Path(__file__).resolve().parents[2]


def spawn(code: str, *args) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


class Lines:
    """Lines of a child's stdout, readable with a timeout."""

    def __init__(self, proc: subprocess.Popen):
        self.queue: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, args=(proc.stdout,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self.queue.put(line.rstrip("\n"))

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.queue.get(timeout=0.1) == text:
                    return
            except queue.Empty:
                continue
        raise AssertionError(f"child never printed {text!r}")


def _counts(conn, run_id):
    return tuple(conn.query_one(f"SELECT count(*) FROM {t} WHERE run_id = ?", [run_id])[0]
                 for t in ("runs", "corpora", "metric_rows", "per_query", "run_files"))


READER = """
    import json, sys, time
    from pathlib import Path
    from warehouse import connect
    from warehouse.errors import WarehouseBusy, WarehouseMissing
    db, stop, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    seen, busy, missing = [], 0, 0
    while not stop.exists():
        try:
            with connect(db, read_only=True, timeout=0.02) as conn:
                state = conn.query_all(
                    "SELECT r.run_id, "
                    "(SELECT count(*) FROM corpora c WHERE c.run_id = r.run_id), "
                    "(SELECT count(*) FROM metric_rows m WHERE m.run_id = r.run_id), "
                    "(SELECT count(*) FROM per_query p WHERE p.run_id = r.run_id), "
                    "(SELECT count(*) FROM run_files f WHERE f.run_id = r.run_id) "
                    "FROM runs r ORDER BY r.run_id")
                orphans = conn.query_one(
                    "SELECT count(*) FROM per_query p ANTI JOIN runs r USING (run_id)")[0]
            seen.append({"runs": state, "orphans": orphans})
        except WarehouseBusy:
            busy += 1
        except WarehouseMissing:
            missing += 1
            time.sleep(0.01)
    out.write_text(json.dumps({"seen": seen, "busy": busy, "missing": missing}))
"""

WRITER = """
    import sys, time
    from warehouse import ingest, ingest_results
    ingest.in_transaction_hook = lambda run_id: time.sleep(0.3)
    db, dirs = sys.argv[1], sys.argv[2:]
    for d in dirs:
        ingest_results(d, db)
        time.sleep(0.4)
    print("WROTE", flush=True)
"""


@pytest.mark.slow  # a writer and readers in separate processes
def test_reader_sees_whole_runs_or_busy_while_a_writer_ingests(tmp_path):
    db = tmp_path / "w.duckdb"
    dirs, expected = [], {}
    for k in range(4):
        n = 30 * (k + 1)
        out = simple_run(tmp_path / f"r{k}", n_queries=n, control_name=f"r{k}")
        dirs.append(out)
        rid = json.loads((out / "runinfo.json").read_text())["run_id"]
        # 1 corpus; 2 measures x 1 "all" row; n queries x 2 measures; 4 files (no rankings)
        expected[rid] = [1, 2, 2 * n, 4]
    stop, report = tmp_path / "stop", tmp_path / "seen.json"
    reader = spawn(READER, db, stop, report)
    writer = spawn(WRITER, db, *dirs)
    try:
        assert writer.wait(timeout=120) == 0, writer.stderr.read()
    finally:
        stop.touch()
        reader.wait(timeout=60)
    assert reader.returncode == 0, reader.stderr.read()
    result = json.loads(report.read_text())
    assert result["seen"], "the reader never got in"
    for state in result["seen"]:
        assert state["orphans"] == 0
        for run_id, *counts in state["runs"]:
            assert counts == expected[run_id], f"partial run {run_id[:12]}: {counts}"
    # it really overlapped the writer: kept out at times, and saw intermediate states
    assert result["busy"] > 0
    assert len({len(s["runs"]) for s in result["seen"]}) >= 2
    with connect(db, read_only=True) as conn:
        assert {r for (r,) in conn.query_all("SELECT run_id FROM runs")} == set(expected)


KILLED_WRITER = """
    import sys, time
    from warehouse import ingest, ingest_results
    def hold(run_id):
        print("IN_TRANSACTION", flush=True)
        time.sleep(120)
    ingest.in_transaction_hook = hold
    ingest_results(sys.argv[2], sys.argv[1])
"""


@pytest.mark.slow  # a writer process killed mid-transaction
def test_writer_killed_mid_transaction_leaves_no_partial_run(tmp_path):
    db = tmp_path / "w.duckdb"
    first = ingest_results(simple_run(tmp_path / "a", control_name="a"), db)
    # more rows than one DuckDB row group (122,880), so rows reach the file before COMMIT
    n = 62_000
    values = {("pub", f"q{i:05d}"): {"nDCG@10": (i % 7) / 8, "MRR": 1 / (1 + i % 5)}
              for i in range(n)}
    big = build_results(tmp_path / "big", values, corpora={"pub": ("A", "MIT")},
                        control_name="big")
    big_id = json.loads((big / "runinfo.json").read_text())["run_id"]
    writer = spawn(KILLED_WRITER, db, big)
    try:
        Lines(writer).wait_for("IN_TRANSACTION", timeout=120)
        os.kill(writer.pid, signal.SIGKILL)
    finally:
        writer.wait(timeout=30)
    assert writer.returncode == -signal.SIGKILL
    with connect(db, read_only=True) as conn:
        assert _counts(conn, big_id) == (0, 0, 0, 0, 0)
        assert _counts(conn, first.run_id) == (1, 1, 2, 6, 4)
        assert conn.query_one("SELECT count(*) FROM per_query")[0] == 6
    # the next writer gets in at once (the kernel dropped the dead writer's lock)
    report = store(load_results(big), db, timeout=5)
    assert report.inserted
    with connect(db, read_only=True) as conn:
        assert _counts(conn, big_id) == (1, 1, 2, 2 * n, 4)


HOLD_LOCK = """
    import sys, time
    from warehouse.lock import WriterLock
    with WriterLock(sys.argv[1], 5):
        print("LOCKED", flush=True)
        time.sleep(60)
"""

HOLD_WRITER = """
    import sys, time
    from warehouse import connect
    with connect(sys.argv[1], read_only=False):
        print("OPEN", flush=True)
        time.sleep(60)
"""

HOLD_READER = """
    import sys, time
    from warehouse import connect
    with connect(sys.argv[1], read_only=True):
        print("OPEN", flush=True)
        time.sleep(60)
"""


@pytest.fixture
def ingested(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_results(simple_run(tmp_path / "r"), db)
    return db


def _holding(code, db, ready):
    proc = spawn(code, db)
    Lines(proc).wait_for(ready)
    return proc


def _release(proc):
    proc.kill()
    proc.wait(timeout=30)


def test_second_writer_waits_a_bounded_time_and_names_the_holder(ingested):
    holder = _holding(HOLD_LOCK, ingested, "LOCKED")
    try:
        stamp = change_stamp(ingested)  # needs no lock
        started = time.monotonic()
        with pytest.raises(WarehouseBusy, match=rf"being written by pid {holder.pid} .*waited"):
            with connect(ingested, read_only=False, timeout=0.5):
                pass
        assert time.monotonic() - started < 10
        assert change_stamp(ingested) == stamp
    finally:
        _release(holder)
    with connect(ingested, read_only=False, timeout=5):
        pass


def test_reader_gives_up_with_a_clear_busy_message_while_a_writer_is_in(ingested):
    holder = _holding(HOLD_WRITER, ingested, "OPEN")
    try:
        with pytest.raises(WarehouseBusy, match=rf"warehouse busy: .* pid {holder.pid} "):
            with connect(ingested, read_only=True, timeout=0.3):
                pass
    finally:
        _release(holder)
    with connect(ingested, read_only=True, timeout=5) as conn:
        assert conn.query_one("SELECT count(*) FROM runs")[0] == 1


def test_writer_waits_for_readers_and_names_them(ingested):
    holder = _holding(HOLD_READER, ingested, "OPEN")
    try:
        with pytest.raises(WarehouseBusy, match=rf"process {holder.pid}"):
            with connect(ingested, read_only=False, timeout=0.3):
                pass
    finally:
        _release(holder)
