"""Ctrl-C at every point of ingest and export: exit 130, one line, nothing half-stored (#16).

The review's repro: SIGINT inside the ingest transaction ended in a DuckDB traceback
(``TransactionException ... please ROLLBACK``) with exit 1.  Each case here runs the real CLI
in a child process that sends itself SIGINT at one point (a query made long enough that the
signal lands inside DuckDB, or a synchronous signal between two steps) and checks the exit
code, the single line on stderr and that the warehouse (or the export) is as it was.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from tests.user_files import snapshot
from tests.warehouse.builders import simple_run
from warehouse import connect, ingest_results

REPO = Path(__file__).resolve().parents[2]

#: a query DuckDB takes minutes over, in many pipelines: DuckDB looks for a pending Ctrl-C
#: between tasks, so the signal always lands inside it and is seen at once
SLOW = " UNION ALL ".join(f"SELECT count(*) AS n FROM range({100_000_000 + i})"
                          for i in range(300))

CHILD = """
    import os, signal, sys, threading, time
    import duckdb
    import warehouse.db as db
    from warehouse import ingest, load

    point, argv = sys.argv[1], sys.argv[2:]

    def sigint():
        os.kill(os.getpid(), signal.SIGINT)

    def soon():
        threading.Timer(0.3, sigint).start()

    execute = db.Connection.execute
    def patched_execute(self, sql, params=None):
        if point == "insert" and sql.startswith('INSERT INTO "per_query"'):
            soon()  # an insert long enough to be cut inside DuckDB
            sql += " CROSS JOIN (" + SLOW + ") AS slow"
        if point == "commit" and sql == "COMMIT":
            sigint()  # arrives as the COMMIT starts
        return execute(self, sql, params)
    db.Connection.execute = patched_execute

    check = load._check_per_query
    def patched_check(*args):
        if point == "load":  # DuckDB's own report of the interrupt: RuntimeError
            soon()
            duckdb.connect().execute(SLOW).fetchall()
        return check(*args)
    load._check_per_query = patched_check

    hooked = []
    def hook(run_id):
        hooked.append(run_id)
        if point == "hook" or point == "second-hook" and len(hooked) == 2:
            sigint()
    ingest.in_transaction_hook = hook

    query_df = db.Connection.query_df
    def patched_query_df(self, sql, params=None):
        if point == "query":
            soon()
            self._run(SLOW, None).fetchall()
        return query_df(self, sql, params)
    db.Connection.query_df = patched_query_df

    if point == "render":
        from warehouse import exports
        exports.render = lambda export, fmt: sigint()

    if point == "rename":
        real = os.replace
        def replace(src, dst):
            if ".tmp-" in str(src):
                sigint()  # held back: the renames go through together
            return real(src, dst)
        os.replace = replace

    if argv[0] == "harness":
        from harness.cli import main
        argv = argv[1:]
    else:
        from warehouse.cli import main
    sys.exit(main(argv))
