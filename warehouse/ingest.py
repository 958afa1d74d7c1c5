"""Ingest: one results directory (or one document) in one explicit transaction.

A run is there whole or not at all.  Its id is the sha256 of its canonical metrics.json, so
ingesting the same directory again is a no-op that says so (it only adds extra files whose
handler arrived since).  Everything is read and checked before the writer lock is taken,
and rows go in through Arrow (register + INSERT ... SELECT), never one by one.
"""

from __future__ import annotations

import logging
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Callable, Mapping

from harness.core.formats import FormatError
from harness.core.tiers import at_least_as_restrictive, most_restrictive_tier
from warehouse import schema, tables
from harness.core import interrupts
from warehouse.db import Connection, connect, identifier, resolve_path
from warehouse.errors import IngestRefused
from warehouse.load import PreparedRun, document_identity, load_document, load_results, refuse

log = logging.getLogger(__name__)

#: order in which a run's tables are filled
RUN_TABLES = ("runs", "corpora", "metric_rows", "per_query", "rankings", "queries", "latency")

_LABELS = {"metric_rows": "metric values", "per_query": "per-query values",
           "rankings": "ranking rows", "queries": "query texts", "latency": "latency records"}

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


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


RUN_FILE_COLUMNS = (("run_id", "string"), ("name", "string"), ("sha256", "string"),
                    ("bytes", "int64"), ("stored_by", "string"))


def _insert_files(conn: Connection, run_id: str, files: list[dict]) -> None:
    if files:
        conn.insert_frame("run_files", tables.arrow_table(
            [{"run_id": run_id, **f} for f in files], RUN_FILE_COLUMNS))


def _store_extra(conn: Connection, run_id: str, claim, stamp) -> int:
    return tables.store(conn, claim, claim.identity(), stamp, run_id=run_id)


def _backfill(conn: Connection, prepared: PreparedRun,
              tier_cap: str | None = None) -> list[tuple[str, str, int]]:
    """Extras of an already-stored run that were not stored with it (written into its
    directory later, or of a kind newer than the run's ingest): ``(file, kind, rows)``."""
    stored = {name for (name,) in conn.query_all(
        "SELECT name FROM run_files WHERE run_id = ? AND stored_by IS NOT NULL",
        [prepared.run_id])}
    todo = [(name, claim) for name, claim in prepared.extras if name not in stored]
    if not todo:
        return []
    by_name = {f["name"]: f for f in prepared.files}
    done = []
    with conn.transaction():
        for name, claim in todo:
            rows = _store_extra(conn, prepared.run_id, claim, _now())
            conn.execute("DELETE FROM run_files WHERE run_id = ? AND name = ?",
                         [prepared.run_id, name])
            _insert_files(conn, prepared.run_id, [by_name[name]])
            _cap_extras(conn, prepared, tier_cap, {name})
            done.append((name, type(claim).KIND, rows))
    return done


def _stored_files(added: list[tuple[str, str, int]]) -> str:
    """``intervals.json (intervals, 128 rows) and comparisons.json (...)``."""
    parts = [f"{name} ({kind}, {rows} row{'' if rows == 1 else 's'})"
             for name, kind, rows in added]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


#: the tables filled from ``runinfo.json``, which no signature covers (docs/team.md)
UNSIGNED_TABLES = ("latency",)


def cap_tiers(prepared: PreparedRun, cap: str,
              tables: tuple[str, ...] | None = None) -> PreparedRun:
    """``prepared`` with every tier made at least as restrictive as ``cap`` (the team
    ingester's rule for a run whose tier A no trusted signature vouches for); ``tables``:
    only those tables' rows (the run row keeps its tier)."""
    import pyarrow as pa

    def capped(tier):
        return None if tier is None else most_restrictive_tier([tier, cap])

    frames = {}
    for table, frame in prepared.tables.items():
        if "tier" in frame.column_names and (tables is None or table in tables):
            i = frame.column_names.index("tier")
            frame = frame.set_column(i, "tier", pa.array(
                [capped(t) for t in frame.column("tier").to_pylist()], pa.string()))
        frames[table] = frame
    if tables is not None:
        return replace(prepared, tables=frames)
    return replace(prepared, tables=frames,
                   run_row={**prepared.run_row, "tier": capped(prepared.run_row["tier"])})


