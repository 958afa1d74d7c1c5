"""``make team-demo --no-serve``: the demo's store, keys, submissions and ingester end with
the signed publishable runs alone in publishable.duckdb."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.warehouse.team_builders import REPO, read


@pytest.mark.service
def test_the_team_demo_publishes_only_signed_publishable_runs(tmp_path):
    done = subprocess.run([sys.executable, str(REPO / "tools" / "team_demo.py"), "--no-serve",
                           "--dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "capped at tier B" in done.stdout and "unsigned: no signature.json" in done.stdout
    snaps = tmp_path / "snapshots"
    assert read(snaps / "publishable.duckdb", "SELECT control_name FROM runs ORDER BY 1") == \
        [("bm25-cc-by",), ("bm25-mit",)]
    assert read(snaps / "internal.duckdb", "SELECT control_name, tier FROM runs ORDER BY 1") == \
        [("bm25-cc-by", "A"), ("bm25-mit", "A"), ("bm25-noncommercial", "B"),
         ("bm25-unsigned", "B")]