""".replace("SLOW", repr(SLOW))


def child(point: str, *argv) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(CHILD), point, *map(str, argv)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=180)


def contents(db) -> list:
    with connect(db, read_only=True) as conn:
        return [conn.query_all(f"SELECT * FROM {t} ORDER BY ALL") for t in
                ("runs", "corpora", "metric_rows", "per_query", "run_files", "documents")]


@pytest.fixture
def warehouse(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_results(simple_run(tmp_path / "first", control_name="first"), db)
    new = simple_run(tmp_path / "new", n_queries=40, control_name="new", offset=0.1)
    return db, new


@pytest.mark.parametrize("point", ["load", "insert", "hook"])
def test_an_interrupted_ingest_stores_nothing_and_says_so_in_one_line(warehouse, point):
    db, new = warehouse
    before = contents(db)
    proc = child(point, "ingest", new, "--db", db)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == f"interrupted: nothing of {new} was stored\n"
    assert proc.stdout == ""
    assert contents(db) == before
    # no lock or half-transaction left: the same directory goes in at once
    assert ingest_results(new, db).inserted


def test_an_interrupt_after_earlier_runs_names_what_was_stored(warehouse, tmp_path):
    db, new = warehouse
    other = simple_run(tmp_path / "other", control_name="other", offset=0.2)
    proc = child("second-hook", "ingest", other, new, "--db", db)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.splitlines()[-1] == (f"interrupted: nothing of {new} was stored (1 given "
                                            "before it was stored whole)")
    assert "Traceback" not in proc.stderr and proc.stdout.count("ingested run") == 1
    assert not ingest_results(other, db).inserted and ingest_results(new, db).inserted


def test_an_interrupt_during_the_commit_waits_for_it_and_stops(warehouse):
    db, new = warehouse
    proc = child("commit", "ingest", new, "--db", db)
    assert proc.returncode == 130, proc.stderr
    assert "ingested run" in proc.stdout
    assert proc.stderr == (f"interrupted: stopped after {new}, which was stored whole; nothing "
                           "after it was stored\n")
    assert not ingest_results(new, db).inserted  # it is there, whole


def test_harness_score_interrupted_while_publishing(tmp_path):
    from tests.harness.cli.helpers import make_inputs

    qrels, run, _ = make_inputs(tmp_path)
    db, out = tmp_path / "w.duckdb", tmp_path / "scored"
    ingest_results(simple_run(tmp_path / "first", control_name="first"), db)
    before = contents(db)
    proc = child("insert", "harness", "score", "--qrels", qrels, "--run", run, "--out", out,
                 "--db", db)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr.splitlines()[-1] == "interrupted: nothing half-written was kept"
    assert "Traceback" not in proc.stderr
    assert contents(db) == before
    assert ingest_results(out, db).inserted  # the results directory was written whole


@pytest.mark.parametrize("point", ["query", "render"])
def test_an_interrupted_export_writes_nothing(warehouse, point):
    db, _ = warehouse
    out = db.parent / "table.csv"
    assert child("none", "export", "--view", "internal", "--format", "csv", "--db", db,
                 "--out", out).returncode == 0
    before = snapshot(db.parent)
    proc = child(point, "export", "--view", "internal", "--format", "md", "--db", db,
                 "--out", out)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "interrupted: nothing was written\n"
    assert snapshot(db.parent) == before


def test_an_interrupt_while_the_export_is_put_in_place_lets_it_finish(warehouse):
    db, _ = warehouse
    out = db.parent / "table.md"
    proc = child("rename", "export", "--view", "internal", "--format", "md", "--db", db,
                 "--out", out)
    assert proc.returncode == 130, proc.stderr
    assert proc.stderr == "interrupted: what is reported above was completed and kept\n"
    assert f"wrote {out}" in proc.stdout
    # an internal export: its stamp, then the table
    assert out.read_text().startswith("**INTERNAL: not for publication**\n\n| run |")
    assert (db.parent / "table.md.provenance.json").is_file()
    assert not [p for p in db.parent.iterdir() if ".tmp-" in p.name]


def test_duckdb_reports_an_interrupted_query_as_keyboard_interrupt(tmp_path):
    """In-process: a Ctrl-C that lands inside DuckDB surfaces as KeyboardInterrupt, not as
    DuckDB's RuntimeError, through every read and write path of the connection."""
    db = tmp_path / "w.duckdb"
    ingest_results(simple_run(tmp_path / "r"), db)
    for read_only, call, sql in ((True, "query_all", SLOW), (True, "query_df", SLOW),
                                 (False, "execute", f"CREATE TEMP TABLE slow AS {SLOW}")):
        timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
        started = time.monotonic()
        with connect(db, read_only=read_only) as conn:
            timer.start()
            with pytest.raises(KeyboardInterrupt):
                getattr(conn, call)(sql)
        timer.join()
        assert time.monotonic() - started < 60
