"""The Results page and the exports: metric rows with their intervals, what the
publishable view withholds, run provenance."""

from __future__ import annotations

from typing import Iterable

from warehouse.queries.base import _where, relation, resolve_runs
from warehouse.db import Connection, connect


def fetch_metric_table(conn: Connection, view: str, runs=None, corpora=None, classes=None,
                       measures=None):
    """:func:`metric_table` on an open connection."""
    source = relation(view, "metric_rows")
    where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                           classes=classes, measures=measures)
    return conn.query_df(
        f"SELECT m.run_id, r.control_name, r.created_at, m.corpus, m.tier, m.query_class, "
        f"m.measure, m.value, m.n, m.queries_unanswered, m.queries_dropped_unjudgeable "
        f"FROM {source} AS m JOIN runs AS r USING (run_id) WHERE TRUE{where} "
        f"ORDER BY r.created_at, m.run_id, m.corpus, m.query_class = 'all', m.query_class, "
        f"m.measure", params)


def metric_table(view: str, runs=None, corpora=None, classes=None, measures=None, *,
                 db_path=None):
    """Metric rows (one per run x corpus x class x measure) under ``view``."""
    with connect(db_path, read_only=True) as conn:
        return fetch_metric_table(conn, view, runs, corpora, classes, measures)


def fetch_withheld(conn: Connection, runs=None, corpora=None, classes=None, measures=None):
    """Rows the filters select in the internal view that the publishable view withholds,
    grouped by corpus: corpus, tier, runs, and the non-A corpora behind them with their
    licences: the row's own, and any other corpus of its run (they share one index, so a
    tier-B corpus withholds every row of its run)."""
    where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                           classes=classes, measures=measures)
    label = ("c.name || ' (tier ' || c.tier || ', licence ' || coalesce(c.licence, 'unknown') "
             "|| CASE WHEN list_contains(string_split(m.corpus, '+'), c.name) THEN ')' "
             "ELSE ', in the run''s shared index)' END")
    return conn.query_df(
        "SELECT m.corpus, tier_at(max(tier_rank(m.tier))) AS tier, count(*) AS rows, "
        "list(DISTINCT m.run_id ORDER BY m.run_id) AS run_ids, "
        f"list(DISTINCT {label} ORDER BY {label}) "
        "FILTER (WHERE c.name IS NOT NULL) AS not_publishable "
        "FROM metric_rows AS m "
        "LEFT JOIN corpora AS c ON c.run_id = m.run_id AND c.tier <> 'A' "
        f"WHERE NOT EXISTS (SELECT 1 FROM metric_rows_publishable AS p "
        "WHERE p.run_id = m.run_id AND p.corpus = m.corpus AND p.query_class = m.query_class "
        f"AND p.measure = m.measure){where} GROUP BY m.corpus ORDER BY m.corpus", params)


_LATEST_INTERVALS = (
    "SELECT i.* FROM {rel} AS i QUALIFY row_number() OVER (PARTITION BY i.run_id, i.corpus, "
    "i.query_class, i.measure ORDER BY i.ingested_at DESC, i.document_id) = 1")


def fetch_metric_intervals(conn: Connection, view: str, runs=None, corpora=None, classes=None,
                           measures=None):
    """:func:`metric_intervals` on an open connection."""
    source = relation(view, "metric_rows")
    latest = _LATEST_INTERVALS.format(rel=relation(view, "intervals"))
    where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                           classes=classes, measures=measures)
    return conn.query_df(
        f"WITH iv AS ({latest}) "
        "SELECT m.run_id, r.control_name, r.created_at, m.corpus, "
        "stricter(m.tier, coalesce(iv.tier, m.tier)) AS tier, m.query_class, m.measure, "
        "m.value, m.n, m.queries_unanswered, m.queries_dropped_unjudgeable, "
        "iv.lower, iv.upper, iv.method AS interval_method, iv.confidence "
        f"FROM {source} AS m JOIN runs AS r USING (run_id) "
        "LEFT JOIN iv ON iv.run_id = m.run_id AND iv.corpus = m.corpus "
        "AND iv.query_class = m.query_class AND iv.measure = m.measure AND iv.n = m.n "
        f"WHERE TRUE{where} "
        "ORDER BY r.created_at, m.run_id, m.corpus, m.query_class <> 'all', m.query_class, "
        "m.measure", params)


def metric_intervals(view: str, runs=None, corpora=None, classes=None, measures=None, *,
                     db_path=None):
    """:func:`metric_table` rows with their stored interval (``lower``, ``upper``,
    ``interval_method``, ``confidence``; NULL where none is stored), the ``all`` class
    first.  An interval joins its metric row only when both are visible in ``view`` and
    cover the same n; the row's tier is the more restrictive of the two."""
    with connect(db_path, read_only=True) as conn:
        return fetch_metric_intervals(conn, view, runs, corpora, classes, measures)


def withheld_summary(view: str, runs=None, corpora=None, classes=None, measures=None, *,
                     db_path=None) -> dict:
    """What the publishable view withholds of the internal rows these filters select:
    ``{"runs": [run ids with a withheld row], "corpora": [the corpora behind it that are
    not tier A]}`` (empty lists under ``internal``, which withholds nothing)."""
    if view == "internal":
        return {"runs": [], "corpora": []}
    relation(view, "metric_rows")  # an unknown view is refused
    with connect(db_path, read_only=True) as conn:
        frame = fetch_withheld(conn, runs, corpora, classes, measures)
        run_ids = sorted({r for ids in frame["run_ids"] for r in ids}) if len(frame) else []
        names = conn.query_all(
            "SELECT DISTINCT name FROM corpora WHERE tier IS DISTINCT FROM 'A' "
            "AND list_contains(?::VARCHAR[], run_id) ORDER BY name", [run_ids]) if run_ids \
            else []
    return {"runs": run_ids, "corpora": [n for (n,) in names]}


def run_provenance(conn: Connection, run_ids: Iterable[str]) -> list[dict]:
    """What an export names about each run: engine, embedding model, corpora and licences."""
    ids = list(run_ids)
    if not ids:
        return []
    rows = conn.query_all(
        "SELECT r.run_id, r.control_name, r.metric_engine, r.metric_engine_version, "
        "r.configured_embedding_model, r.embedding_models, r.backend, r.mode, r.stage, "
        "r.code_revision, r.relevance_policy, r.granularity, r.scope, r.retrieval, "
        "list({'name': c.name, 'version': c.version, 'licence': c.licence, 'tier': c.tier, "
        "'sha256': c.sha256} ORDER BY c.name) "
        "FROM runs AS r JOIN corpora AS c USING (run_id) "
        "WHERE list_contains(?::VARCHAR[], r.run_id) GROUP BY ALL ORDER BY r.run_id", [ids])
    keys = ("run_id", "control_name", "metric_engine", "metric_engine_version",
            "embedding_model", "embedding_models", "backend", "mode", "stage", "code_revision",
            "relevance_policy", "granularity", "scope", "retrieval", "corpora")
    return [dict(zip(keys, row)) for row in rows]
