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
                    "latency": "latency_publishable",
                    # 002_statistics
                    "intervals": "intervals_publishable",
                    "comparisons": "comparisons_publishable",
                    "agreement": "agreement_publishable",
                    "agreement_arms": "agreement_arms_publishable",
                    # 003_certificates
                    "certificates": "certificates_publishable",
                    "ppi": "ppi_publishable",
                    "calibration": "calibration_publishable",
                    # 006: run ids whose every corpus (the whole shared index) is tier A
                    "runs": "publishable_runs"},
    "internal": {"metric_rows": "metric_rows", "per_query": "per_query",
                 "rankings": "rankings", "latency": "latency",
                 "intervals": "intervals", "comparisons": "comparisons",
                 "agreement": "agreement", "agreement_arms": "agreement_arms",
                 "certificates": "certificates", "ppi": "ppi", "calibration": "calibration",
                 "runs": "runs"},
}

#: filter name -> the clause it adds (``{a}`` is the filtered relation's alias)
_FILTERS = {
    "runs": "list_contains(?::VARCHAR[], {a}.run_id)",
    "corpora": "list_contains(?::VARCHAR[], {a}.corpus)",
    "classes": "list_contains(?::VARCHAR[], {a}.query_class)",
    "measures": "list_contains(?::VARCHAR[], {a}.measure)",
    "arm_runs": "list_contains(?::VARCHAR[], {a}.arm_run_id)",
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
    grouped by corpus: corpus, tier, runs, and the non-A corpora behind them with their
    licences: the row's own, and any other corpus of its run (they share one index, so a
    tier-B corpus withholds every row of its run)."""
    where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                           classes=classes, measures=measures)
    label = ("c.name || ' (tier ' || c.tier || ', licence ' || coalesce(c.licence, 'unknown') "
             "|| CASE WHEN list_contains(string_split(m.corpus, '+'), c.name) THEN ')' "
             "ELSE ', in the run''s shared index)' END")
    return conn.query_df(
        "SELECT m.corpus, max(m.tier) AS tier, count(*) AS rows, "
        "list(DISTINCT m.run_id ORDER BY m.run_id) AS run_ids, "
        f"list(DISTINCT {label} ORDER BY {label}) "
        "FILTER (WHERE c.name IS NOT NULL) AS not_publishable "
        "FROM metric_rows AS m "
        "LEFT JOIN corpora AS c ON c.run_id = m.run_id AND c.tier <> 'A' "
        f"WHERE NOT EXISTS (SELECT 1 FROM metric_rows_publishable AS p "
        "WHERE p.run_id = m.run_id AND p.corpus = m.corpus AND p.query_class = m.query_class "
        f"AND p.measure = m.measure){where} GROUP BY m.corpus ORDER BY m.corpus", params)


def comparability(conn: Connection, control: str,
                  run_ids: Iterable[str]) -> dict[str, list[str]]:
    """Run id -> why its deltas against ``control`` are not deltas of one experiment
    (empty: comparable): ``harness.evaluation.rows.comparability_notes`` over the stored claims
    (metric engine, relevance policy, corpus versions, checksums and tiers, granularity,
    scope, stage, and the corpora sharing the index)."""
    import json

    from harness.claims.metrics import comparability_notes

    ids = sorted({str(r) for r in run_ids} | {control})
    claims = {rid: json.loads(text) for rid, text in conn.query_all(
        "SELECT run_id, metrics_json FROM runs WHERE list_contains(?::VARCHAR[], run_id)",
        [ids])}
    return {rid: [n.removeprefix("- ") for n in comparability_notes(claims[control], claims[rid])]
            for rid in ids if rid != control and rid in claims}


def _with_comparability(conn: Connection, frame, control: str):
    """``frame`` with ``comparable`` (bool) and ``not_comparable_because`` (text, empty when
    comparable) per row's run."""
    notes = comparability(conn, control, frame["run_id"].unique())
    because = frame["run_id"].map(lambda r: "; ".join(notes.get(r, [])))
    return frame.assign(comparable=because.eq(""), not_comparable_because=because)


