"""``intervals.json`` in a results directory (written by ``python -m harness intervals``):
one interval per metric row x measure, checked against the run's own metrics.json."""

from __future__ import annotations

from warehouse.documents import _statistics

RESULTS_FILE = "intervals.json"


def validate(content, source, metrics) -> None:
    _statistics.validate_intervals(content, source)
    _statistics.check_intervals_against_run(content, source, metrics)


def ingest(conn, run_id, content, metrics) -> None:
    _statistics.store_intervals(conn, content)
