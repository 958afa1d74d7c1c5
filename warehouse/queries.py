"""Named read-only queries: what the dashboard and the exports ask the warehouse.

Each public function opens the warehouse read-only, runs its query, closes, and returns a
pandas DataFrame (or plain data).  Values are bound parameters; the only identifiers put
into SQL text are the constants below (:data:`VIEWS` and the fixed filter clauses).

Views: ``publishable`` holds only rows whose tier is A and whose every contributing corpus
is recorded as tier A for that run (a pooled row takes its most restrictive corpus's tier);
``internal`` holds everything.  Filters that are None or empty mean "no filter".  A run is
named by its id, a unique id prefix (6+ characters) or a unique control name.
"""

from __future__ import annotations

from typing import Iterable, Sequence

from warehouse.db import Connection, change_stamp, connect, resolve_path
from warehouse.errors import UnknownRun

#: view -> table -> the relation that view reads
VIEWS: dict[str, dict[str, str]] = {
    "publishable": {"metric_rows": "metric_rows_publishable",
                    "per_query": "per_query_publishable",
                    "rankings": "rankings_publishable",
                    "latency": "latency_publishable"},
    "internal": {"metric_rows": "metric_rows", "per_query": "per_query",
                 "rankings": "rankings", "latency": "latency"},
}

#: filter name -> the clause it adds (``{a}`` is the filtered relation's alias)
_FILTERS = {
    "runs": "list_contains(?::VARCHAR[], {a}.run_id)",
    "corpora": "list_contains(?::VARCHAR[], {a}.corpus)",
    "classes": "list_contains(?::VARCHAR[], {a}.query_class)",
    "measures": "list_contains(?::VARCHAR[], {a}.measure)",
}

MIN_PREFIX = 6
PERCENTILES = (0.5, 0.95, 0.99)


def relation(view: str, table: str) -> str:
    """The allow-listed relation ``view`` reads for ``table``."""
    if view not in VIEWS:
        raise ValueError(f"unknown view {view!r}; expected one of {sorted(VIEWS)}")
    return VIEWS[view][table]


def as_list(values) -> list[str] | None:
    """A filter value as a list of strings; None (or empty) means no filter."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    values = [str(v) for v in values]
    return values or None


def _where(alias: str, **filters) -> tuple[str, list]:
    """`` AND ...`` clauses for the given filters (constant text) and their parameters."""
    clauses, params = [], []
    for name, values in filters.items():
        values = as_list(values)
        if values is None:
            continue
        clauses.append(_FILTERS[name].format(a=alias))
        params.append(values)
    return "".join(f" AND {c}" for c in clauses), params


def resolve_runs(conn: Connection, refs) -> list[str] | None:
    """Full run ids for run references (id, unique id prefix, unique control name)."""
    refs = as_list(refs)
    if refs is None:
        return None
    known = conn.query_all("SELECT run_id, control_name FROM runs ORDER BY created_at, run_id")
    out: list[str] = []
    for ref in refs:
        hits = [r for r, _ in known if r == ref]
        if not hits:
            hits = [r for r, name in known if name == ref]
        if not hits and len(ref) >= MIN_PREFIX:
            hits = [r for r, _ in known if r.startswith(ref)]
        if not hits:
            names = sorted({name for _, name in known})
            raise UnknownRun(f"no run {ref!r} in {conn.path}; control names: {names[:20]}"
                             + (" ..." if len(names) > 20 else ""))
        if len(hits) > 1:
            raise UnknownRun(f"{ref!r} names {len(hits)} runs ({[h[:12] for h in hits]}); "
                             "give a run id")
        if hits[0] not in out:
            out.append(hits[0])
    return out


def _one_run(conn: Connection, ref) -> str:
    if ref is None or isinstance(ref, (list, tuple)):
        raise UnknownRun(f"expected one run reference, got {ref!r}")
    return resolve_runs(conn, [ref])[0]


# --------------------------------------------------------------------------- overview


def health(*, db_path=None) -> dict:
    """Schema version and migrations, counts of runs, rows and documents, corpora by tier."""
    with connect(db_path, read_only=True) as conn:
        migrations = conn.query_all(
            "SELECT version, name, checksum, applied_at FROM schema_migrations ORDER BY version")
        counts = {table: conn.query_one(f"SELECT count(*) FROM {table}")[0]
                  for table in ("runs", "metric_rows", "per_query", "rankings", "latency",
                                "documents")}
        by_tier = conn.query_all(
            "SELECT tier, list(DISTINCT name ORDER BY name) FROM corpora GROUP BY tier "
            "ORDER BY tier")
        kinds = conn.query_all("SELECT kind, count(*) FROM documents GROUP BY kind ORDER BY kind")
    return {
        "path": str(resolve_path(db_path)),
        "schema_version": max(v for v, *_ in migrations),
        "migrations": [{"version": v, "name": n, "checksum": c, "applied_at": str(a)}
                       for v, n, c, a in migrations],
        "runs": counts.pop("runs"),
        "rows": counts,
        "corpora_by_tier": {tier: list(names) for tier, names in by_tier},
        "documents_by_kind": dict(kinds),
        "change_stamp": change_stamp(db_path),
    }


_RUN_COLUMNS = (
    "run_id, control_name, created_at, ingested_at, corpus, tier, backend, mode, stage, scope, "
    "granularity, fusion, configured_embedding_model, embedding_models, embedding_dimension, "
    "embedding_verdict, metric_engine, metric_engine_version, relevance_policy, "
    "code_revision, source_dir")


def runs(*, db_path=None):
    """Every run, oldest first, with its configuration and provenance columns."""
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY created_at, run_id")


def corpora(*, db_path=None):
    """Corpus provenance as declared by the runs: one row per distinct declaration, with the
    runs that declared it."""
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT name, version, licence, tier, evidence, sha256, files, chunks, "
            "count(*) AS runs, list(run_id ORDER BY run_id) AS run_ids "
            "FROM corpora GROUP BY ALL ORDER BY name, tier, version, sha256")


def choices(view: str, *, db_path=None) -> dict[str, list[str]]:
    """What the filters of ``view`` can select: corpora, classes, measures, runs."""
    source = relation(view, "metric_rows")
    with connect(db_path, read_only=True) as conn:
        out = {}
        for column in ("corpus", "query_class", "measure", "run_id"):
            out[column] = [v for (v,) in conn.query_all(
                f"SELECT DISTINCT {column} FROM {source} ORDER BY {column}")]
    return out


# --------------------------------------------------------------------------- metric tables


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
    grouped by corpus: corpus, tier, runs, and the licences of its non-A corpora."""
    where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                           classes=classes, measures=measures)
    return conn.query_df(
        "SELECT m.corpus, max(m.tier) AS tier, count(*) AS rows, "
        "list(DISTINCT m.run_id ORDER BY m.run_id) AS run_ids, "
        "list(DISTINCT c.name || ' (tier ' || c.tier || ', licence ' || "
        "coalesce(c.licence, 'unknown') || ')' ORDER BY c.name || ' (tier ' || c.tier || "
        "', licence ' || coalesce(c.licence, 'unknown') || ')') "
        "FILTER (WHERE c.name IS NOT NULL) AS not_publishable "
        "FROM metric_rows AS m "
        "LEFT JOIN corpora AS c ON c.run_id = m.run_id AND c.tier <> 'A' "
        "AND list_contains(string_split(m.corpus, '+'), c.name) "
        f"WHERE NOT EXISTS (SELECT 1 FROM metric_rows_publishable AS p "
        "WHERE p.run_id = m.run_id AND p.corpus = m.corpus AND p.query_class = m.query_class "
        f"AND p.measure = m.measure){where} GROUP BY m.corpus ORDER BY m.corpus", params)


