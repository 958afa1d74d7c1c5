"""Kind ``ppi``: a judge-calibrated estimate (``python -m harness ppi --out FILE``), one row
in ``ppi`` (migration 003).  Its tier is its own (B unless declared: doubt fails closed)."""

from __future__ import annotations

from warehouse.documents import _certificates

KIND = "ppi"


def validate(doc, source) -> None:
    _certificates.validate_certificate_or_ppi(doc, source, KIND)


def ingest(conn, doc) -> None:
    _certificates.store_ppi(conn, doc)
