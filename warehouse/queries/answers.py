"""The Answers page: aggregation answer runs, rows with their floor, per-query answers."""

from __future__ import annotations

from warehouse.queries.base import MIN_PREFIX, _where, relation
from warehouse.db import Connection, connect
from warehouse.errors import UnknownRun


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
            "string_agg(c.corpus, '+' ORDER BY c.corpus) AS corpora, "
            "tier_at(max(tier_rank(c.tier))) AS tier, "
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
            "stricter(r.tier, coalesce(f.tier, r.tier)) AS tier, r.query_class, r.rule, r.n, "
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
