"""The Agreement page: stored agreement documents, coefficients and arms."""

from __future__ import annotations

from warehouse.queries.base import _where, relation
from warehouse.db import connect


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
            "tier_at(max(tier_rank(g.tier))) AS tier, bool_or(g.pooled) AS has_pooled, "
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