def deltas(control_run, runs, view: str, corpora=None, classes=None, measures=None, *,
           db_path=None):
    """Each run's metric rows against the control's same corpus x class x measure:
    ``delta = value - control_value``; ``paired`` is False when the query counts differ
    (a delta over different query sets is not a paired delta); ``comparable`` is False when
    the two runs measured differently (:func:`comparability`; ``not_comparable_because``
    says how), and such a delta must not be read as an effect.  The row's tier is the more
    restrictive of the two sides ('A' < 'B' < 'C')."""
    source = relation(view, "metric_rows")
    with connect(db_path, read_only=True) as conn:
        control = _one_run(conn, control_run)
        where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                               classes=classes, measures=measures)
        frame = conn.query_df(
            f"SELECT m.run_id, r.control_name, m.corpus, greatest(m.tier, c.tier) AS tier, "
            f"m.query_class, m.measure, c.value AS control_value, m.value, "
            f"m.value - c.value AS delta, c.n AS control_n, m.n, (c.n = m.n) AS paired "
            f"FROM {source} AS m JOIN {source} AS c ON c.run_id = ? AND c.corpus = m.corpus "
            f"AND c.query_class = m.query_class AND c.measure = m.measure "
            f"JOIN runs AS r ON r.run_id = m.run_id "
            f"WHERE m.run_id <> ?{where} "
            f"ORDER BY r.created_at, m.run_id, m.corpus, m.query_class = 'all', m.query_class, "
            f"m.measure", [control, control, *params])
        return _with_comparability(conn, frame, control)


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
            "coalesce(json_extract_string(l.reported, '$.sample_unit'), 'unrecorded') "
            "AS sample_unit, count(*) AS samples, quantile_cont(s.ms, 0.5) AS p50, "
            "quantile_cont(s.ms, 0.95) AS p95, quantile_cont(s.ms, 0.99) AS p99, "
            "max(s.ms) AS max, avg(s.ms) AS mean "
            f"FROM {source} AS l JOIN runs AS r ON r.run_id = l.run_id, "
            f"unnest(l.samples) AS s(ms) WHERE TRUE{where} "
            "GROUP BY l.run_id, r.control_name, r.created_at, l.corpus, l.tier, l.concurrency, "
            "l.reported "
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


# --------------------------------------------------------------------------- statistics (002)

#: the newest stored interval per run x corpus x class x measure (a run may have several
#: intervals documents, e.g. recomputed with another seed: the last one ingested is shown)
_LATEST_INTERVALS = (
    "SELECT i.* FROM {rel} AS i QUALIFY row_number() OVER (PARTITION BY i.run_id, i.corpus, "
    "i.query_class, i.measure ORDER BY i.ingested_at DESC, i.document_id) = 1")

_LATEST_COMPARISONS = (
    "SELECT x.* FROM {rel} AS x QUALIFY row_number() OVER (PARTITION BY x.control_run_id, "
    "x.arm_run_id, x.corpus, x.query_class, x.measure "
    "ORDER BY x.ingested_at DESC, x.document_id) = 1")


def metric_intervals(view: str, runs=None, corpora=None, classes=None, measures=None, *,
                     db_path=None):
    """:func:`metric_table` rows with their stored interval (``lower``, ``upper``,
    ``interval_method``, ``confidence``; NULL where none is stored).  An interval joins its
    metric row only when both are visible in ``view`` and cover the same n; the row's tier
    is the more restrictive of the two."""
    source = relation(view, "metric_rows")
    latest = _LATEST_INTERVALS.format(rel=relation(view, "intervals"))
    with connect(db_path, read_only=True) as conn:
        where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                               classes=classes, measures=measures)
        return conn.query_df(
            f"WITH iv AS ({latest}) "
            "SELECT m.run_id, r.control_name, r.created_at, m.corpus, "
            "greatest(m.tier, coalesce(iv.tier, m.tier)) AS tier, m.query_class, m.measure, "
            "m.value, m.n, m.queries_unanswered, m.queries_dropped_unjudgeable, "
            "iv.lower, iv.upper, iv.method AS interval_method, iv.confidence "
            f"FROM {source} AS m JOIN runs AS r USING (run_id) "
            "LEFT JOIN iv ON iv.run_id = m.run_id AND iv.corpus = m.corpus "
            "AND iv.query_class = m.query_class AND iv.measure = m.measure AND iv.n = m.n "
            f"WHERE TRUE{where} "
            "ORDER BY r.created_at, m.run_id, m.corpus, m.query_class = 'all', m.query_class, "
            "m.measure", params)


