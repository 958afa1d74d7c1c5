"""The team ingester under faults: SIGKILLed at random points and restarted (nothing lost,
nothing applied twice), two ingesters on one store, a forged submission never published."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time

import pytest

from harness.core.store import open_store
from tests.warehouse.signing_builders import keys
from tests.warehouse.team_builders import (REPO, ingest_command, make_runs, read, run_ingester,
                                           submit_all, tier_values)


def check_exactly_once(snaps, digests, runs_each=1):
    db = snaps / "warehouse.duckdb"
    rows = read(db, "SELECT digest, state, count(*) OVER () FROM submissions")
    assert sorted(d for d, _, _ in rows) == sorted(digests)
    assert {s for _, s, _ in rows} == {"applied"}
    assert read(db, "SELECT count(*), count(DISTINCT run_id) FROM runs") == \
        [(len(digests), len(digests))]
    # 3 queries x 2 measures per run, each stored once
    assert read(db, "SELECT count(*) FROM per_query") == [(len(digests) * 3 * 2,)]
    assert read(db, "SELECT count(*) FROM (SELECT run_id, corpus, query_id, measure "
                    "FROM per_query GROUP BY ALL HAVING count(*) > 1)") == [(0,)]
    assert read(snaps / "internal.duckdb", "SELECT count(*) FROM runs") == [(len(digests),)]


def kill_repeatedly(url, snaps, kills, seed, env=None, window=(0.3, 2.5)):
    """Start the watching ingester and SIGKILL it ``kills`` times at random moments."""
    rng = random.Random(seed)
    landed = 0
    for _ in range(kills):
        proc = subprocess.Popen(ingest_command(url, snaps, "--poll", "0.05", "--lease-ttl", "1"),
                                cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(*window))
        if proc.poll() is None:
            landed += 1
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    return landed


def _store(tmp_path, request, kind):
    if kind == "s3":
        return request.getfixturevalue("s3_bucket"), {**os.environ,
                                                      **request.getfixturevalue("s3_server").env}
    (tmp_path / "store").mkdir()
    return str(tmp_path / "store"), None


@pytest.mark.slow  # five ingester processes killed in turn
def test_sigkilled_at_random_points_nothing_is_lost_or_applied_twice(tmp_path, request):
    url, env = _store(tmp_path, request, "directory")
    digests = submit_all(make_runs(tmp_path / "runs", 12), open_store(url))
    assert kill_repeatedly(url, tmp_path / "snaps", 5, seed=30, env=env) >= 4
    done = run_ingester(url, tmp_path / "snaps", "--lease-ttl", "1", env=env)
    assert done.returncode == 0, done.stderr
    check_exactly_once(tmp_path / "snaps", digests)


@pytest.mark.slow
@pytest.mark.service
def test_sigkilled_twenty_times_through_the_s3_api(tmp_path, request):
    url, env = _store(tmp_path, request, "s3")
    digests = submit_all(make_runs(tmp_path / "runs", 40), open_store(url))
    assert kill_repeatedly(url, tmp_path / "snaps", 22, seed=20, env=env,
                           window=(0.2, 3.0)) >= 20
    done = run_ingester(url, tmp_path / "snaps", "--lease-ttl", "1", env=env)
    assert done.returncode == 0, done.stderr
    check_exactly_once(tmp_path / "snaps", digests)


@pytest.mark.service
def test_two_ingesters_on_one_store_apply_each_submission_once(tmp_path, request):
    url, env = _store(tmp_path, request, "s3")
    store = open_store(url)
    runs = make_runs(tmp_path / "runs", 16)
    logs = [open(tmp_path / f"ingester{i}.log", "w") for i in range(2)]
    procs = [subprocess.Popen(ingest_command(url, tmp_path / "snaps", "--poll", "0.05",
                                             "--lease-ttl", "2"),
                              cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
             for log in logs]
    try:
        digests = []
        for run in runs:  # submitted while both ingesters are running
            digests += submit_all([run], store)
            time.sleep(0.05)
        procs[0].send_signal(signal.SIGKILL)  # the first may hold the lease: the other takes over
        deadline = time.monotonic() + 120
        db = tmp_path / "snaps" / "warehouse.duckdb"
        while time.monotonic() < deadline:
            try:
                if read(db, "SELECT count(*) FROM submissions") == [(len(digests),)]:
                    break
            except Exception:  # the writer holds the file this instant
                pass
            time.sleep(0.3)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGKILL)
            proc.wait(30)
        for log in logs:
            log.close()
    run_ingester(url, tmp_path / "snaps", "--lease-ttl", "1", env=env)  # publish what is last
    check_exactly_once(tmp_path / "snaps", digests)
    text = "".join((tmp_path / f"ingester{i}.log").read_text() for i in range(2))
    assert "standing by: the lease is held by" in text


def test_a_forged_submission_never_reaches_the_publishable_snapshot(tmp_path):
    """A non-commercial corpus relabelled with a publishable licence: pins consistent (the
    harness wrote it), but signed by nobody the team trusts."""
    ci, forger, trusted = keys(tmp_path)
    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    honest = submit_all(make_runs(tmp_path / "honest", 1, prefix="honest", key=ci), store)
    forged = submit_all(make_runs(tmp_path / "forged", 1, prefix="forged", key=forger)
                        + make_runs(tmp_path / "plain", 1, prefix="plain"), store)
    done = run_ingester(str(tmp_path / "store"), tmp_path / "snaps", "--trusted-keys",
                        str(trusted))
    assert done.returncode == 0, done.stderr
    for digest in forged:
        assert f"capped at tier B: submission {digest}" in done.stdout
    public = tmp_path / "snaps" / "publishable.duckdb"
    assert [n for (n,) in read(public, "SELECT control_name FROM runs")] == ["honest0"]
    assert tier_values(public) == {"A"}
    forged_ids = [r for (r,) in read(tmp_path / "snaps" / "internal.duckdb",
                                     "SELECT run_id FROM runs WHERE control_name <> 'honest0'")]
    assert len(forged_ids) == 2
    for table in ("runs", "metric_rows", "per_query", "corpora", "run_files"):
        assert read(public, f"SELECT count(*) FROM {table} WHERE list_contains(?, run_id)",
                    [forged_ids]) == [(0,)]
    assert honest
