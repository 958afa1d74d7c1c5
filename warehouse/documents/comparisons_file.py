"""``comparisons.json`` in a results directory (``python -m harness intervals DIR
--control CONTROL``): this run tested against its control."""

from __future__ import annotations

from warehouse.documents import _statistics

RESULTS_FILE = "comparisons.json"


def validate(content, source, metrics) -> None:
    _statistics.validate_comparisons(content, source)
    _statistics.check_comparisons_against_run(content, source, metrics)


def ingest(conn, run_id, content, metrics) -> None:
    _statistics.store_comparisons(conn, content)