def comparisons(view: str, control_run=None, runs=None, corpora=None, classes=None,
                measures=None, *, db_path=None):
    """Stored paired tests (the newest per control x arm x corpus x class x measure):
    means, delta with its interval, discordant pairs, p, Holm-adjusted p, p floor, verdict.
    ``control_run`` selects the control; ``runs`` the arms."""
    latest = _LATEST_COMPARISONS.format(rel=relation(view, "comparisons"))
    with connect(db_path, read_only=True) as conn:
        control = None if control_run is None else _one_run(conn, control_run)
        where, params = _where("x", arm_runs=resolve_runs(conn, runs), corpora=corpora,
                               classes=classes, measures=measures)
        if control is not None:
            where += " AND x.control_run_id = ?"
            params.append(control)
        return conn.query_df(
            f"WITH x AS ({latest}) "
            "SELECT x.control_run_id, x.control_name, x.arm_run_id, x.arm_name, x.corpus, "
            "x.tier, x.query_class, x.measure, x.n, x.control_mean, x.arm_mean, x.delta, "
            "x.delta_lower, x.delta_upper, x.confidence, x.discordant, x.improved, "
            "x.worsened, x.test_method, x.permutations, x.p, x.p_floor, x.p_holm, "
            "x.family_size, x.alpha, x.verdict, x.seed "
            f"FROM x WHERE TRUE{where} "
            "ORDER BY x.control_name, x.corpus, x.query_class = 'all', x.query_class, "
            "x.measure, x.arm_name", params)


def deltas_tested(control_run, runs, view: str, corpora=None, classes=None, measures=None, *,
                  db_path=None):
    """:func:`deltas` with the stored paired test of each arm against this control, where
    one exists: ``delta_lower``, ``delta_upper``, ``p``, ``p_holm``, ``p_floor``,
    ``family_size``, ``alpha``, ``verdict`` (NULL otherwise), and ``comparable`` /
    ``not_comparable_because`` as in :func:`deltas`.  The tier is the most restrictive of
    the control's row, the arm's row and the test's row."""
    source = relation(view, "metric_rows")
    latest = _LATEST_COMPARISONS.format(rel=relation(view, "comparisons"))
    with connect(db_path, read_only=True) as conn:
        control = _one_run(conn, control_run)
        where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                               classes=classes, measures=measures)
        frame = conn.query_df(
            f"WITH x AS ({latest}) "
            "SELECT m.run_id, r.control_name, m.corpus, "
            "greatest(m.tier, c.tier, coalesce(x.tier, 'A')) AS tier, m.query_class, "
            "m.measure, c.value AS control_value, m.value, m.value - c.value AS delta, "
            "c.n AS control_n, m.n, (c.n = m.n) AS paired, x.delta_lower, x.delta_upper, "
            "x.discordant, x.p, x.p_holm, x.p_floor, x.family_size, x.alpha, x.verdict "
            f"FROM {source} AS m JOIN {source} AS c ON c.run_id = ? AND c.corpus = m.corpus "
            "AND c.query_class = m.query_class AND c.measure = m.measure "
            "JOIN runs AS r ON r.run_id = m.run_id "
            "LEFT JOIN x ON x.control_run_id = c.run_id AND x.arm_run_id = m.run_id "
            "AND x.corpus = m.corpus AND x.query_class = m.query_class "
            "AND x.measure = m.measure AND x.n = m.n "
            f"WHERE m.run_id <> ?{where} "
            "ORDER BY r.created_at, m.run_id, m.corpus, m.query_class = 'all', m.query_class, "
            "m.measure", [control, control, *params])
        return _with_comparability(conn, frame, control)


