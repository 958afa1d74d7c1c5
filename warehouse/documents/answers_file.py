"""``answers.json`` in a results directory beside a metrics.json (answers of the same corpora
as the retrieval run): checked as the ``answers`` kind is, and against the run's own
corpora (same tier, same content); stored once, linked to the run."""

from __future__ import annotations

from warehouse.documents import _answers

RESULTS_FILE = "answers.json"


def validate(content, source, metrics) -> None:
    _answers.validate_answers(content, source)
    _answers.check_against_run(content, source, metrics)


def ingest(conn, run_id, content, metrics) -> None:
    _answers.store_answers(conn, content, run_id=run_id)
