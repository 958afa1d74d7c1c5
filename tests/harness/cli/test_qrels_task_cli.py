"""``harness qrels task`` (issue 38 item 3): a pool made self-contained for the Judge page,
ingested by the command it prints; bad input exits 2 naming what is wrong, and an existing
task is never overwritten by another."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

from harness.claims.judging import read_task
from tests.harness.cli.label_helpers import RUN, _beir, _harness


def test_a_task_from_a_pool_is_ingested_by_the_printed_command(tmp_path):
    beir = _beir(tmp_path)
    (tmp_path / "run.trec").write_text(RUN)
    assert _harness("pool", "run.trec", "--out", "pool.jsonl", cwd=tmp_path).returncode == 0
    args = ["qrels", "task", "--pool", "pool.jsonl", "--corpus", f"beir:{beir}", "--queries",
            str(beir / "queries.jsonl"), "--overlap", "0.5", "--out", "task"]
    done = _harness(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    task = read_task(tmp_path / "task")
    # the pool's order: q1 d1, q2 d3 (rank 1 of one run each), then q1 d2
    assert [(p.query_id, p.doc_id) for p in task.pairs] == [("q1", "d1"), ("q2", "d3"),
                                                            ("q1", "d2")]
    assert task.tier == "B" and task.overlap == 0.5  # a BEIR corpus of unknown licence
    assert task.queries == {"q1": "recording equipment", "q2": "recording budget"}
    assert task.documents["d2"] == "lunch menu"
    assert f"judging task {task.name!r} ({task.task_id[:12]}): 3 pairs over 2 queries, " \
           "tier B" in done.stdout and task.name.endswith(" depth 10")
    again = _harness(*args, cwd=tmp_path)  # the same task again: the same bytes, no error
    assert again.returncode == 0 and read_task(tmp_path / "task").task_id == task.task_id
    line = next(x for x in done.stdout.splitlines() if "put it on the Judge page: " in x)
    command = line.split("put it on the Judge page: ", 1)[1].split("   (", 1)[0]
    argv = shlex.split(command)
    assert argv[:4] == ["python", "-m", "warehouse", "ingest"]
    ingest = subprocess.run([sys.executable, *argv[1:]], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300,
                            env={**os.environ, "HARNESS_WAREHOUSE": str(tmp_path / "w.duckdb")})
    assert ingest.returncode == 0, ingest.stderr
    from warehouse import queries

    held = queries.judging_tasks("internal", db_path=tmp_path / "w.duckdb")
    assert list(held.task_id) == [task.task_id] and list(held.tier) == ["B"]


def test_bad_input_exits_2_and_keeps_an_existing_task(tmp_path):
    beir = _beir(tmp_path)
    (tmp_path / "run.trec").write_text(RUN)
    _harness("pool", "run.trec", "--out", "pool.jsonl", cwd=tmp_path)
    base = ["qrels", "task", "--pool", "pool.jsonl", "--corpus", f"beir:{beir}"]
    # without --queries the BEIR loader holds only q1 (the judged query): q2 has no text
    done = _harness(*base, "--out", "task", cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "pair (q2, d3) has no text" in done.stderr and "--queries" in done.stderr
    assert not (tmp_path / "task").exists()
    bad = _harness(*base, "--queries", str(beir / "queries.jsonl"), "--overlap", "2",
                   "--out", "task", cwd=tmp_path)
    assert bad.returncode == 2 and "[0, 1]" in bad.stderr
    ok = _harness(*base, "--queries", str(beir / "queries.jsonl"), "--out", "task", cwd=tmp_path)
    assert ok.returncode == 0
    before = (tmp_path / "task" / "task.json").read_bytes()
    other = _harness(*base, "--queries", str(beir / "queries.jsonl"), "--overlap", "0.9",
                     "--out", "task", cwd=tmp_path)
    assert other.returncode == 2 and "holds another task" in other.stderr
    assert (tmp_path / "task" / "task.json").read_bytes() == before
    assert json.loads(before)["overlap"] == 0.2
