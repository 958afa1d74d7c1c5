"""Handlers for what the warehouse ingests besides a run's core files, one module per kind.

Two sorts of handler live in this package and are found with ``pkgutil`` (add a module, and
it is picked up; no list to edit):

* a **document kind**: a standalone JSON document with a ``"kind"`` field (certificates,
  agreement results, migration decisions, answer runs).  The module declares::

      KIND = "certificate"
      def validate(doc, source) -> None      # raise ValueError naming source and field
      def ingest(conn, doc) -> None          # called inside the ingest transaction

* a **results-directory extra**: a file beside metrics.json (``intervals.json``,
  ``calibration.jsonl``).  The module declares::

      RESULTS_FILE = "intervals.json"
      def ingest(conn, run_id, content, metrics) -> None   # inside the run's transaction
      def validate(content, source, metrics) -> None       # optional; before any lock

  ``content`` is the parsed JSON for ``.json``, a list of objects for ``.jsonl`` and the
  text otherwise; ``metrics`` is the run's metrics.json.

``conn`` is a :class:`warehouse.db.Connection` (``execute``, ``query_all``, ``insert_frame``);
its tables come from the handler's numbered migration.  A module declares one of the two,
not both (their ``ingest`` signatures differ).  :func:`register` adds a handler that is not a
module of this package (tests, plug-ins).
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from contextlib import contextmanager
from typing import Iterator

log = logging.getLogger(__name__)

#: files of a results directory that the core ingest itself reads
CORE_FILES = frozenset({"metrics.json", "metrics.md", "per_query.jsonl", "rankings.jsonl",
                        "runinfo.json"})

_KINDS: dict[str, object] = {}
_FILES: dict[str, object] = {}
_discovered = False


def _check(handler) -> None:
    name = getattr(handler, "__name__", repr(handler))
    kind = getattr(handler, "KIND", None)
    results_file = getattr(handler, "RESULTS_FILE", None)
    if (kind is None) == (results_file is None):
        raise ValueError(f"handler {name} must declare exactly one of KIND or RESULTS_FILE")
    if not callable(getattr(handler, "ingest", None)):
        raise ValueError(f"handler {name} has no ingest() function")
    if kind is not None:
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"handler {name}: KIND must be a non-empty string")
        if not callable(getattr(handler, "validate", None)):
            raise ValueError(f"handler {name} (kind {kind!r}) has no validate() function")
    else:
        if not isinstance(results_file, str) or not results_file or "/" in results_file:
            raise ValueError(f"handler {name}: RESULTS_FILE must be a plain file name")
        if results_file in CORE_FILES:
            raise ValueError(f"handler {name}: {results_file} is a core file of every run")


def _add(handler) -> None:
    _check(handler)
    kind = getattr(handler, "KIND", None)
    table, key = (_KINDS, kind) if kind is not None else (_FILES, handler.RESULTS_FILE)
    if key in table and table[key] is not handler:
        raise ValueError(f"two handlers for {key!r}: {table[key]!r} and {handler!r}")
    table[key] = handler


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        _add(importlib.import_module(f"{__name__}.{info.name}"))
    _discovered = True


def kinds() -> dict[str, object]:
    """Document handlers by ``KIND``."""
    _discover()
    return dict(_KINDS)


def results_files() -> dict[str, object]:
    """Results-directory extra handlers by ``RESULTS_FILE``."""
    _discover()
    return dict(_FILES)


def handler_for_kind(kind) -> object:
    known = kinds()
    if kind not in known:
        raise KeyError(f"unknown document kind {kind!r}; known kinds: {sorted(known)}")
    return known[kind]


def register(handler) -> object:
    """Add a handler (any object with the module attributes above); returns it."""
    _discover()
    _add(handler)
    return handler


def unregister(handler) -> None:
    for table in (_KINDS, _FILES):
        for key in [k for k, v in table.items() if v is handler]:
            del table[key]


@contextmanager
def registered(handler) -> Iterator[object]:
    """``register`` for the duration of a ``with`` block."""
    register(handler)
    try:
        yield handler
    finally:
        unregister(handler)
