"""Warehouse speed: bulk ingest against row-by-row inserts, and queries over a big warehouse.

1. A results directory with 1,000,000 per-query rows through ``ingest_results`` (read,
   check, insert; target <= 10 s), beside the same path with row-by-row inserts on a
   10,000-row sample, as a rate ratio (and the insert phase alone, likewise).
2. A warehouse of 10,000,000 per-query rows generated inside DuckDB: the publishable metric
   table and the latency percentiles, each timed as open + query + close through the
   public query functions (target <= 0.5 s each), plus a bare open + query + close.

Timings are printed, never asserted.  ``--quick`` uses a tenth of the sizes.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

MEASURES = ("nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "P@5", "P@10", "MRR", "AP")
CLASSES = ("lookup", "summarize", "count")


def insert_row_by_row(conn, table: str, frame) -> int:
    """One INSERT per row: the baseline ``warehouse.ingest.insert_bulk`` is measured against
    (an ``inserter`` for ``warehouse.ingest.store``; ingest never uses it)."""
    from warehouse.db import identifier

    columns = list(frame.column_names)
    sql = (f"INSERT INTO {identifier(table)} ({', '.join(identifier(c) for c in columns)}) "
           f"VALUES ({', '.join('?' for _ in columns)})")
    for row in frame.to_pylist():
        conn.execute(sql, [row[c] for c in columns])
    return len(frame)


def write_results_dir(out: Path, n_rows: int, name: str) -> Path:
    """A real results directory with ``n_rows`` per-query rows (10 measures per query).

    per_query.jsonl is written directly in canonical form (sorted keys, short floats),
    since building a million dicts for ``write_results`` would dominate the setup.
    """
    from harness.claims.metrics import PER_QUERY
    from harness.evaluation.results import write_results

    n_queries = n_rows // len(MEASURES)
    sums = {(c, m): [0.0, 0] for c in (*CLASSES, "all") for m in MEASURES}
    lines = []
    for q in range(n_queries):
        cls = CLASSES[q % 3]
        for j, measure in enumerate(MEASURES):
            value = ((q * 7 + j * 13) % 1000) / 1000
            for key in ((cls, measure), ("all", measure)):
                sums[key][0] += value
                sums[key][1] += 1
            lines.append(f'{{"answered":true,"corpus":"bench","measure":"{measure}",'
                         f'"query_class":"{cls}","query_id":"q{q:07d}","tier":"A",'
                         f'"value":{value!r}}}\n')
    rows = [{"corpus": "bench", "tier": "A", "query_class": c,
             "n": sums[(c, MEASURES[0])][1],
             "metrics": {m: sums[(c, m)][0] / sums[(c, m)][1] for m in MEASURES},
             "queries_unanswered": 0, "queries_dropped_unjudgeable": 0}
            for c in (*sorted(CLASSES), "all")]
    metrics = {
        "schema_version": 1, "control_name": name,
        "corpora": [{"name": "bench", "version": "1", "licence": "CC0-1.0", "tier": "A",
                     "sha256": None, "files": None, "chunks": None}],
        "index": None, "retrieval": {"source": "benchmark"},
        "metric_engine": {"name": "pytrec_eval_terrier", "version": "0.5.10"},
        "relevance_policy": {"binary": False}, "rows": rows,
    }
    out = write_results(out, metrics, metrics_md=f"# {name}\n")
    (out / PER_QUERY).write_text("".join(lines), encoding="utf-8")
    return out


def _median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _row(benchmark, ours, unit, target=None, ok=None, baseline=None, ratio=None):
    return {"benchmark": benchmark, "ours": ours, "baseline": baseline, "unit": unit,
            "ratio": ratio, "target": target, "ok": ok}


def _ingest_rows(root: Path, quick: bool) -> list[dict]:
    from warehouse import ingest_results
    from warehouse.ingest import store
    from warehouse.load import load_results

    big_n = 100_000 if quick else 1_000_000
    sample_n = 2_000 if quick else 10_000
    big = write_results_dir(root / "big", big_n, "bench-big")
    sample = write_results_dir(root / "sample", sample_n, "bench-sample")

    started = time.perf_counter()
    ingest_results(big, root / "bulk.duckdb")
    full = time.perf_counter() - started

    started = time.perf_counter()
    prepared = load_results(big)
    load_s = time.perf_counter() - started
    started = time.perf_counter()
    store(prepared, root / "bulk2.duckdb")
    insert_s = time.perf_counter() - started
    del prepared

    started = time.perf_counter()
    prepared = load_results(sample)
    sample_load = time.perf_counter() - started
    started = time.perf_counter()
    store(prepared, root / "rows.duckdb", inserter=insert_row_by_row)
    sample_insert = time.perf_counter() - started

    bulk_rate = big_n / full
    rows_rate = sample_n / (sample_load + sample_insert)
    bulk_insert_rate = big_n / insert_s
    rows_insert_rate = sample_n / sample_insert
    return [
        _row(f"ingest {big_n:,} per-query rows (read+check+insert)", full, "s",
             target="<= 10 s" if not quick else None, ok=full <= 10 if not quick else None),
        _row(f"  of which read+check {big_n:,} rows", load_s, "s"),
        _row(f"  of which insert {big_n:,} rows (one transaction)", insert_s, "s"),
        _row(f"ingest rate: bulk ({big_n:,}) vs row-by-row ({sample_n:,} sample)", bulk_rate,
             "rows/s", baseline=rows_rate, ratio=bulk_rate / rows_rate),
        _row(f"insert rate: Arrow bulk vs row-by-row ({sample_n:,} sample)", bulk_insert_rate,
             "rows/s", baseline=rows_insert_rate, ratio=bulk_insert_rate / rows_insert_rate),
    ]


def _query_rows(root: Path, quick: bool) -> list[dict]:
    from warehouse import connect, queries
    from benchmarks.synthetic_warehouse import build_synthetic_warehouse

    runs = 20
    # 10 runs over both corpora and 10 over the tier-A one only (mixed_every=2), 10 measures:
    # 33,334 queries per corpus make 10,000,200 per-query rows (the 10 million)
    per_corpus = 3_334 if quick else 33_334
    db = root / "big.duckdb"
    started = time.perf_counter()
    counts = build_synthetic_warehouse(db, runs=runs, queries_per_corpus=per_corpus,
                                       latency_samples=2_000)
    built = time.perf_counter() - started
    n = counts["per_query"]

    def bare():
        with connect(db, read_only=True) as conn:
            conn.query_one("SELECT 1")

    queries.runs(db_path=db)  # first call pays pandas' lazy imports, not the warehouse
    repeats = 5
    table = _median_time(lambda: queries.metric_table("publishable", db_path=db), repeats)
    latency = _median_time(lambda: queries.latency(db_path=db), repeats)
    pair = _median_time(lambda: queries.per_query_pair(
        "synthetic-0001", "synthetic-0003", "nDCG@10", "publishable", db_path=db), repeats)
    opened = _median_time(bare, repeats)
    return [
        _row(f"generate a warehouse of {n:,} per-query rows in DuckDB", built, "s"),
        _row(f"publishable metric table, open+query+close ({n:,} rows)", table, "s",
             target="<= 0.5 s", ok=table <= 0.5),
        _row(f"latency p50/p95/p99 per run in SQL, open+query+close ({runs} runs)", latency,
             "s", target="<= 0.5 s", ok=latency <= 0.5),
        _row(f"per-query pair of two runs, publishable ({per_corpus:,} queries)", pair, "s"),
        _row("open + trivial query + close (read-only, schema checked)", opened, "s"),
    ]


def run(quick: bool) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="bench-warehouse-") as tmp:
        root = Path(tmp)
        return _ingest_rows(root, quick) + _query_rows(root, quick)