def deltas(control_run, runs, view: str, corpora=None, classes=None, measures=None, *,
           db_path=None):
    """Each run's metric rows against the control's same corpus x class x measure:
    ``delta = value - control_value``; ``paired`` is False when the query counts differ
    (a delta over different query sets is not a paired delta).  The row's tier is the more
    restrictive of the two sides ('A' < 'B' < 'C')."""
    source = relation(view, "metric_rows")
    with connect(db_path, read_only=True) as conn:
        control = _one_run(conn, control_run)
        where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                               classes=classes, measures=measures)
        return conn.query_df(
            f"SELECT m.run_id, r.control_name, m.corpus, greatest(m.tier, c.tier) AS tier, "
            f"m.query_class, m.measure, c.value AS control_value, m.value, "
            f"m.value - c.value AS delta, c.n AS control_n, m.n, (c.n = m.n) AS paired "
            f"FROM {source} AS m JOIN {source} AS c ON c.run_id = ? AND c.corpus = m.corpus "
            f"AND c.query_class = m.query_class AND c.measure = m.measure "
            f"JOIN runs AS r ON r.run_id = m.run_id "
            f"WHERE m.run_id <> ?{where} "
            f"ORDER BY r.created_at, m.run_id, m.corpus, m.query_class = 'all', m.query_class, "
            f"m.measure", [control, control, *params])


def per_query_pair(run_a, run_b, measure: str, view: str, corpora=None, classes=None, *,
                   db_path=None):
    """One measure's per-query values of two runs side by side (full outer join on corpus
    and query id: a query one run lacks has a NULL on that side)."""
    source = relation(view, "per_query")
    with connect(db_path, read_only=True) as conn:
        a, b = _one_run(conn, run_a), _one_run(conn, run_b)
        where_a, params_a = _where("x", corpora=corpora, classes=classes)
        where_b, params_b = _where("x", corpora=corpora, classes=classes)
        return conn.query_df(
            f"WITH a AS (SELECT * FROM {source} AS x WHERE x.run_id = ? AND x.measure = ?"
            f"{where_a}), b AS (SELECT * FROM {source} AS x WHERE x.run_id = ? "
            f"AND x.measure = ?{where_b}) "
            "SELECT coalesce(a.corpus, b.corpus) AS corpus, "
            "greatest(a.tier, b.tier) AS tier, "
            "coalesce(a.query_class, b.query_class) AS query_class, "
            "coalesce(a.query_id, b.query_id) AS query_id, "
            "a.value AS value_a, b.value AS value_b, b.value - a.value AS delta "
            "FROM a FULL OUTER JOIN b ON a.corpus = b.corpus AND a.query_id = b.query_id "
            "ORDER BY 1, 4", [a, measure, *params_a, b, measure, *params_b])