def agreement_documents(view: str, query_class=None, measure=None, *, db_path=None):
    """One line per stored agreement document with a row visible in ``view``: measure,
    class, the two corpora (in delta order), the most restrictive tier of its visible rows,
    whether its pooled row is visible, how many families and arms are, when it was
    ingested.  Under ``publishable`` a document whose pooled row is tier B still lists its
    tier-A families."""
    rel = relation(view, "agreement")
    arms = relation(view, "agreement_arms")
    where, params = _where("g", classes=query_class, measures=measure)
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT g.document_id, g.measure, g.query_class, g.corpus_a, g.corpus_b, "
            "max(g.tier) AS tier, bool_or(g.pooled) AS has_pooled, "
            "count(*) FILTER (WHERE NOT g.pooled) AS families, "
            f"(SELECT count(*) FROM {arms} AS a WHERE a.document_id = g.document_id) AS arms, "
            "max(g.ingested_at) AS ingested_at "
            f"FROM {rel} AS g WHERE TRUE{where} "
            "GROUP BY g.document_id, g.measure, g.query_class, g.corpus_a, g.corpus_b "
            "ORDER BY max(g.ingested_at) DESC, g.document_id", params)


def agreement_results(view: str, document_id=None, query_class=None, measure=None, *,
                      db_path=None):
    """Stored agreement coefficients: per family and pooled (``family`` NULL, ``pooled``
    true), Kendall tau-b and p, Spearman, Pearson with its outlier flag, sign counts,
    winners and delta ranges.  Undefined coefficients are NULL, never 0."""
    rel = relation(view, "agreement")
    where, params = _where("g", classes=query_class, measures=measure)
    if document_id is not None:
        where += " AND g.document_id = ?"
        params.append(str(document_id))
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT g.document_id, g.family, g.pooled, g.measure, g.query_class, g.corpus, "
            "g.corpus_a, g.corpus_b, g.tier, g.n, g.tau_b, g.tau_p, g.tau_method, g.spearman, "
            "g.spearman_p, g.pearson, g.pearson_p, g.pearson_flag, g.agree, g.disagree, "
            "g.inert, g.one_sided, g.agree_share, g.winner_a, g.winner_a_delta, g.winner_b, "
            "g.winner_b_delta, g.same_winner, g.range_a, g.range_b, g.range_ratio, g.caveat, "
            "g.ingested_at "
            f"FROM {rel} AS g WHERE TRUE{where} "
            "ORDER BY g.ingested_at DESC, g.document_id, g.pooled, g.family", params)


def agreement_arms(view: str, document_id=None, query_class=None, measure=None, *,
                   db_path=None):
    """Each arm of stored agreement documents: family, axis, delta on each corpus against
    its family's control, sign class, source (measured / given), run, included."""
    rel = relation(view, "agreement_arms")
    where, params = _where("a", classes=query_class, measures=measure)
    if document_id is not None:
        where += " AND a.document_id = ?"
        params.append(str(document_id))
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT a.document_id, a.family, a.arm, a.axis, a.measure, a.query_class, "
            "a.corpus, a.corpus_a, a.corpus_b, a.tier, a.delta_a, a.delta_b, a.sign, "
            "a.source, a.run_id, a.included "
            f"FROM {rel} AS a WHERE TRUE{where} "
            "ORDER BY a.document_id, a.family, a.arm", params)


# --------------------------------------------------------------------------- certificates (003)


