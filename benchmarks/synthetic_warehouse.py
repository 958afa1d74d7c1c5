"""A synthetic warehouse of any size, generated inside DuckDB (for the warehouse benchmark).

Rows are produced by SQL over ``range()`` with values from a seeded hash, so ten million
per-query rows take seconds rather than the minutes a results directory per run would.
The data is internally consistent (metric rows are the means of the per-query rows; pooled
rows take the most restrictive tier), but the runs' ``metrics_json`` is only a stub naming
the run and seed: these runs are not claims and must never share a file with real ones.

Every ``mixed_every``-th run (the first, and every second by default) holds every corpus;
the others hold only the tier-A corpora.  A run is publishable only as a whole (its corpora
share one index, migration 006), so the publishable views have both kinds to sort out.
"""

from __future__ import annotations

import logging
from datetime import datetime

from harness.core.tiers import most_restrictive_tier
from warehouse import schema
from warehouse.db import connect

log = logging.getLogger(__name__)

DEFAULT_MEASURES = ("nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "P@5", "P@10",
                    "MRR", "AP")
DEFAULT_CORPORA = (("synthetic-a", "A", "CC0-1.0"), ("synthetic-b", "B", "CC-BY-NC-4.0"))
CREATED = datetime(2026, 1, 1)


def build_synthetic_warehouse(path, *, runs: int = 20, queries_per_corpus: int = 25_000,
                              measures=DEFAULT_MEASURES, corpora=DEFAULT_CORPORA,
                              latency_samples: int = 2_000, seed: int = 13,
                              mixed_every: int = 2) -> dict:
    """Fill a new warehouse at ``path``: each run holds ``queries_per_corpus x
    len(measures)`` per-query rows per corpus, every corpus in the runs whose index is a
    multiple of ``mixed_every`` and only the tier-A corpora in the others; returns the row
    counts."""
    measures, corpora = list(measures), [tuple(c) for c in corpora]
    if isinstance(mixed_every, bool) or not isinstance(mixed_every, int) or mixed_every < 1:
        raise ValueError(f"mixed_every must be a positive integer, got {mixed_every!r}")
    pooled = "+".join(sorted(name for name, _, _ in corpora))
    pooled_tier = most_restrictive_tier(tier for _, tier, _ in corpora)
    public = sorted(name for name, tier, _ in corpora if tier == "A") or sorted(
        name for name, _, _ in corpora)
    public_name = "+".join(public)
    public_tier = most_restrictive_tier(t for n, t, _ in corpora if n in public)
    stubs = [f'{{"synthetic_run": {i}, "seed": {seed}}}\n' for i in range(runs)]
    with connect(path, read_only=False, check_schema=False) as conn:
        schema.apply_pending(conn)
        if conn.query_one("SELECT count(*) FROM runs")[0]:
            raise ValueError(f"{path} already holds runs; a synthetic warehouse starts empty")
        with conn.transaction():
            conn.execute(
                "INSERT INTO runs (run_id, control_name, corpus, tier, created_at, ingested_at, "
                "backend, mode, retrieval, metric_engine, metric_engine_version, "
                "metric_engine_info, relevance_policy, schema_version, source_dir, metrics_json) "
                "SELECT sha256(stub), 'synthetic-' || lpad(i::VARCHAR, 4, '0'), "
                "CASE WHEN i % ? = 0 THEN ? ELSE ? END, CASE WHEN i % ? = 0 THEN ? ELSE ? END, "
                "? + i * INTERVAL 1 HOUR, ?, 'synthetic', 'hybrid', '{\"source\": \"synthetic\"}', "
                "'synthetic', '0', '{}', '{}', 1, NULL, stub "
                "FROM (SELECT i, list_extract(?::VARCHAR[], i + 1) AS stub "
                "FROM range(?) AS t(i))",
                [mixed_every, pooled, public_name, mixed_every, pooled_tier, public_tier,
                 CREATED, CREATED, stubs, runs])
            for name, tier, licence in corpora:
                conn.execute(
                    "INSERT INTO corpora (run_id, name, version, licence, tier, evidence, sha256, "
                    "files, chunks, declared) SELECT run_id, ?, '1', ?, ?, 'synthetic', NULL, "
                    "NULL, NULL, '{}' FROM runs WHERE list_contains(string_split(corpus, '+'), ?)",
                    [name, licence, tier, name])
            conn.execute(
                "INSERT INTO per_query SELECT c.run_id, c.name, c.tier, "
                "CASE q % 3 WHEN 0 THEN 'lookup' WHEN 1 THEN 'summarize' ELSE 'count' END, "
                "'q' || lpad(q::VARCHAR, 7, '0'), m.measure, "
                "(hash(c.run_id, c.name, q, m.measure, ?) % 10000) / 10000.0, TRUE "
                "FROM corpora AS c, range(?) AS t(q), "
                "(SELECT unnest(?::VARCHAR[]) AS measure) AS m",
                [seed, queries_per_corpus, measures])
            conn.execute(
                "INSERT INTO metric_rows "
                "SELECT run_id, corpus, tier, query_class, measure, avg(value), "
                "count(DISTINCT query_id), 0, 0 FROM per_query GROUP BY ALL")
            conn.execute(
                "INSERT INTO metric_rows "
                "SELECT run_id, corpus, tier, 'all', measure, avg(value), "
                "count(DISTINCT query_id), 0, 0 FROM per_query "
                "GROUP BY run_id, corpus, tier, measure")
            conn.execute(
                "INSERT INTO metric_rows "
                "SELECT p.run_id, r.corpus, r.tier, 'all', p.measure, avg(p.value), count(*), "
                "0, 0 FROM per_query AS p JOIN runs AS r USING (run_id) "
                "WHERE contains(r.corpus, '+') GROUP BY p.run_id, r.corpus, r.tier, p.measure")
            conn.execute(
                "INSERT INTO latency SELECT r.run_id, r.corpus, r.tier, "
                "list(5 + (hash(r.run_id, s, ?) % 100000) / 1000.0 ORDER BY s), 4, NULL "
                "FROM runs AS r, range(?) AS t(s) GROUP BY r.run_id, r.corpus, r.tier",
                [seed, latency_samples])
        counts = {t: conn.query_one(f"SELECT count(*) FROM {t}")[0]
                  for t in ("runs", "corpora", "metric_rows", "per_query", "latency")}
    log.info("synthetic warehouse %s: %s", path, counts)
    return counts
