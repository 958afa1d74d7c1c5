"""The Compare page: deltas against a control (with their stored paired tests),
comparability, per-query pairs and rankings."""

from __future__ import annotations

from typing import Iterable, Sequence

from warehouse.queries.base import _one_run, _where, as_list, relation, resolve_runs
from warehouse.db import Connection, connect


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
    restrictive of the two sides (``stricter``, by the ranks of migration 007)."""
    source = relation(view, "metric_rows")
    with connect(db_path, read_only=True) as conn:
        control = _one_run(conn, control_run)
        where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                               classes=classes, measures=measures)
        frame = conn.query_df(
            f"SELECT m.run_id, r.control_name, m.corpus, stricter(m.tier, c.tier) AS tier, "
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
            "stricter(coalesce(a.tier, b.tier), coalesce(b.tier, a.tier)) AS tier, "
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


def fetch_per_query_runs(conn: Connection, view: str, run_ids, corpora=None, classes=None,
                         measures=None):
    """The per-query values of several runs (``run_id`` first), on an open connection.
    ``classes`` does not filter: a slice's ``all`` class needs every query of its corpus,
    and a pooled ``a+b`` corpus selects the queries of its members."""
    source = relation(view, "per_query")
    names = as_list(corpora)
    members = None if names is None else sorted({m for c in names for m in c.split("+")})
    where, params = _where("x", corpora=members, measures=measures)
    return conn.query_df(
        f"SELECT x.run_id, x.corpus, x.query_class, x.query_id, x.measure, x.value "
        f"FROM {source} AS x WHERE list_contains(?::VARCHAR[], x.run_id){where} "
        "ORDER BY x.run_id, x.corpus, x.query_id, x.measure", [list(run_ids), *params])


def per_query_runs(view: str, run_ids, corpora=None, measures=None, *, db_path=None):
    """:func:`fetch_per_query_runs`: the per-query values of several runs (the tie marks of
    the Results page are computed from them)."""
    with connect(db_path, read_only=True) as conn:
        return fetch_per_query_runs(conn, view, resolve_runs(conn, run_ids) or [], corpora,
                                    None, measures)


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


def query_texts(run, view: str, *, db_path=None):
    """The stored query texts of one run (``queries.jsonl``): corpus, tier, query id, text;
    none for a run scored without them."""
    source = relation(view, "queries")
    with connect(db_path, read_only=True) as conn:
        rid = _one_run(conn, run)
        return conn.query_df(
            f"SELECT q.corpus, q.tier, q.query_id, q.text FROM {source} AS q "
            "WHERE q.run_id = ? ORDER BY q.corpus, q.query_id", [rid])


_LATEST_COMPARISONS = (
    "SELECT x.* FROM {rel} AS x QUALIFY row_number() OVER (PARTITION BY x.control_run_id, "
    "x.arm_run_id, x.corpus, x.query_class, x.measure "
    "ORDER BY x.ingested_at DESC, x.document_id) = 1")


def comparisons(view: str, control_run=None, runs=None, corpora=None, classes=None,
                measures=None, *, db_path=None):
    """Stored paired tests (the newest per control x arm x corpus x class x measure):
    means, delta with the interval of its test at the verdict's Holm level
    (``delta_lower``, ``delta_upper``, ``delta_confidence``; NULL for a document stored
    before schema 2) and the unadjusted bootstrap interval (``unadjusted_lower``,
    ``unadjusted_upper`` at ``confidence``), discordant pairs, p, Holm-adjusted p, p floor,
    verdict.
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
            "x.delta_lower, x.delta_upper, x.delta_confidence, x.holm_divisor, "
            "x.unadjusted_lower, x.unadjusted_upper, x.confidence, x.discordant, x.improved, "
            "x.worsened, x.test_method, x.permutations, x.p, x.p_floor, x.p_holm, "
            "x.family_size, x.alpha, x.verdict, x.seed "
            f"FROM x WHERE TRUE{where} "
            "ORDER BY x.control_name, x.corpus, x.query_class = 'all', x.query_class, "
            "x.measure, x.arm_name", params)


def fetch_deltas_tested(conn: Connection, control_run, runs, view: str, corpora=None,
                        classes=None, measures=None):
    """:func:`deltas_tested` on an open connection."""
    source = relation(view, "metric_rows")
    latest = _LATEST_COMPARISONS.format(rel=relation(view, "comparisons"))
    control = _one_run(conn, control_run)
    where, params = _where("m", runs=resolve_runs(conn, runs), corpora=corpora,
                           classes=classes, measures=measures)
    frame = conn.query_df(
        f"WITH x AS ({latest}) "
        "SELECT m.run_id, r.control_name, m.corpus, "
        "stricter(stricter(m.tier, c.tier), coalesce(x.tier, m.tier)) AS tier, m.query_class, "
        "m.measure, c.value AS control_value, m.value, m.value - c.value AS delta, "
        "c.n AS control_n, m.n, (c.n = m.n) AS paired, x.delta_lower, x.delta_upper, "
        "x.discordant, x.p, x.p_holm, x.p_floor, x.family_size, x.alpha, x.verdict, "
        "x.permutations "
        f"FROM {source} AS m JOIN {source} AS c ON c.run_id = ? AND c.corpus = m.corpus "
        "AND c.query_class = m.query_class AND c.measure = m.measure "
        "JOIN runs AS r ON r.run_id = m.run_id "
        "LEFT JOIN x ON x.control_run_id = c.run_id AND x.arm_run_id = m.run_id "
        "AND x.corpus = m.corpus AND x.query_class = m.query_class "
        "AND x.measure = m.measure AND x.n = m.n "
        f"WHERE m.run_id <> ?{where} "
        "ORDER BY r.created_at, m.run_id, m.corpus, m.query_class <> 'all', m.query_class, "
        "m.measure", [control, control, *params])
    return _with_comparability(conn, frame, control)


def deltas_tested(control_run, runs, view: str, corpora=None, classes=None, measures=None, *,
                  db_path=None):
    """:func:`deltas` with the stored paired test of each arm against this control, where
    one exists: ``delta_lower``, ``delta_upper``, ``p``, ``p_holm``, ``p_floor``,
    ``family_size``, ``alpha``, ``verdict``, ``permutations`` (NULL otherwise), and ``comparable`` /
    ``not_comparable_because`` as in :func:`deltas`.  The tier is the most restrictive of
    the control's row, the arm's row and the test's row."""
    with connect(db_path, read_only=True) as conn:
        return fetch_deltas_tested(conn, control_run, runs, view, corpora, classes, measures)