_CERTIFICATES = (
    "WITH x AS (SELECT * FROM {rel}), "
    "src AS (SELECT DISTINCT x.document_id, r.control_name "
    "FROM x, unnest(x.source_runs) AS s(run_id) JOIN runs AS r ON r.run_id = s.run_id), "
    "cur AS (SELECT src.document_id, r.run_id AS current_run_id, "
    "r.control_name AS current_control_name, r.created_at AS current_created_at, "
    "r.metrics_json AS current_metrics, r.source_dir AS current_source_dir "
    "FROM src JOIN runs AS r ON r.control_name = src.control_name "
    "SEMI JOIN {visible} AS v ON v.run_id = r.run_id "
    "QUALIFY row_number() OVER (PARTITION BY src.document_id "
    "ORDER BY r.created_at DESC, r.ingested_at DESC, r.run_id) = 1) "
    "SELECT x.document_id, x.certificate_id, x.type, x.status, x.alpha, x.target, "
    "x.delta, x.threshold, x.temperature, x.context_k, x.k_max, x.split_tune, "
    "x.split_calibrate, x.split_heldout, x.seed, x.heldout_n, x.heldout_rate, "
    "x.heldout_lower, x.heldout_upper, x.mean_set_size, x.fixed_k, x.answer_rate, "
    "x.queries_needed, x.stage, x.source_runs, x.corpus, x.tier, x.reason, "
    "x.ingested_at, d.content AS document, cur.current_run_id, "
    "cur.current_control_name, cur.current_created_at, cur.current_metrics, "
    "cur.current_source_dir, f.sha256 AS current_calibration_sha256 "
    "FROM x JOIN documents AS d ON d.document_id = x.document_id "
    "LEFT JOIN cur ON cur.document_id = x.document_id "
    "LEFT JOIN run_files AS f ON f.run_id = cur.current_run_id "
    "AND f.name = 'calibration.jsonl' "
    "ORDER BY x.ingested_at, x.document_id")


def certificates(view: str, *, db_path=None):
    """Every stored certificate visible in ``view`` with the full document (``document``,
    JSON) and the run it must now hold for: the newest run *visible in the same view*
    sharing a control name with a run it was calibrated on (``current_run_id``, its
    ``current_metrics`` JSON, its results directory and calibration.jsonl checksum as
    ingested).  Status as issued is ``status``; the live status (expired, alarm) is
    ``dashboard.certificate_status``."""
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(_CERTIFICATES.format(rel=relation(view, "certificates"),
                                                  visible=relation(view, "runs")))


def certificate_monitoring(view: str, *, db_path=None):
    """``(certificates, calibration)``: :func:`certificates`, and the stored calibration
    records of each one's current run (``calibration`` in the same view, ordered by run,
    corpus and query id), from which a certificate's live status is judged
    (``dashboard.certificate_status``).  Under ``publishable`` nothing of a run with a non-A
    corpus is read, so no status computed from these can name one."""
    with connect(db_path, read_only=True) as conn:
        certs = conn.query_df(_CERTIFICATES.format(rel=relation(view, "certificates"),
                                                   visible=relation(view, "runs")))
        current = sorted({r for r in certs["current_run_id"].dropna()}) if len(certs) else []
        calibration = conn.query_df(
            "SELECT k.run_id, k.corpus, k.tier, k.query_id, k.query_class, k.stage, k.scores, "
            f"k.relevant, k.first_relevant_rank FROM {relation(view, 'calibration')} AS k "
            "WHERE list_contains(?::VARCHAR[], k.run_id) ORDER BY k.run_id, k.corpus, "
            "k.query_id", [current])
    return certs, calibration


def ppi_results(view: str, *, db_path=None):
    """Stored judge-calibrated (PPI / PPI++) estimates with their intervals."""
    rel = relation(view, "ppi")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT p.document_id, p.method, p.alpha, p.estimate, p.lower, p.upper, "
            "p.lambda_value AS lambda, p.judge_bias, p.effective_labels, p.labelled, "
            "p.unlabelled, p.labels_only_estimate, p.labels_only_lower, p.labels_only_upper, "
            f"p.judge_only_estimate, p.corpus, p.tier, p.ingested_at FROM {rel} AS p "
            "ORDER BY p.ingested_at, p.document_id")


