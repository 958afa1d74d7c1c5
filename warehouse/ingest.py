"""Ingest: one results directory (or one document) in one explicit transaction.

A run is there whole or not at all.  Its id is the sha256 of its canonical metrics.json, so
ingesting the same directory again is a no-op that says so (it only adds extra files whose
handler arrived since).  Everything is read and checked before the writer lock is taken,
and rows go in through Arrow (register + INSERT ... SELECT), never one by one.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Callable, Mapping

from harness.core import interrupts
from warehouse import documents, schema
from warehouse.db import Connection, connect, identifier, resolve_path
from warehouse.errors import IngestRefused
from warehouse.load import (PreparedRun, document_identity, document_tier, load_document,
                            load_results, refuse)

log = logging.getLogger(__name__)

#: order in which a run's tables are filled
RUN_TABLES = ("runs", "corpora", "metric_rows", "per_query", "rankings", "latency")

_LABELS = {"metric_rows": "metric values", "per_query": "per-query values",
           "rankings": "ranking rows", "latency": "latency records"}

#: Test seam: when set, called inside the open ingest transaction after every row is
#: inserted and before COMMIT, with the run id or document id.  Tests use it to kill or
#: race a writer mid-transaction; nothing in the product sets it.
in_transaction_hook: Callable[[str], None] | None = None


@dataclass(frozen=True)
class IngestReport:
    """What an ingest did.  ``run_id`` is the run's id (for a document: the document's id,
    the sha256 of its canonical JSON); ``inserted`` is False when it was already there."""

    run_id: str
    inserted: bool
    message: str
    kind: str = "results"
    rows: Mapping[str, int] = field(default_factory=dict)
    db_path: str = ""


def insert_bulk(conn: Connection, table: str, frame) -> int:
    """Insert a whole Arrow table at once (what ingest uses)."""
    return conn.insert_frame(table, frame)


def insert_row_by_row(conn: Connection, table: str, frame) -> int:
    """One INSERT per row: the baseline the benchmark measures :func:`insert_bulk` against.
    Ingest never uses it."""
    columns = list(frame.column_names)
    sql = (f"INSERT INTO {identifier(table)} ({', '.join(identifier(c) for c in columns)}) "
           f"VALUES ({', '.join('?' for _ in columns)})")
    for row in frame.to_pylist():
        conn.execute(sql, [row[c] for c in columns])
    return len(frame)


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _call_handler(fn, source, *args) -> None:
    try:
        fn(*args)
    except IngestRefused:
        raise
    except ValueError as exc:
        raise IngestRefused(f"{source}: {exc}", path=source) from exc


def _insert_files(conn: Connection, run_id: str, files: list[dict]) -> None:
    import pyarrow as pa

    if files:
        conn.insert_frame("run_files", pa.Table.from_pylist(
            [{"run_id": run_id, **f} for f in files],
            schema=pa.schema([("run_id", pa.string()), ("name", pa.string()),
                              ("sha256", pa.string()), ("bytes", pa.int64()),
                              ("stored_by", pa.string())])))


def _backfill(conn: Connection, prepared: PreparedRun) -> list[str]:
    """Extras of an already-stored run whose handler is newer than the run's ingest."""
    stored = {name for (name,) in conn.query_all(
        "SELECT name FROM run_files WHERE run_id = ? AND stored_by IS NOT NULL",
        [prepared.run_id])}
    todo = [(h, name, content) for h, name, content in prepared.extras if name not in stored]
    if not todo:
        return []
    by_name = {f["name"]: f for f in prepared.files}
    with conn.transaction():
        for handler, name, content in todo:
            _call_handler(handler.ingest, prepared.results_dir / name,
                          conn, prepared.run_id, content, prepared.metrics)
            conn.execute("DELETE FROM run_files WHERE run_id = ? AND name = ?",
                         [prepared.run_id, name])
            _insert_files(conn, prepared.run_id, [by_name[name]])
    return [name for _, name, _ in todo]


