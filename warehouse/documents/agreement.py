"""Kind ``agreement``: do two corpora rank the arms' changes alike
(``python -m harness agreement --out FILE``)?  One row per family and a pooled row in
``agreement``, one row per arm in ``agreement_arms`` (migration 002)."""

from __future__ import annotations

from warehouse.documents import _statistics

KIND = "agreement"


def validate(doc, source) -> None:
    _statistics.validate_agreement(doc, source)


def ingest(conn, doc) -> None:
    _statistics.store_agreement(conn, doc)
