"""``calibration.jsonl`` in a results directory (written by ``harness bench``): per query the
stage, the first relevant rank, the top score and how many candidates were recorded, in
``calibration`` (migration 003).  The scores themselves stay in the results directory."""

from __future__ import annotations

from warehouse.documents import _certificates

RESULTS_FILE = "calibration.jsonl"


def validate(content, source, metrics) -> None:
    _certificates.validate_calibration(content, source, metrics)


def ingest(conn, run_id, content, metrics) -> None:
    _certificates.store_calibration(conn, run_id, content)
