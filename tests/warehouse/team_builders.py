"""Builders for the team-mode tests: submissions in a store, an ingester run, and what the
warehouse and its snapshots hold, read with plain DuckDB (independently of the ingester)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb

from harness.core.submissions import submit
from tests.warehouse.builders import simple_run

REPO = Path(__file__).resolve().parents[2]


def make_runs(root: Path, n: int, *, prefix: str = "run", key: Path | None = None) -> list[Path]:
    """``n`` distinct tier-A runs (3 queries each, values offset by i/1000), signed by
    ``key`` when given."""
    old = os.environ.pop("HARNESS_SIGNING_KEY", None)
    if key is not None:
        os.environ["HARNESS_SIGNING_KEY"] = str(key)
    try:
        return [simple_run(root / f"{prefix}{i}", control_name=f"{prefix}{i}",
                           offset=i / 1000) for i in range(n)]
    finally:
        os.environ.pop("HARNESS_SIGNING_KEY", None)
        if old is not None:
            os.environ["HARNESS_SIGNING_KEY"] = old


def submit_all(runs, store) -> list[str]:
    return [submit(r, store).digest for r in runs]


def ingest_command(url: str, snapshots: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "warehouse", "ingest", "--watch", url, "--snapshots",
            str(snapshots), *extra]


def run_ingester(url: str, snapshots: Path, *extra: str, env=None, timeout=300):
    return subprocess.run(ingest_command(url, snapshots, "--once", *extra), capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=REPO)


def read(path: Path, sql: str, params=None):
    con = duckdb.connect(str(path), read_only=True)
    try:
        return con.execute(sql, params or []).fetchall()
    finally:
        con.close()


def tier_values(path: Path) -> set[str]:
    """Every value of every ``tier`` column of every table in the file (but ``tier_ranks``,
    the tier order itself)."""
    found: set[str] = set()
    for table, in read(path, "SELECT table_name FROM information_schema.columns "
                             "WHERE column_name = 'tier' AND table_name IN (SELECT table_name "
                             "FROM information_schema.tables WHERE table_type = 'BASE TABLE') "
                             "AND table_name <> 'tier_ranks'"):
        found |= {t for (t,) in read(path, f'SELECT DISTINCT tier FROM "{table}"')}
    return found