def cap_unsigned(prepared: PreparedRun, cap: str = "B") -> PreparedRun:
    """``prepared`` with the rows no signature covers (:data:`UNSIGNED_TABLES`) capped at
    ``cap``: in team mode a trusted signature vouches for the claim files only."""
    return cap_tiers(prepared, cap, UNSIGNED_TABLES)


def _cap_extras(conn: Connection, prepared: PreparedRun, cap: str | None,
                names=None) -> None:
    """Cap the tier of the rows the run's extra files stored (inside the caller's
    transaction): calibration rows by run, the others by their document."""
    if cap is None:
        return
    for name, claim in prepared.extras:
        if names is not None and name not in names:
            continue
        kind = type(claim)
        for table, columns in kind.TABLES.items():
            if "tier" not in {c for c, _ in columns}:
                continue
            key, value = (("run_id", prepared.run_id) if kind.KIND == "calibration"
                          else ("document_id", claim.identity()))
            # qualified: inside the macro's subquery a bare `tier` is tier_ranks' own column
            conn.execute(f"UPDATE {identifier(table)} SET tier = stricter("
                         f"{identifier(table)}.tier, ?) WHERE {identifier(key)} = ?",
                         [cap, value])


def store(prepared: PreparedRun, db_path=None, *, inserter=insert_bulk,
          timeout: float | None = None, tier_cap: str | None = None,
          also: Callable[[Connection, bool], None] | None = None) -> IngestReport:
    """Write a checked run into the warehouse in one transaction (see :func:`ingest_results`).

    ``tier_cap``: every row is stored at least this restrictive (:func:`cap_tiers`).
    ``also(conn, inserted)`` runs inside the transaction that stores the run (or, for a run
    already there, inside a transaction of its own): the team ingester records the
    submission there, so it is applied exactly when its rows are."""
    import pyarrow as pa

    path = resolve_path(db_path)
    if tier_cap is not None:
        prepared = cap_tiers(prepared, tier_cap)
    rid, name = prepared.run_id, prepared.control_name
    with ExitStack() as committed, \
            connect(path, read_only=False, check_schema=False, timeout=timeout) as conn:
        schema.apply_pending(conn)
        if conn.query_one("SELECT 1 FROM runs WHERE run_id = ?", [rid]):
            added = _backfill(conn, prepared, tier_cap)
            if also is not None:
                with conn.transaction():
                    also(conn, False)
            if not added:
                return IngestReport(rid, False, f"run {rid[:12]} ({name}) is already in "
                                    f"{path}: nothing to do", db_path=str(path))
            return IngestReport(rid, False, f"run {rid[:12]} ({name}) was already in {path}; "
                                f"stored what its directory gained since: "
                                f"{_stored_files(added)}",
                                rows={n: r for n, _, r in added}, db_path=str(path))
        frames = dict(prepared.tables)
        stamp = _now()
        frames["runs"] = pa.Table.from_pylist([{**prepared.run_row, "ingested_at": stamp}])
        counts = {}
        with conn.transaction():
            for table in RUN_TABLES:
                frame = frames.get(table)
                if frame is not None and len(frame):
                    counts[table] = inserter(conn, table, frame)
            for _, claim in prepared.extras:
                _store_extra(conn, rid, claim, stamp)
            _cap_extras(conn, prepared, tier_cap)
            _insert_files(conn, rid, prepared.files)
            if also is not None:
                also(conn, True)
            if in_transaction_hook is not None:
                in_transaction_hook(rid)
            # from the COMMIT on, Ctrl-C waits until this function returns: the run is then
            # stored whole and the caller says so (harness.core.interrupts.take_late)
            committed.enter_context(interrupts.deferred(reraise=False))
        parts = [f"{counts.get(t, 0)} {label}" for t, label in _LABELS.items()]
        message = f"ingested run {rid[:12]} ({name}) into {path}: " + ", ".join(parts)
        if prepared.extras:
            message += f"; extra files {[n for n, _ in prepared.extras]}"
        if prepared.unhandled:
            message += f"; kept only as checksums (no handler): {prepared.unhandled}"
        log.debug(message)  # the caller prints the report's message: once
        return IngestReport(rid, True, message, rows=counts, db_path=str(path))


