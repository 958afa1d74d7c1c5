"""The DuckDB results warehouse: every result and per-query value, a licence tier on every row.

Public entry points (imported lazily, so ``import warehouse`` opens nothing and loads no
database driver):

* ``ingest_results(results_dir, db_path=None) -> IngestReport`` and
  ``ingest_document(path_or_mapping, db_path=None) -> IngestReport``, and
  ``ingest_judging(directory, db_path=None) -> IngestReport`` (a judging task or labels batch)
* ``connect(path=None, *, read_only)``, ``migrate(path=None)``, ``default_path()``,
  ``change_stamp(path=None)``
* ``warehouse.queries`` (named read-only queries), ``warehouse.exports`` (tables to publish),
  ``warehouse.errors`` (the exceptions every failure is translated into).
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "ingest_results": "warehouse.ingest",
    "ingest_document": "warehouse.ingest",
    "ingest_judging": "warehouse.judging",
    "IngestReport": "warehouse.ingest",
    "connect": "warehouse.db",
    "default_path": "warehouse.db",
    "change_stamp": "warehouse.db",
    "migrate": "warehouse.db",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'warehouse' has no attribute {name!r}")
