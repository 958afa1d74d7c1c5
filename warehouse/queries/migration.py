"""The Migration page: embedding-migration decisions per evaluation tier."""

from __future__ import annotations

from warehouse.queries.base import relation
from warehouse.db import connect


def migration_decisions(view: str, *, db_path=None):
    """Every stored embedding-migration decision visible in ``view`` (publishable: tier-A
    corpora only), newest report first, T0 before T1 within a report."""
    source = relation(view, "migration_decisions")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(f"SELECT * FROM {source} "
                             "ORDER BY ingested_at DESC, document_id, eval_tier")
