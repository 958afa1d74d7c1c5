"""Kind ``answers``: an ``answers.json`` written by ``python -m harness answer`` (aggregation
queries scored on the answer: EM / partial / answered), ingested as a standalone document.

Stored in the tables of migration 005 (``answer_runs``, ``answer_corpora``, ``answer_rows``
with the ``none`` floor beside each row, ``answers`` per query), once per document.  The
same file inside a results directory is handled by :mod:`.answers_file`.
"""

from __future__ import annotations

from warehouse.documents import _answers

KIND = "answers"


def validate(doc, source) -> None:
    _answers.validate_answers(doc, source)


def ingest(conn, doc) -> None:
    _answers.store_answers(conn, doc)
