"""Team mode: the submissions the ingester took from the shared store (migration 009)."""

from __future__ import annotations

from warehouse.db import connect

_COLUMNS = ("digest", "kind", "state", "stored_id", "inserted", "tier_cap", "trust",
            "signed_by", "reason", "store_url", "submitted_at", "applied_at")


def submissions(*, db_path=None) -> list[dict]:
    """Every recorded submission, oldest applied first: its state, the tier cap and why
    (the signature verdict), and a quarantined one's located reason."""
    with connect(db_path, read_only=True) as conn:
        rows = conn.query_all(f"SELECT {', '.join(_COLUMNS)} FROM submissions "
                              "ORDER BY applied_at, digest")
    return [dict(zip(_COLUMNS, row)) for row in rows]