def calibration(run, view: str, *, db_path=None):
    """One run's calibration records per query: stage, first relevant rank (NULL: none
    retrieved), top score, candidates recorded."""
    rel = relation(view, "calibration")
    with connect(db_path, read_only=True) as conn:
        rid = _one_run(conn, run)
        return conn.query_df(
            "SELECT k.corpus, k.tier, k.query_id, k.query_class, k.stage, "
            f"k.first_relevant_rank, k.top_score, k.candidates FROM {rel} AS k "
            "WHERE k.run_id = ? ORDER BY k.corpus, k.query_id", [rid])


# --------------------------------------------------------------------------- dashboard helpers


def corpus_composition(view: str, *, db_path=None):
    """Queries per corpus and class as the runs scored them (pooled rows left out): one
    line per corpus x class x n x tier, with how many runs scored that set."""
    source = relation(view, "metric_rows")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT m.corpus, m.tier, m.query_class, m.n, "
            "max(m.queries_dropped_unjudgeable) AS dropped_unjudgeable, "
            "count(DISTINCT m.run_id) AS runs "
            f"FROM {source} AS m WHERE NOT contains(m.corpus, '+') "
            "GROUP BY m.corpus, m.tier, m.query_class, m.n "
            "ORDER BY m.corpus, m.query_class = 'all', m.query_class, m.n")


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


# --------------------------------------------------------------------------- answers (005)

#: the answer tables (migration 005) each view reads, registered beside the others
VIEWS["publishable"].update({"answer_runs": "answer_runs_publishable",
                             "answer_corpora": "answer_corpora_publishable",
                             "answer_rows": "answer_rows_publishable",
                             "answers": "answers_publishable"})
VIEWS["internal"].update({"answer_runs": "answer_runs", "answer_corpora": "answer_corpora",
                          "answer_rows": "answer_rows", "answers": "answers"})
_FILTERS.update({"answerers": "list_contains(?::VARCHAR[], {a}.answerer)"})

#: the newest answers document per corpus x answerer x policy (an older one is a rerun)
_LATEST_ANSWERS = (" QUALIFY dense_rank() OVER (PARTITION BY x.corpus, x.answerer, "
                   "x.count_tolerance, x.set_credit ORDER BY x.ingested_at DESC, "
                   "x.document_id DESC) = 1")


def answer_runs(view: str, *, db_path=None):
    """Answers documents with a row visible in ``view``, newest first: answerer, production
    path, policy (``count_tolerance``, ``set_credit`` and every rule as JSON), the corpora
    visible in the view (sorted, joined by '+'; never a corpus the view withholds) and their
    most restrictive tier, the retrieval run it came with (NULL: standalone), times."""
    rows = relation(view, "answer_rows")
    corpora = relation(view, "answer_corpora")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT a.document_id, a.answerer, a.is_production_path, a.count_tolerance, "
            "a.set_credit, a.policy, a.answerer_info, "
            "string_agg(c.corpus, '+' ORDER BY c.corpus) AS corpora, max(c.tier) AS tier, "
            "sum(c.aggregation_queries)::BIGINT AS aggregation_queries, a.run_id, a.created_at, "
            "a.ingested_at "
            f"FROM answer_runs AS a JOIN {corpora} AS c ON c.document_id = a.document_id "
            f"WHERE EXISTS (SELECT 1 FROM {rows} AS r WHERE r.document_id = a.document_id "
            "AND r.corpus = c.corpus) "
            "GROUP BY ALL ORDER BY a.ingested_at DESC, a.document_id")


