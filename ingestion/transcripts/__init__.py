"""The transcript store: files, turns and rosters of any corpus in a SQL database reached
through SQLAlchemy (SQLite beside the warehouse by default, PostgreSQL by URL).

Aggregation questions ("how many meetings discussed X") are answered from here by exact SQL,
never from retrieval chunks: overlapping chunks would count a long turn's tail twice.

Entry points (imported lazily, so importing this package loads no driver and connects
nothing): :func:`open_store`, :func:`fill`, :func:`default_url`, :class:`TranscriptStore`,
:data:`SCHEMA_VERSION`, :class:`SchemaVersionError`; the tables are in :mod:`.schema`.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "open_store": "ingestion.transcripts.store",
    "fill": "ingestion.transcripts.store",
    "default_url": "ingestion.transcripts.store",
    "TranscriptStore": "ingestion.transcripts.store",
    "FillReport": "ingestion.transcripts.store",
    "SCHEMA_VERSION": "ingestion.transcripts.schema",
    "SchemaVersionError": "ingestion.transcripts.schema",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ingestion.transcripts' has no attribute {name!r}")
