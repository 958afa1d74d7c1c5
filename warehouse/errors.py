"""The warehouse's own exceptions, and the one place database errors are translated into them.

Callers catch these, never a driver exception: :func:`translate` is applied by the
connection wrapper in :mod:`warehouse.db` to every statement it runs.
"""

from __future__ import annotations

import re


class WarehouseError(Exception):
    """Base class of every warehouse failure."""


class WarehouseMissing(WarehouseError, FileNotFoundError):
    """A reader asked for a warehouse file that does not exist."""


class WarehouseBusy(WarehouseError):
    """Another process holds the file (a writer, or readers while we want to write)."""


class WarehouseReadOnly(WarehouseError):
    """A write was attempted through a read-only connection."""


class SchemaOutOfDate(WarehouseError):
    """The file's applied migrations differ from the ones this code ships."""


class MigrationEdited(SchemaOutOfDate):
    """A migration that was already applied has been edited since (its checksum differs)."""


class IngestRefused(WarehouseError, ValueError):
    """Malformed or incomplete input: nothing was written.  Names the file and the field."""

    def __init__(self, message: str, *, path=None, line: int | None = None,
                 field: str | None = None):
        super().__init__(message)
        self.path = None if path is None else str(path)
        self.line = line
        self.field = field


class UnknownRun(WarehouseError, ValueError):
    """A run reference (id, id prefix or control name) that names no run, or several."""


class ExportRefused(WarehouseError, ValueError):
    """An export that would break its view's rule (a publishable table with non-A rows)."""


_LOCK_PID = re.compile(r"PID (\d+)")


def is_interrupt(exc: BaseException) -> bool:
    """DuckDB's report of a query cut short by Ctrl-C (a plain ``RuntimeError``)."""
    return isinstance(exc, RuntimeError) and str(exc).strip().lower() == "query interrupted"


def translate(exc: Exception, path) -> WarehouseError:
    """The warehouse exception for a database error raised while working on ``path``."""
    import duckdb

    text = str(exc)
    low = text.lower()
    if isinstance(exc, duckdb.IOException) and "lock" in low:
        match = _LOCK_PID.search(text)
        holder = f"process {match.group(1)}" if match else "another process"
        return WarehouseBusy(f"warehouse busy: {path} is held open by {holder}")
    if isinstance(exc, duckdb.ConnectionException) and "different configuration" in low:
        return WarehouseBusy(
            f"warehouse busy: {path} is already open in this process in another mode "
            "(a reader and a writer cannot share one process at the same moment)")
    if "read-only" in low and isinstance(exc, (duckdb.InvalidInputException,
                                               duckdb.PermissionException)):
        return WarehouseReadOnly(f"{path}: cannot write through a read-only connection ({text})")
    if isinstance(exc, duckdb.IOException) and "does not exist" in low:
        return WarehouseMissing(f"no warehouse at {path}")
    return WarehouseError(f"{path}: database error: {text}")
