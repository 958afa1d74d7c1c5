"""Team mode under load, through a real S3 API (moto's server on 127.0.0.1).

1. 50 concurrent submitters x 20 runs each (``harness.core.submissions.submit``, one boto3
   client per submitter) while one ingester process (``python -m warehouse ingest --watch``)
   applies them: every submission must be applied exactly once (0 lost, 0 duplicated);
   printed: ingest throughput (submissions applied per second, first to last apply) and the
   time from a submission's marker to its run being visible in ``internal.duckdb``
   (p50 / p95 / max).
2. 20 concurrent readers, each running the dashboard's publishable metric table
   (``warehouse.queries.metric_table``) over ``publishable.duckdb`` in a loop during the
   ingest: p50 / p95 latency of open + query + close, failed reads (target 0) and partial
   snapshots seen (a run whose metric rows are not all there; target 0).  A reader pauses
   50 ms between queries, as a person at the dashboard does.

``--quick``: 10 submitters x 4 runs, 5 readers.  Timings are printed, never asserted.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
#: a dashboard reader's pause between two queries (a person clicking, not a tight loop)
THINK_SECONDS = 0.05
#: how long the ingester is given, after the last submission, to make every one visible
DEADLINE_SECONDS = 1800


def _row(benchmark, ours, unit, target=None, ok=None, baseline=None, ratio=None):
    return {"benchmark": benchmark, "ours": ours, "baseline": baseline, "unit": unit,
            "ratio": ratio, "target": target, "ok": ok}


def _pct(values, q):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _runs(root: Path, n: int) -> list[Path]:
    from tests.warehouse.builders import simple_run

    return [simple_run(root / f"run{i:04d}", control_name=f"run{i:04d}", offset=i / 100000)
            for i in range(n)]


def run(quick: bool) -> list[dict]:
    from tests.servers import s3

    ok, why = s3.available()
    if not ok:
        print(f"   skipped: {why}")
        return []
    submitters, each, n_readers = (10, 4, 5) if quick else (50, 20, 20)
    server = s3.start_server()
    os.environ.update(server.env)
    tmp = tempfile.TemporaryDirectory(prefix="bench-team-")
    root = Path(tmp.name)
    ingester = None
    try:
        server.create_bucket("bench-team")
        url = "s3://bench-team/team"
        dirs = _runs(root / "runs", submitters * each)
        snaps = root / "snaps"
        ingester = subprocess.Popen(
            [sys.executable, "-m", "warehouse", "ingest", "--watch", url, "--snapshots",
             str(snaps), "--poll", "0.1", "--lease-ttl", "30"],
            cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        submitted: dict[str, float] = {}
        visible: dict[str, float] = {}
        lock = threading.Lock()
        done = threading.Event()
        errors: list[str] = []

        def submitter(batch):
            from harness.core.store import S3Store
            from harness.core.submissions import submit

            with lock:
                store = S3Store("bench-team", "team", endpoint_url=server.url)
                store._boto()  # boto3 client creation is not thread-safe: made under the lock
            for path in batch:
                try:
                    digest = submit(path, store).digest
                except Exception as exc:  # counted, printed below
                    errors.append(f"{path.name}: {exc}")
                    continue
                with lock:
                    submitted[digest] = time.monotonic()

        def watcher():
            import duckdb

            path = snaps / "internal.duckdb"
            while not done.is_set():
                if path.exists():
                    try:
                        con = duckdb.connect(str(path), read_only=True)
                        try:
                            seen = [d for (d,) in con.execute(
                                "SELECT digest FROM submissions").fetchall()]
                        finally:
                            con.close()
                    except duckdb.Error:
                        seen = []
                    now = time.monotonic()
                    with lock:
                        for digest in seen:
                            visible.setdefault(digest, now)
                time.sleep(0.05)

        latencies: list[float] = []
        failures: list[str] = []
        partial = [0]

        def reader():
            from warehouse import queries

            path = snaps / "publishable.duckdb"
            while not done.is_set():
                if not path.exists():
                    time.sleep(0.05)
                    continue
                started = time.perf_counter()
                try:
                    table = queries.metric_table("publishable", db_path=path)
                except Exception as exc:  # a failed read is what is measured
                    failures.append(f"{type(exc).__name__}: {exc}")
                    continue
                latencies.append(time.perf_counter() - started)
                # every run of this benchmark has 2 measures x 1 row: a run with fewer
                # rows would be a snapshot seen half-written
                counts = table.groupby("run_id").size() if len(table) else []
                if any(c != 2 for c in counts):
                    partial[0] += 1
                time.sleep(THINK_SECONDS)

        threads = [threading.Thread(target=watcher)]
        threads += [threading.Thread(target=reader) for _ in range(n_readers)]
        for t in threads:
            t.start()
        started = time.monotonic()
        batches = [dirs[i * each:(i + 1) * each] for i in range(submitters)]
        workers = [threading.Thread(target=submitter, args=(b,)) for b in batches]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        submit_seconds = time.monotonic() - started
        deadline = time.monotonic() + DEADLINE_SECONDS
        while time.monotonic() < deadline:
            with lock:
                if len(visible) >= len(submitted):
                    break
            time.sleep(0.2)
        else:
            print(f"   deadline: not every submission was visible {DEADLINE_SECONDS} s after "
                  "the last was submitted")
        done.set()
        for t in threads:
            t.join()
        ingester.kill()
        ingester.wait(30)

        import duckdb

        con = duckdb.connect(str(snaps / "warehouse.duckdb"), read_only=True)
        try:
            applied, distinct, first, last = con.execute(
                "SELECT count(*), count(DISTINCT digest), min(applied_at), max(applied_at) "
                "FROM submissions WHERE state = 'applied'").fetchone()
            runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
        finally:
            con.close()
        total = submitters * each
        lost = total - distinct
        duplicated = applied - distinct + (runs - distinct if runs > distinct else 0)
        span = (last - first).total_seconds() if applied > 1 else None
        delays = [visible[d] - submitted[d] for d in submitted if d in visible]
        print(f"   {total} submissions by {submitters} submitters in {submit_seconds:.1f} s; "
              f"{len(errors)} submit errors{': ' + errors[0] if errors else ''}")
        print(f"   readers: {len(latencies)} reads, {len(failures)} failed"
              f"{': ' + failures[0] if failures else ''}")
        return [
            _row(f"team: submissions applied exactly once ({submitters}x{each})", distinct,
                 "submissions", target=f"{total}", ok=(lost == 0 and duplicated == 0)),
            _row("team: submissions lost", lost, "submissions", target="0", ok=lost == 0),
            _row("team: submissions applied twice", duplicated, "submissions", target="0",
                 ok=duplicated == 0),
            _row("team: ingest throughput", (applied - 1) / span if span else None,
                 "submissions/s"),
            _row("team: submit to visible p50", _pct(delays, 0.5), "s"),
            _row("team: submit to visible p95", _pct(delays, 0.95), "s"),
            _row("team: submit to visible max", max(delays) if delays else None, "s"),
            _row(f"team: reader latency p50 ({n_readers} readers during ingest)",
                 _pct(latencies, 0.5), "s"),
            _row("team: reader latency p95", _pct(latencies, 0.95), "s"),
            _row("team: failed reads", len(failures), "reads", target="0", ok=not failures),
            _row("team: partial snapshots seen", partial[0], "reads", target="0",
                 ok=partial[0] == 0),
            _row("team: reads during ingest", len(latencies), "reads"),
        ]
    finally:
        if ingester is not None and ingester.poll() is None:
            ingester.kill()
            ingester.wait(30)
        server.stop()
        tmp.cleanup()
