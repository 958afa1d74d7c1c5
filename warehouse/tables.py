"""Claims into tables: the one handler table, and the rows a claim stores.

Every kind is a class of :mod:`harness.claims` that declares its tables and columns
(``TABLES``) and builds its rows (``table_rows``); this module turns those columns into Arrow
schemas and inserts the rows inside the caller's transaction, once per document (its id is
the sha256 of its canonical content).  There is no per-kind code here: a new kind is one
claim class and one SQL migration.

* :data:`DOCUMENT_KINDS`: ``kind`` field -> claim class, for standalone documents;
* :data:`RESULTS_FILES`: file name -> claim class, for files beside a run's metrics.json
  (``intervals.json``, ``comparisons.json``, ``calibration.jsonl``, ``answers.json``).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Mapping

from harness.claims import DOCUMENT_KINDS as _DOCUMENT_KINDS
from harness.claims import RESULTS_FILES as _RESULTS_FILES
from harness.claims.base import Claim, Columns, check_columns
from harness.claims.metrics import (METRICS_JSON, METRICS_MD, PER_QUERY, QRELS, QUERIES, RANKINGS,
                                    RUNINFO)
from warehouse.db import Connection, identifier

#: files of a results directory the core ingest itself reads (qrels.jsonl: checked by its pin)
CORE_FILES = frozenset({METRICS_JSON, METRICS_MD, PER_QUERY, RANKINGS, QRELS, QUERIES, RUNINFO})

DOCUMENT_KINDS: dict[str, type[Claim]] = dict(_DOCUMENT_KINDS)
RESULTS_FILES: dict[str, type[Claim]] = dict(_RESULTS_FILES)


def arrow_schema(columns: Columns):
    """An Arrow schema from a claim's ``(name, type name)`` columns."""
    import pyarrow as pa

    types = {"string": pa.string(), "double": pa.float64(), "int64": pa.int64(),
             "int32": pa.int32(), "bool": pa.bool_(), "timestamp": pa.timestamp("us"),
             "string_list": pa.list_(pa.string()), "double_list": pa.list_(pa.float64()),
             "bool_list": pa.list_(pa.bool_())}
    return pa.schema([(name, types[kind]) for name, kind in columns])


def arrow_table(rows: list[dict], columns: Columns):
    """``rows`` (dicts keyed by the column names) as one Arrow table: a missing value is a
    NULL, never a NaN."""
    import pyarrow as pa

    return pa.Table.from_pylist(rows, schema=arrow_schema(columns))


def kind_for_document(kind: str) -> type[Claim]:
    if kind not in DOCUMENT_KINDS:
        raise KeyError(f"unknown document kind {kind!r}; known kinds: {sorted(DOCUMENT_KINDS)}")
    return DOCUMENT_KINDS[kind]


def already_stored(conn: Connection, claim: Claim, document_id: str) -> bool:
    """Has this document already put rows into its kind's first table?"""
    table = next(iter(type(claim).TABLES))
    key = "run_id" if table == "calibration" else "document_id"
    return conn.query_one(f"SELECT 1 FROM {identifier(table)} WHERE {key} = ? LIMIT 1",
                          [document_id]) is not None


def store(conn: Connection, claim: Claim, document_id: str, stamp,
          run_id: str | None = None) -> int:
    """Insert ``claim``'s rows (nothing when its id is already stored; a stored document
    that arrives again beside a run is linked to that run).  Returns the rows inserted."""
    kind = type(claim)
    key = run_id if kind.KIND == "calibration" else document_id
    link = getattr(kind, "RUN_LINK_TABLE", None)
    created = None
    if run_id is not None and link is not None:
        found = conn.query_one("SELECT created_at FROM runs WHERE run_id = ?", [run_id])
        created = found[0] if found else None
    if already_stored(conn, claim, key):
        if run_id is not None and link is not None:
            conn.execute(f"UPDATE {identifier(link)} SET run_id = ?, created_at = ? "
                         "WHERE document_id = ? AND run_id IS NULL",
                         [run_id, created, document_id])
        return 0
    inserted = 0
    for table, rows in claim.table_rows(document_id, stamp, run_id).items():
        if not rows:
            continue
        if table == link:
            rows = [{**r, "created_at": created} for r in rows]
        inserted += conn.insert_frame(table, arrow_table(rows, kind.TABLES[table]))
    return inserted


def _check(kind: type[Claim]) -> None:
    check_columns(kind)
    if not kind.TABLES:
        raise ValueError(f"{kind.__name__} declares no tables to store")


@contextmanager
def registered(kind: type[Claim]) -> Iterator[type[Claim]]:
    """Add a claim kind (a plug-in, or a test's) to the handler table for a ``with``
    block; its tables must exist."""
    _check(kind)
    table: Mapping = RESULTS_FILES if kind.RESULTS_FILE else DOCUMENT_KINDS
    name = kind.RESULTS_FILE or kind.KIND
    if name in table or name in CORE_FILES:
        raise ValueError(f"{name!r} already has a handler")
    table[name] = kind  # type: ignore[index]
    try:
        yield kind
    finally:
        table.pop(name, None)  # type: ignore[attr-defined]