def answer_table(view: str, corpora=None, answerers=None, *, latest: bool = True,
                 db_path=None):
    """Answer rows per corpus x answerer x class x rule (``all`` first) under ``view``: n,
    unanswered, ``em``, ``partial``, ``answered_share``, and beside them the ``none``
    answerer's floor over the same gold set (``floor_n``, ``floor_unanswered``,
    ``floor_em``, ``floor_partial``, ``floor_answered_share``), with the answerer, its
    production-path flag and the scoring policy.  ``latest`` keeps the newest document per
    corpus x answerer x policy; False returns every stored document's rows."""
    rows = relation(view, "answer_rows")
    where, params = _where("x", corpora=corpora, answerers=answerers)
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "WITH x AS (SELECT r.document_id, a.answerer, a.is_production_path, "
            "a.count_tolerance, a.set_credit, r.corpus, "
            "greatest(r.tier, coalesce(f.tier, r.tier)) AS tier, r.query_class, r.rule, r.n, "
            "r.unanswered, r.em, r.partial, r.answered_share, f.n AS floor_n, "
            "f.unanswered AS floor_unanswered, f.em AS floor_em, f.partial AS floor_partial, "
            "f.answered_share AS floor_answered_share, a.created_at, a.ingested_at "
            f"FROM {rows} AS r JOIN answer_runs AS a ON a.document_id = r.document_id "
            f"LEFT JOIN {rows} AS f ON f.is_floor AND f.document_id = r.document_id "
            "AND f.corpus = r.corpus AND f.query_class = r.query_class AND f.rule = r.rule "
            "WHERE NOT r.is_floor) "
            f"SELECT x.* FROM x WHERE TRUE{where}{_LATEST_ANSWERS if latest else ''} "
            "ORDER BY contains(x.corpus, '+'), x.corpus, x.answerer, x.ingested_at DESC, "
            "x.document_id, x.query_class = 'all' DESC, x.query_class, x.rule = 'all' DESC, "
            "x.rule", params)


def _one_answers_document(conn: Connection, ref) -> str:
    """A full answers document id from an id or a unique prefix (6+ characters)."""
    if not isinstance(ref, str) or not ref:
        raise UnknownRun(f"expected one answers document id, got {ref!r}")
    hits = [d for (d,) in conn.query_all(
        "SELECT document_id FROM answer_runs WHERE starts_with(document_id, ?) "
        "ORDER BY document_id", [ref])]
    if ref in hits:
        return ref
    if len(hits) == 1 and len(ref) >= MIN_PREFIX:
        return hits[0]
    if not hits or len(ref) < MIN_PREFIX:
        raise UnknownRun(f"no answers document {ref!r} in {conn.path} (give its id or a "
                         f"unique prefix of {MIN_PREFIX}+ characters)")
    raise UnknownRun(f"{ref!r} names {len(hits)} answers documents "
                     f"({[h[:12] for h in hits]}); give more of the id")


def answer_details(document_id, view: str, corpora=None, *, db_path=None):
    """One answers document's per-query answers visible in ``view``: question, gold and
    predicted (JSON; predicted NULL when declined), ``em``, ``partial``,
    ``answered_share``, the mechanism and its notes (JSON)."""
    source = relation(view, "answers")
    with connect(db_path, read_only=True) as conn:
        doc = _one_answers_document(conn, document_id)
        where, params = _where("v", corpora=corpora)
        return conn.query_df(
            "SELECT v.corpus, v.tier, v.query_class, v.query_id, v.rule, v.question, "
            "v.answer_kind, v.gold, v.predicted, v.em, v.partial, v.answered_share, "
            f"v.mechanism, v.notes FROM {source} AS v WHERE v.document_id = ?{where} "
            "ORDER BY v.corpus, v.query_id", [doc, *params])


# --------------------------------------------------------------------------- migration decisions

for _view, _relation in (("publishable", "migration_decisions_publishable"),
                         ("internal", "migration_decisions")):
    VIEWS[_view]["migration_decisions"] = _relation


def migration_decisions(view: str, *, db_path=None):
    """Every stored embedding-migration decision visible in ``view`` (publishable: tier-A
    corpora only), newest report first, T0 before T1 within a report."""
    source = relation(view, "migration_decisions")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(f"SELECT * FROM {source} "
                             "ORDER BY ingested_at DESC, document_id, eval_tier")
