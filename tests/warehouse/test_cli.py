"""``python -m warehouse``: the module entry point, run as a real process."""

from __future__ import annotations

from warehouse.schema import available

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.warehouse.builders import simple_run

REPO = Path(__file__).resolve().parents[2]


def run(*args, env_db=None):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    if env_db is not None:
        env["HARNESS_WAREHOUSE"] = str(env_db)
    return subprocess.run([sys.executable, "-m", "warehouse", *map(str, args)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=120)


def test_ingest_info_migrate_from_the_command_line(tmp_path):
    db = tmp_path / "w.duckdb"
    a = simple_run(tmp_path / "a", control_name="a")
    b = simple_run(tmp_path / "b", control_name="b", offset=0.05)
    bad = simple_run(tmp_path / "bad", control_name="bad", offset=0.07)
    (bad / "per_query.jsonl").write_text('{"corpus": "pub"}\n')
    done = run("ingest", a, b, bad, a, env_db=db)  # the database comes from the environment
    assert done.returncode == 2, done.stderr
    assert done.stdout.count("ingested run") == 2
    assert "(a) is already in" in done.stdout
    assert "refused" in done.stderr and "per_query.jsonl:1: field 'tier': missing" in done.stderr
    info = run("info", "--db", db)
    assert info.returncode == 0, info.stderr
    health = json.loads(info.stdout)
    assert health["runs"] == 2 and health["corpora_by_tier"] == {"A": ["pub"]}
    again = run("migrate", "--db", db)
    latest = max(m.version for m in available())
    assert again.returncode == 0 and f"up to date at version {latest}" in again.stdout
    missing = run("info", "--db", tmp_path / "absent.duckdb")
    assert missing.returncode == 1 and "no warehouse at" in missing.stderr


def test_harness_score_publishes_into_the_warehouse(tmp_path, capsys):
    """The harness's own output (classes, an unanswered query, ties) passes every check."""
    from harness.cli import main as harness_main
    from warehouse import queries

    toy = REPO / "examples" / "toy"
    db = tmp_path / "w.duckdb"
    code = harness_main(["score", "--qrels", str(toy / "qrels.txt"), "--run", str(toy / "run.txt"),
                         "--query-classes", str(toy / "classes.tsv"), "--corpus-name", "toy",
                         "--tier", "A", "--licence", "CC0-1.0", "--out", str(tmp_path / "toy"),
                         "--db", str(db)])
    assert code == 0
    assert "ingested run" in capsys.readouterr().out
    table = queries.metric_table("publishable", classes=["all"], measures=["MRR"], db_path=db)
    claim = json.loads((tmp_path / "toy" / "metrics.json").read_text())
    expected = [r["metrics"]["MRR"] for r in claim["rows"] if r["query_class"] == "all"]
    assert table.value.tolist() == expected