def store(prepared: PreparedRun, db_path=None, *, inserter=insert_bulk,
          timeout: float | None = None) -> IngestReport:
    """Write a checked run into the warehouse in one transaction (see :func:`ingest_results`)."""
    import pyarrow as pa

    path = resolve_path(db_path)
    rid, name = prepared.run_id, prepared.control_name
    with ExitStack() as committed, \
            connect(path, read_only=False, check_schema=False, timeout=timeout) as conn:
        schema.apply_pending(conn)
        if conn.query_one("SELECT 1 FROM runs WHERE run_id = ?", [rid]):
            added = _backfill(conn, prepared)
            extra = f"; stored extra files {added}" if added else ""
            return IngestReport(rid, False, f"run {rid[:12]} ({name}) is already in {path}: "
                                f"nothing to do{extra}", db_path=str(path))
        tables = dict(prepared.tables)
        tables["runs"] = pa.Table.from_pylist([{**prepared.run_row, "ingested_at": _now()}])
        counts = {}
        with conn.transaction():
            for table in RUN_TABLES:
                frame = tables.get(table)
                if frame is not None and len(frame):
                    counts[table] = inserter(conn, table, frame)
            for handler, file_name, content in prepared.extras:
                _call_handler(handler.ingest, prepared.results_dir / file_name,
                              conn, rid, content, prepared.metrics)
            _insert_files(conn, rid, prepared.files)
            if in_transaction_hook is not None:
                in_transaction_hook(rid)
            # from the COMMIT on, Ctrl-C waits until this function returns: the run is then
            # stored whole and the caller says so (harness.core.interrupts.take_late)
            committed.enter_context(interrupts.deferred(reraise=False))
        parts = [f"{counts.get(t, 0)} {label}" for t, label in _LABELS.items()]
        message = f"ingested run {rid[:12]} ({name}) into {path}: " + ", ".join(parts)
        if prepared.extras:
            message += f"; extra files {[n for _, n, _ in prepared.extras]}"
        if prepared.unhandled:
            message += f"; kept only as checksums (no handler): {prepared.unhandled}"
        log.info(message)
        return IngestReport(rid, True, message, rows=counts, db_path=str(path))


def ingest_results(results_dir, db_path=None) -> IngestReport:
    """Ingest one results directory (metrics.json, per_query.jsonl, rankings.jsonl,
    runinfo.json and any extra file a handler in :mod:`warehouse.documents` stores).

    Creates or migrates the warehouse as needed.  Raises
    :class:`~warehouse.errors.IngestRefused` (naming file and field; nothing written) for
    malformed input and :class:`~warehouse.errors.WarehouseBusy` when the writer lock
    cannot be had in time.
    """
    return store(load_results(results_dir), db_path)


def ingest_document(path_or_mapping, db_path=None) -> IngestReport:
    """Ingest one standalone JSON document carrying a ``"kind"`` field.

    The handler of that kind (:mod:`warehouse.documents`) validates it first, then stores
    it inside the same transaction as its ``documents`` row.  The document's tier is its
    own ``tier`` field, else its run's tier, else B (doubt fails closed).
    """
    doc, source = load_document(path_or_mapping)
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind:
        refuse(source, "kind", "missing: a document names its kind")
    try:
        handler = documents.handler_for_kind(kind)
    except KeyError as exc:
        refuse(source, "kind", exc.args[0])
    _call_handler(handler.validate, source, doc, source)
    doc_id, text = document_identity(doc, source)
    run_id = doc.get("run_id") if isinstance(doc.get("run_id"), str) else None
    corpus = doc.get("corpus") if isinstance(doc.get("corpus"), str) else None
    tier = document_tier(doc, source)
    path = resolve_path(db_path)
    with ExitStack() as committed, connect(path, read_only=False, check_schema=False) as conn:
        schema.apply_pending(conn)
        if conn.query_one("SELECT 1 FROM documents WHERE document_id = ?", [doc_id]):
            return IngestReport(doc_id, False, f"{kind} document {doc_id[:12]} is already in "
                                f"{path}: nothing to do", kind=kind, db_path=str(path))
        if tier is None:
            found = conn.query_one("SELECT tier FROM runs WHERE run_id = ?", [run_id])
            tier = found[0] if found else "B"
        with conn.transaction():
            conn.execute(
                "INSERT INTO documents (document_id, kind, run_id, corpus, tier, source, "
                "ingested_at, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [doc_id, kind, run_id, corpus, tier, source, _now(), text])
            _call_handler(handler.ingest, source, conn, doc)
            if in_transaction_hook is not None:
                in_transaction_hook(doc_id)
            committed.enter_context(interrupts.deferred(reraise=False))  # as in store()
        message = f"ingested {kind} document {doc_id[:12]} (tier {tier}) into {path}"
        log.info(message)
        return IngestReport(doc_id, True, message, kind=kind, rows={"documents": 1},
                            db_path=str(path))