def ingest_results(results_dir, db_path=None) -> IngestReport:
    """Ingest one results directory (metrics.json, per_query.jsonl, rankings.jsonl,
    runinfo.json and any extra file a claim kind stores, :data:`warehouse.tables.RESULTS_FILES`).

    Creates or migrates the warehouse as needed.  Raises
    :class:`~warehouse.errors.IngestRefused` (naming file and field; nothing written) for
    malformed input and :class:`~warehouse.errors.WarehouseBusy` when the writer lock
    cannot be had in time.
    """
    return store(load_results(results_dir), db_path)


def _document_tier(claim, source: str, conn: Connection) -> str:
    """The tier the document is stored under: its own (checked by its kind against its
    licences), made as restrictive as every stored run it draws on; a document that states
    none and names no stored run is tier B (doubt fails closed).  A document claiming a tier
    laxer than a run it draws on is refused."""
    claimed = claim.claimed_tier()
    runs = list(claim.referenced_runs())
    found = [row[0] for row in conn.query_all(
        "SELECT tier FROM runs WHERE list_contains(?::VARCHAR[], run_id) ORDER BY run_id",
        [runs])] if runs else []
    if claimed is not None and found:
        floor = most_restrictive_tier(found)
        if not at_least_as_restrictive(claimed, floor):
            refuse(source, "tier", f"tier {claimed!r} is less restrictive than the runs it "
                                   f"draws on (tier {floor}): a document is never more "
                                   "publishable than its runs")
    tiers = ([claimed] if claimed is not None else []) + found
    return most_restrictive_tier(tiers) if tiers else "B"


def ingest_document(path_or_mapping, db_path=None, *, tier_cap: str | None = None,
                    also: Callable[[Connection, bool], None] | None = None) -> IngestReport:
    """Ingest one standalone JSON document carrying a ``"kind"`` field.

    Its claim kind (:data:`warehouse.tables.DOCUMENT_KINDS`) validates it first, then its
    rows are stored inside the same transaction as its ``documents`` row
    (:func:`_document_tier` says under which tier; ``tier_cap`` and ``also`` as in
    :func:`store`).
    """
    doc, source = load_document(path_or_mapping)
    kind = doc.get("kind")
    if not isinstance(kind, str) or not kind:
        refuse(source, "kind", "missing: a document names its kind")
    try:
        cls = tables.kind_for_document(kind)
    except KeyError as exc:
        refuse(source, "kind", exc.args[0])
    try:
        claim = cls.from_dict(doc, source)
    except FormatError as exc:
        raise IngestRefused(str(exc), path=exc.path, line=exc.line, field=exc.field) from None
    doc_id, text = document_identity(claim.to_dict(), source)
    runs = claim.referenced_runs()
    run_id = runs[0] if len(runs) == 1 else None
    corpus = claim.corpus_label()
    path = resolve_path(db_path)
    with ExitStack() as committed, connect(path, read_only=False, check_schema=False) as conn:
        schema.apply_pending(conn)
        if conn.query_one("SELECT 1 FROM documents WHERE document_id = ?", [doc_id]):
            if also is not None:
                with conn.transaction():
                    also(conn, False)
            return IngestReport(doc_id, False, f"{kind} document {doc_id[:12]} is already in "
                                f"{path}: nothing to do", kind=kind, db_path=str(path))
        tier = _document_tier(claim, source, conn)
        if tier_cap is not None:
            tier = most_restrictive_tier([tier, tier_cap])
        stamp = _now()
        with conn.transaction():
            conn.execute(
                "INSERT INTO documents (document_id, kind, run_id, corpus, tier, source, "
                "ingested_at, content) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [doc_id, kind, run_id, corpus, tier, source, stamp, text])
            rows = tables.store(conn, claim, doc_id, stamp)
            if tier_cap is not None:
                for table, columns in type(claim).TABLES.items():
                    if "tier" in {c for c, _ in columns}:
                        conn.execute(f"UPDATE {identifier(table)} SET tier = stricter("
                                     f"{identifier(table)}.tier, ?) WHERE document_id = ?",
                                     [tier_cap, doc_id])
            if also is not None:
                also(conn, True)
            if in_transaction_hook is not None:
                in_transaction_hook(doc_id)
            committed.enter_context(interrupts.deferred(reraise=False))  # as in store()
        message = f"ingested {kind} document {doc_id[:12]} (tier {tier}) into {path}"
        log.debug(message)  # the caller prints the report's message: once
        return IngestReport(doc_id, True, message, kind=kind, rows={"documents": 1, "rows": rows},
                            db_path=str(path))
