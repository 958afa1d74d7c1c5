"""Kind ``intervals``: an ``intervals.json`` ingested as a standalone document
(``python -m warehouse ingest-document`` / :func:`warehouse.ingest_document`).

The same document inside a results directory is handled by :mod:`.intervals_file`; both
store rows in the ``intervals`` table (migration 002), once per document.
"""

from __future__ import annotations

from warehouse.documents import _statistics

KIND = "intervals"


def validate(doc, source) -> None:
    _statistics.validate_intervals(doc, source)


def ingest(conn, doc) -> None:
    _statistics.store_intervals(conn, doc)
