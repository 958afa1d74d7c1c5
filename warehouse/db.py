"""Opening the warehouse: short-lived connections, a writer lock, errors translated once.

DuckDB locks per file and per process: while any process has the file open (even
read-only) no other process can write it, and while a writer has it open nobody else can
read it.  So no connection lives long.  A writer takes :class:`~warehouse.lock.WriterLock`,
opens, does one unit of work and closes; a reader opens read-only for one query and closes,
retrying for a bounded time while a writer is in, then raising :class:`WarehouseBusy`.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
import re
import shlex
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from harness.core import interrupts, settings
from warehouse import schema
from warehouse.errors import WarehouseBusy, WarehouseMissing, is_interrupt, translate
from warehouse.lock import WriterLock, describe_holder

log = logging.getLogger(__name__)

#: how long a reader retries while a writer holds the file
READ_TIMEOUT_SECONDS = 5.0
#: how long a writer waits for the writer lock and for readers to let go
WRITE_TIMEOUT_SECONDS = 120.0

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")
_view_names = itertools.count()


def default_path() -> Path:
    """``$HARNESS_WAREHOUSE`` if set, else ``warehouse.duckdb`` in the working directory."""
    return settings.warehouse_path()


def resolve_path(path=None) -> Path:
    return Path(path) if path is not None else default_path()


def identifier(name: str) -> str:
    """A quoted SQL identifier; refuses anything but lower-case snake_case constants."""
    if not isinstance(name, str) or not _IDENTIFIER.match(name):
        raise ValueError(f"not an allowed SQL identifier: {name!r}")
    return f'"{name}"'


class Connection:
    """A DuckDB connection whose every statement translates driver errors into ours."""

    def __init__(self, raw, path: Path, read_only: bool):
        self.raw = raw
        self.path = path
        self.read_only = read_only

    def _run(self, sql: str, params):
        import duckdb

        try:
            return self.raw.execute(sql, params) if params is not None else self.raw.execute(sql)
        except duckdb.Error as exc:
            raise translate(exc, self.path) from exc
        except RuntimeError as exc:  # how DuckDB reports a Ctrl-C that cut a query short
            if is_interrupt(exc):
                raise KeyboardInterrupt from None
            raise

    def execute(self, sql: str, params=None) -> None:
        self._run(sql, params)

    def query_all(self, sql: str, params=None) -> list[tuple]:
        import duckdb

        try:
            return self._run(sql, params).fetchall()
        except duckdb.Error as exc:
            raise translate(exc, self.path) from exc
        except RuntimeError as exc:
            if is_interrupt(exc):
                raise KeyboardInterrupt from None
            raise

    def query_one(self, sql: str, params=None):
        rows = self.query_all(sql, params)
        return rows[0] if rows else None

    def query_df(self, sql: str, params=None):
        import duckdb

        try:
            return self._run(sql, params).df()
        except duckdb.Error as exc:
            raise translate(exc, self.path) from exc
        except RuntimeError as exc:
            if is_interrupt(exc):
                raise KeyboardInterrupt from None
            raise

    @contextmanager
    def transaction(self) -> Iterator["Connection"]:
        """One explicit transaction: committed when the body ends, rolled back if it raises
        (including KeyboardInterrupt), so its rows are all there or none are."""
        self.execute("BEGIN TRANSACTION")
        try:
            yield self
        except BaseException:
            try:
                self.raw.execute("ROLLBACK")
            except Exception as exc:  # the original error matters more; the file is intact
                log.warning("rollback after a failed transaction on %s: %s", self.path, exc)
            raise
        with interrupts.deferred():  # a COMMIT is never cut in two: Ctrl-C waits for it
            self.execute("COMMIT")

    def insert_frame(self, table: str, frame) -> int:
        """Bulk-insert a pyarrow Table or pandas DataFrame whose column names are ``table``'s
        (register + INSERT ... SELECT, never row by row); returns the row count."""
        columns = list(frame.column_names if hasattr(frame, "column_names") else frame.columns)
        if not columns:
            raise ValueError(f"nothing to insert into {table}: the frame has no columns")
        cols = ", ".join(identifier(c) for c in columns)
        view = f"_insert_src_{next(_view_names)}"
        import duckdb

        try:
            self.raw.register(view, frame)
        except duckdb.Error as exc:
            raise translate(exc, self.path) from exc
        try:
            self.execute(f"INSERT INTO {identifier(table)} ({cols}) SELECT {cols} FROM {view}")
        except BaseException:
            try:  # an interrupted INSERT aborts the transaction: unregistering then fails
                self.raw.unregister(view)
            except Exception as exc:
                log.debug("unregister %s after a failed insert: %s", view, exc)
            raise
        self.raw.unregister(view)
        return len(frame)


def _open(path: Path, read_only: bool, deadline: float):
    """duckdb.connect with a bounded retry while another process holds the file."""
    import duckdb

    delay = 0.01
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.Error as exc:
            err = translate(exc, path)
            if not isinstance(err, WarehouseBusy):
                raise err from exc
            if time.monotonic() >= deadline:
                # A reader is kept out by a writer, whose note names it; a writer (holding
                # the lock itself) is kept out by readers, which DuckDB names by pid.
                holder = describe_holder(path) if read_only else None
                who = (f"being written by {holder}" if holder
                       else str(err).split(f"{path} is ", 1)[-1])
                raise WarehouseBusy(
                    f"warehouse busy: {path} is {who}; gave up after retrying; "
                    "try again in a moment") from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.2)


@contextmanager
def connect(path=None, *, read_only: bool, timeout: float | None = None,
            check_schema: bool = True) -> Iterator[Connection]:
    """A short-lived connection to the warehouse at ``path`` (default :func:`default_path`).

    ``read_only=True``: the file must exist; retries up to ``timeout`` (default
    :data:`READ_TIMEOUT_SECONDS`) while a writer is in, then raises :class:`WarehouseBusy`.
    ``read_only=False``: takes the writer lock first (waiting up to ``timeout``, default
    :data:`WRITE_TIMEOUT_SECONDS`) and creates the file if needed.  With ``check_schema``
    the schema must be up to date (:class:`~warehouse.errors.SchemaOutOfDate` otherwise).
    """

    path = resolve_path(path)
    if read_only:
        if not path.is_file():
            raise WarehouseMissing(
                f"no warehouse at {path}: ingest a results directory "
                f"(`python -m warehouse ingest DIR --db {shlex.quote(str(path))}`) or run "
                f"`python -m warehouse migrate --db {shlex.quote(str(path))}`")
        limit = READ_TIMEOUT_SECONDS if timeout is None else timeout
        raw = _open(path, True, time.monotonic() + limit)
        try:
            conn = Connection(raw, path, True)
            if check_schema:
                schema.check(conn)
            yield conn
        finally:
            raw.close()
        return
    limit = WRITE_TIMEOUT_SECONDS if timeout is None else timeout
    deadline = time.monotonic() + limit
    path.parent.mkdir(parents=True, exist_ok=True)
    with WriterLock(path, limit):
        raw = _open(path, False, deadline)
        try:
            conn = Connection(raw, path, False)
            if check_schema:
                schema.check(conn)
            yield conn
        finally:
            raw.close()


def change_stamp(path=None) -> str:
    """A cheap token that changes whenever the warehouse's contents change.

    Read from the file system without opening the database or taking any lock: the size,
    inode and modification time of the file and its write-ahead log, plus a hash of the
    file's first 12 KiB (DuckDB's headers, rewritten at every checkpoint).  Meant as the
    dashboard's cache key; a torn read only costs a cache miss.
    """
    path = resolve_path(path)
    parts = []
    for name in (path, Path(f"{path}.wal")):
        try:
            st = os.stat(name)
        except FileNotFoundError:
            parts.append("-")
            continue
        parts.append(f"{st.st_ino}:{st.st_size}:{st.st_mtime_ns}")
    try:
        with open(path, "rb") as handle:
            parts.append(hashlib.sha256(handle.read(12288)).hexdigest()[:16])
    except FileNotFoundError:
        parts.append("-")
    return "|".join(parts)


__all__ = ["Connection", "change_stamp", "connect", "default_path", "identifier",
           "resolve_path"]


def migrate(path=None, *, migrations_dir=None, timeout: float | None = None) -> list[schema.Migration]:
    """Create or update the warehouse at ``path``; returns the migrations applied now."""
    with connect(path, read_only=False, check_schema=False, timeout=timeout) as conn:
        return schema.apply_pending(conn, migrations_dir)