def per_query_values(run, view: str, measures=None, corpora=None, classes=None, *,
                     db_path=None):
    """The per-query values of one run (what intervals and gates are computed from)."""
    source = relation(view, "per_query")
    with connect(db_path, read_only=True) as conn:
        rid = _one_run(conn, run)
        where, params = _where("x", corpora=corpora, classes=classes, measures=measures)
        return conn.query_df(
            f"SELECT x.corpus, x.tier, x.query_class, x.query_id, x.measure, x.value, x.answered "
            f"FROM {source} AS x WHERE x.run_id = ?{where} "
            "ORDER BY x.corpus, x.query_id, x.measure", [rid, *params])


# --------------------------------------------------------------------------- latency


def latency(runs=None, *, view: str = "internal", db_path=None):
    """Per run: sample count, concurrency, p50/p95/p99 (linear interpolation between order
    statistics, Hyndman & Fan 1996 type 7, as numpy's default), max and mean, in ms.

    Latency is a timing, not a value computed from corpus text, so the default view is
    ``internal``; under ``publishable`` a run that touched any non-A corpus is left out."""
    source = relation(view, "latency")
    with connect(db_path, read_only=True) as conn:
        where, params = _where("l", runs=resolve_runs(conn, runs))
        return conn.query_df(
            "SELECT l.run_id, r.control_name, l.corpus, l.tier, l.concurrency, "
            "count(*) AS samples, quantile_cont(s.ms, 0.5) AS p50, "
            "quantile_cont(s.ms, 0.95) AS p95, quantile_cont(s.ms, 0.99) AS p99, "
            "max(s.ms) AS max, avg(s.ms) AS mean "
            f"FROM {source} AS l JOIN runs AS r ON r.run_id = l.run_id, "
            f"unnest(l.samples) AS s(ms) WHERE TRUE{where} "
            "GROUP BY l.run_id, r.control_name, r.created_at, l.corpus, l.tier, l.concurrency "
            "ORDER BY r.created_at, l.run_id", params)


def latency_samples(run, *, view: str = "internal", db_path=None):
    """One run's latency samples (ms) in recorded order, numbered from 1."""
    source = relation(view, "latency")
    with connect(db_path, read_only=True) as conn:
        rid = _one_run(conn, run)
        return conn.query_df(
            f"SELECT generate_subscripts(l.samples, 1) AS sample, unnest(l.samples) AS ms "
            f"FROM {source} AS l WHERE l.run_id = ? ORDER BY sample", [rid])


def rankings(run, view: str, query_ids: Sequence[str] | None = None, *, db_path=None):
    """The stored top-k of one run (optionally for some queries)."""
    source = relation(view, "rankings")
    with connect(db_path, read_only=True) as conn:
        rid = _one_run(conn, run)
        ids = as_list(query_ids)
        extra = " AND list_contains(?::VARCHAR[], k.query_id)" if ids else ""
        return conn.query_df(
            f"SELECT k.corpus, k.tier, k.query_id, k.rank, k.doc_id, k.score FROM {source} AS k "
            f"WHERE k.run_id = ?{extra} ORDER BY k.corpus, k.query_id, k.rank",
            [rid, *([ids] if ids else [])])


def run_provenance(conn: Connection, run_ids: Iterable[str]) -> list[dict]:
    """What an export names about each run: engine, embedding model, corpora and licences."""
    ids = list(run_ids)
    if not ids:
        return []
    rows = conn.query_all(
        "SELECT r.run_id, r.control_name, r.metric_engine, r.metric_engine_version, "
        "r.configured_embedding_model, r.embedding_models, r.backend, r.mode, r.stage, "
        "r.code_revision, r.relevance_policy, "
        "list({'name': c.name, 'version': c.version, 'licence': c.licence, 'tier': c.tier, "
        "'sha256': c.sha256} ORDER BY c.name) "
        "FROM runs AS r JOIN corpora AS c USING (run_id) "
        "WHERE list_contains(?::VARCHAR[], r.run_id) GROUP BY ALL ORDER BY r.run_id", [ids])
    keys = ("run_id", "control_name", "metric_engine", "metric_engine_version",
            "embedding_model", "embedding_models", "backend", "mode", "stage", "code_revision",
            "relevance_policy", "corpora")
    return [dict(zip(keys, row)) for row in rows]
