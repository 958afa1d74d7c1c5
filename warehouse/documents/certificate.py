"""Kind ``certificate``: a coverage or risk certificate (``python -m harness calibrate``),
one row in ``certificates`` (migration 003).  The stored status is the one it was issued
with; expiry and alarms are computed against the run served now."""

from __future__ import annotations

from warehouse.documents import _certificates

KIND = "certificate"


def validate(doc, source) -> None:
    _certificates.validate_certificate_or_ppi(doc, source, KIND)


def ingest(conn, doc) -> None:
    _certificates.store_certificate(conn, doc)
