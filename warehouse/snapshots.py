"""Audiences as data: one read-only DuckDB snapshot per audience, published atomically.

The team ingester writes its own warehouse (``DIR/warehouse.duckdb``, nobody else opens it)
and after each batch publishes, beside it:

* ``DIR/internal.duckdb``: a copy of that warehouse, every tier;
* ``DIR/publishable.duckdb``: a fresh file with the same schema into which only the rows
  of the publishable views were copied (``<table>_publishable``, the views every export
  and page already reads), so a tier-B row is not filtered out of it: it was never written
  into it.  A table without a publishable rule is left empty (fails closed).

Each is written under a temporary name in ``DIR``, checkpointed, made read-only (0444) and
renamed over the old one, so a reader opens the previous snapshot or the new one, whole;
a reader that has the old file open keeps reading it (the rename does not touch the open
file), and the writer never waits for readers.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
from pathlib import Path

from harness.core.atomic import tidy_dead
from warehouse import schema
from warehouse.db import Connection, connect, identifier

log = logging.getLogger(__name__)

INTERNAL = "internal.duckdb"
PUBLISHABLE = "publishable.duckdb"
AUDIENCES = {"internal": INTERNAL, "publishable": PUBLISHABLE}
_TMP = ".snapshot-tmp-"
#: tables a fresh file fills itself (the migrations' own bookkeeping)
_SCHEMA_TABLES = frozenset({"schema_migrations", "tier_ranks"})
#: tables copied by a rule of their own (no ``<table>_publishable`` view)
_RULES = {
    "run_files": "SELECT {cols} FROM src.run_files "
                 "WHERE run_id IN (SELECT run_id FROM src.publishable_runs)",
}


def snapshot_path(directory, audience: str) -> Path:
    if audience not in AUDIENCES:
        raise ValueError(f"unknown audience {audience!r}; expected one of {sorted(AUDIENCES)}")
    return Path(directory) / AUDIENCES[audience]


def _temporary(directory: Path, name: str) -> Path:
    return directory / f"{_TMP}{os.getpid()}-{secrets.token_hex(4)}-{name}"


def tidy(directory) -> None:
    """Remove temporary snapshot files that a killed publisher left (their pid is gone)."""
    tidy_dead(directory, _TMP)


def _columns(conn: Connection, catalog: str, table: str) -> list[str]:
    return [c for (c,) in conn.query_all(
        "SELECT column_name FROM information_schema.columns WHERE table_catalog = ? "
        "AND table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
        [catalog, table])]


def _relations(conn: Connection, catalog: str, kind: str) -> set[str]:
    return {name for (name,) in conn.query_all(
        "SELECT table_name FROM information_schema.tables WHERE table_catalog = ? "
        "AND table_schema = 'main' AND table_type = ?", [catalog, kind])}


def build_publishable(source: Path, target: Path) -> dict[str, int]:
    """A fresh warehouse at ``target`` holding only ``source``'s publishable rows; returns
    the rows copied per table."""
    import duckdb

    raw = duckdb.connect(str(target))
    counts: dict[str, int] = {}
    try:
        conn = Connection(raw, target, False)
        schema.apply_pending(conn)
        if "'" in str(source):
            raise ValueError(f"{source}: a snapshot path may not contain a quote")
        here = conn.query_one("SELECT current_database()")[0]
        conn.execute(f"ATTACH '{source}' AS src (READ_ONLY)")
        tables = _relations(conn, "src", "BASE TABLE")
        views = _relations(conn, "src", "VIEW")
        mine = _relations(conn, here, "BASE TABLE")
        with conn.transaction():
            for table in sorted(tables - _SCHEMA_TABLES):
                if table not in mine:
                    continue
                cols = ", ".join(identifier(c) for c in _columns(conn, "src", table))
                if f"{table}_publishable" in views:
                    sql = f"SELECT {cols} FROM src.{identifier(table + '_publishable')}"
                elif table in _RULES:
                    sql = _RULES[table].format(cols=cols)
                elif table == "documents":
                    sql = _documents_sql(conn, cols, views)
                else:
                    log.debug("%s: no publishable rule: left empty in %s", table, target)
                    continue
                conn.execute(f"INSERT INTO main.{identifier(table)} ({cols}) {sql}")
                counts[table] = conn.query_one(
                    f"SELECT count(*) FROM main.{identifier(table)}")[0]
        conn.execute("DETACH src")
        conn.execute("CHECKPOINT")
    finally:
        raw.close()
    return counts


def _documents_sql(conn: Connection, cols: str, views: set[str]) -> str:
    """Documents whose rows reached a publishable view (and whose own tier is A)."""
    sources = []
    for view in sorted(views):
        if view.endswith("_publishable") and "document_id" in _columns(conn, "src", view):
            sources.append(f"SELECT document_id FROM src.{identifier(view)}")
    if not sources:
        return f"SELECT {cols} FROM src.documents WHERE false"
    return (f"SELECT {cols} FROM src.documents WHERE tier = 'A' AND document_id IN ("
            + " UNION ".join(sources) + ")")


def _finish(path: Path) -> None:
    os.chmod(path, 0o444)
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def publish(db_path, directory) -> dict[str, int]:
    """Publish ``internal.duckdb`` and ``publishable.duckdb`` from the warehouse ``db_path``
    into ``directory``; returns the publishable rows per table."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    tidy(directory)
    internal = _temporary(directory, INTERNAL)
    public = _temporary(directory, PUBLISHABLE)
    try:
        with connect(db_path, read_only=False, check_schema=False) as conn:
            schema.apply_pending(conn)
            conn.execute("CHECKPOINT")  # the file alone now holds every committed row
            shutil.copyfile(conn.path, internal)
        counts = build_publishable(internal, public)
        _finish(internal)
        _finish(public)
        os.replace(public, directory / PUBLISHABLE)
        os.replace(internal, directory / INTERNAL)
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    finally:
        for leftover in (internal, public):
            leftover.unlink(missing_ok=True)
    return counts
