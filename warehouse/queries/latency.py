"""The Latency page: stored latency samples and their percentiles, computed in SQL."""

from __future__ import annotations

from warehouse.queries.base import _one_run, _where, relation, resolve_runs
from warehouse.db import connect


def latency(runs=None, *, view: str = "internal", db_path=None):
    """Per run: its mode, sample count, concurrency, the BLAS thread limit it was timed
    under (``blas_threads``, NULL when the run did not record one), p50/p95/p99 (linear
    interpolation between order statistics, Hyndman & Fan 1996 type 7, as numpy's default),
    max and mean, in ms.

    Latency is a timing, not a value computed from corpus text, so the default view is
    ``internal``; under ``publishable`` a run that touched any non-A corpus is left out."""
    source = relation(view, "latency")
    with connect(db_path, read_only=True) as conn:
        where, params = _where("l", runs=resolve_runs(conn, runs))
        return conn.query_df(
            "SELECT l.run_id, r.control_name, l.corpus, l.tier, l.concurrency, "
            "coalesce(json_extract_string(l.reported, '$.sample_unit'), 'unrecorded') "
            "AS sample_unit, r.mode, "
            "try_cast(json_extract_string(l.reported, '$.blas_threads') AS INTEGER) "
            "AS blas_threads, count(*) AS samples, quantile_cont(s.ms, 0.5) AS p50, "
            "quantile_cont(s.ms, 0.95) AS p95, quantile_cont(s.ms, 0.99) AS p99, "
            "max(s.ms) AS max, avg(s.ms) AS mean "
            f"FROM {source} AS l JOIN runs AS r ON r.run_id = l.run_id, "
            f"unnest(l.samples) AS s(ms) WHERE TRUE{where} "
            "GROUP BY l.run_id, r.control_name, r.created_at, r.mode, l.corpus, l.tier, "
            "l.concurrency, l.reported "
            "ORDER BY r.created_at, l.run_id", params)


def latency_samples(run, *, view: str = "internal", db_path=None):
    """One run's latency samples (ms) in recorded order, numbered from 1."""
    source = relation(view, "latency")
    with connect(db_path, read_only=True) as conn:
        rid = _one_run(conn, run)
        return conn.query_df(
            f"SELECT generate_subscripts(l.samples, 1) AS sample, unnest(l.samples) AS ms "
            f"FROM {source} AS l WHERE l.run_id = ? ORDER BY sample", [rid])


def latency_distribution(runs=None, *, view: str = "internal", db_path=None):
    """Latency samples of several runs at once (ms, in recorded order, numbered from 1):
    run_id, control_name, created_at, sample, ms."""
    source = relation(view, "latency")
    with connect(db_path, read_only=True) as conn:
        where, params = _where("l", runs=resolve_runs(conn, runs))
        return conn.query_df(
            "SELECT l.run_id, r.control_name, r.created_at, s.sample, s.ms "
            f"FROM {source} AS l JOIN runs AS r ON r.run_id = l.run_id, "
            "LATERAL (SELECT generate_subscripts(l.samples, 1) AS sample, "
            "unnest(l.samples) AS ms) AS s "
            f"WHERE TRUE{where} ORDER BY r.created_at, l.run_id, s.sample", params)
