"""Kind ``comparisons``: paired randomization tests of arms against a control, Holm-adjusted
within each measure (``harness.stats.randomization.compare_runs``), as a standalone
document.  A document comparing several arms at once is the one whose Holm correction
spans them all."""

from __future__ import annotations

from warehouse.documents import _statistics

KIND = "comparisons"


def validate(doc, source) -> None:
    _statistics.validate_comparisons(doc, source)


def ingest(conn, doc) -> None:
    _statistics.store_comparisons(conn, doc)
