"""The Overview page: warehouse health, runs, corpora and their composition, the filter choices."""

from __future__ import annotations

from warehouse.queries.base import relation
from warehouse.db import change_stamp, connect, resolve_path


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
    "code_revision, source_dir, retrieval")


def runs(*, view: str = "internal", db_path=None):
    """Every run ``view`` shows (``internal``: all; ``publishable``: runs whose every corpus
    is tier A), oldest first, with its configuration and provenance columns."""
    source = relation(view, "runs")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(f"SELECT {_RUN_COLUMNS} FROM {source} ORDER BY created_at, run_id")


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


def per_query_count(view: str, *, db_path=None) -> int:
    """How many per-query values ``view`` shows (publishable: tier-A rows of tier-A runs)."""
    with connect(db_path, read_only=True) as conn:
        return int(conn.query_one(f"SELECT count(*) FROM {relation(view, 'per_query')}")[0])


def runs_by_corpus(view: str, *, db_path=None):
    """Runs per corpus and tier in ``view``: corpus, tier, runs (distinct runs that declared
    it), arms (distinct control names), the newest run's creation time."""
    corpora_rel, runs_rel = relation(view, "corpora"), relation(view, "runs")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT c.name AS corpus, c.tier, count(DISTINCT c.run_id) AS runs, "
            "count(DISTINCT r.control_name) AS arms, max(r.created_at) AS newest "
            f"FROM {corpora_rel} AS c JOIN {runs_rel} AS r ON r.run_id = c.run_id "
            "GROUP BY c.name, c.tier ORDER BY c.name, c.tier")


def latest_comparisons(view: str, limit: int = 12, *, db_path=None):
    """The stored paired tests of the newest comparisons documents in ``view``, class
    ``all`` only: control, arm, corpus, measure, delta with its interval, Holm p, verdict,
    when the document was ingested; newest first, at most ``limit`` rows."""
    rel = relation(view, "comparisons")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            "SELECT x.control_name, x.arm_name, x.corpus, x.tier, x.measure, x.n, x.delta, "
            "x.delta_lower, x.delta_upper, x.p_holm, x.p_floor, x.alpha, x.verdict, "
            "x.ingested_at "
            f"FROM {rel} AS x WHERE x.query_class = 'all' "
            "QUALIFY row_number() OVER (PARTITION BY x.control_run_id, x.arm_run_id, "
            "x.corpus, x.query_class, x.measure ORDER BY x.ingested_at DESC, "
            "x.document_id) = 1 "
            "ORDER BY x.ingested_at DESC, x.control_name, x.corpus, x.measure, x.arm_name "
            "LIMIT ?", [int(limit)])
