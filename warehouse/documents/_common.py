"""Helpers shared by the statistics and certificate handlers (not a handler: the leading
underscore keeps discovery away).

Validation helpers raise ``ValueError`` naming the source and the field (``rows[3].lower``);
the ingest machinery turns that into :class:`~warehouse.errors.IngestRefused`.  Rows go in
through Arrow with an explicit schema, so a missing value is a NULL, never a NaN.
"""

from __future__ import annotations

import math
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from harness.core.canonical import canonical_json, sha256_text
from harness.core.tiers import TIERS

#: slack for comparing two float sums of the same numbers (documents round to 10 decimals)
TOLERANCE = 1e-8

_RANK = {tier: i for i, tier in enumerate(TIERS)}


def fail(source, where: str | None, message: str):
    field = f"field '{where}': " if where else ""
    raise ValueError(f"{source}: {field}{message}")


def content_id(content) -> str:
    """The id rows carry: sha256 of the canonical content (what ``documents`` would store)."""
    return sha256_text(canonical_json(content))


def canonical(content):
    """``content`` as its canonical JSON reads back (floats rounded as documents store
    them), so table columns hold exactly the numbers of the stored document."""
    import json

    return json.loads(canonical_json(content))


def now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def mapping(value, source, where: str) -> Mapping:
    if not isinstance(value, Mapping):
        fail(source, where, f"must be an object, got {type(value).__name__}")
    return value


def seq(value, source, where: str) -> Sequence:
    if not isinstance(value, list):
        fail(source, where, f"must be a list, got {type(value).__name__}")
    return value


def need(doc: Mapping, names, source, prefix: str = "") -> None:
    for name in names:
        if name not in doc:
            fail(source, f"{prefix}{name}", "missing")


def text(value, source, where: str, *, nullable: bool = False) -> str | None:
    if value is None and nullable:
        return None
    if not isinstance(value, str) or not value:
        fail(source, where, f"must be a non-empty string{' or null' if nullable else ''}, "
                            f"got {value!r}")
    return value


def number(value, source, where: str, *, nullable: bool = False, lo: float = -math.inf,
           hi: float = math.inf) -> float | None:
    if value is None and nullable:
        return None
    if (isinstance(value, bool) or not isinstance(value, (int, float))
            or not math.isfinite(value) or not lo <= value <= hi):
        fail(source, where, f"must be a finite number in [{lo:g}, {hi:g}]"
                            f"{' or null' if nullable else ''}, got {value!r}")
    return float(value)


def integer(value, source, where: str, *, nullable: bool = False, lo: int = 0) -> int | None:
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        fail(source, where, f"must be an integer >= {lo}{' or null' if nullable else ''}, "
                            f"got {value!r}")
    return value


def flag(value, source, where: str, *, nullable: bool = False) -> bool | None:
    if value is None and nullable:
        return None
    if not isinstance(value, bool):
        fail(source, where, f"must be true or false, got {value!r}")
    return value


def tier(value, source, where: str = "tier") -> str:
    if value not in TIERS:
        fail(source, where, f"unknown tier {value!r}; expected one of {sorted(TIERS)}")
    return value


def choice(value, allowed: Sequence[str], source, where: str) -> str:
    if value not in allowed:
        fail(source, where, f"{value!r} is not one of {sorted(allowed)}")
    return value


def at_least_as_restrictive(row_tier: str, other: str) -> bool:
    """True when ``row_tier`` is ``other`` or more restrictive (A < B < C)."""
    return _RANK[row_tier] >= _RANK[other]


def pooled_corpus(names) -> str:
    return "+".join(sorted(names))


def run_tiers(metrics: Mapping) -> dict[tuple[str, str], Mapping]:
    """metrics.json rows by ``(corpus, query_class)``."""
    return {(r["corpus"], r["query_class"]): r for r in metrics["rows"]}


def already_stored(conn, table: str, document_id: str) -> bool:
    """Has a document with this id already put rows into ``table``?  (``table`` is one of
    this package's constants, never user input.)"""
    from warehouse.db import identifier

    return conn.query_one(f"SELECT 1 FROM {identifier(table)} WHERE document_id = ? LIMIT 1",
                          [document_id]) is not None


def insert(conn, table: str, schema, rows: list[dict]) -> int:
    """Insert ``rows`` (dicts keyed by the schema's names) as one Arrow table."""
    import pyarrow as pa

    if not rows:
        return 0
    return conn.insert_frame(table, pa.Table.from_pylist(rows, schema=schema))


def arrow_schema(columns: Sequence[tuple[str, str]]):
    """An Arrow schema from ``(name, type)`` with type one of string, double, int64, int32,
    bool, timestamp, string_list, double_list, bool_list."""
    import pyarrow as pa

    types: dict[str, Any] = {"string": pa.string(), "double": pa.float64(), "int64": pa.int64(),
                             "int32": pa.int32(), "bool": pa.bool_(),
                             "timestamp": pa.timestamp("us"), "string_list": pa.list_(pa.string()),
                             "double_list": pa.list_(pa.float64()),
                             "bool_list": pa.list_(pa.bool_())}
    return pa.schema([(name, types[kind]) for name, kind in columns])
