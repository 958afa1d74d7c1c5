"""The canonical JSON writer as it was before the fast path: the oracle that the fast
writer must match byte for byte (and error for error).  Frozen here on purpose; do not
"fix" it to follow the product."""

from __future__ import annotations

import json
import math
from typing import Any

from harness.core.canonical import Unrounded

FLOAT_DECIMALS = 10


def canonical_float(value: float) -> str:
    """The one textual form of a float in every results file."""
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {value!r} cannot be written to a results file")
    rounded = round(float(value), FLOAT_DECIMALS)
    if rounded == 0.0:
        rounded = 0.0
    return repr(rounded)


def unrounded_float(value: float) -> str:
    """The text of an :class:`Unrounded` float: every digit it needs to read back exactly."""
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {value!r} cannot be written to a results file")
    return repr(float(value) + 0.0)  # + 0.0: never "-0.0"


def _encode(value: Any, indent: int | None, level: int) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Unrounded):
        return unrounded_float(value)
    if isinstance(value, float):
        return canonical_float(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if hasattr(value, "item") and callable(value.item):  # numpy scalar
        return _encode(value.item(), indent, level)
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError(f"canonical JSON keys must be strings, got {key!r}")
        items = sorted(value.items())
        if not items:
            return "{}"
        if indent is None:
            return "{" + ",".join(f"{json.dumps(k, ensure_ascii=False)}:{_encode(v, None, 0)}"
                                  for k, v in items) + "}"
        pad = " " * (indent * (level + 1))
        body = ",\n".join(f"{pad}{json.dumps(k, ensure_ascii=False)}: {_encode(v, indent, level + 1)}"
                          for k, v in items)
        return "{\n" + body + "\n" + " " * (indent * level) + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        if indent is None:
            return "[" + ",".join(_encode(v, None, 0) for v in value) + "]"
        pad = " " * (indent * (level + 1))
        body = ",\n".join(pad + _encode(v, indent, level + 1) for v in value)
        return "[\n" + body + "\n" + " " * (indent * level) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to canonical JSON: {value!r}")


def canonical_json(value: Any) -> str:
    """Indented canonical JSON text ending in a newline."""
    return _encode(value, 2, 0) + "\n"


def canonical_line(value: Any) -> str:
    """Compact canonical JSON on one line (for JSONL files), without the newline."""
    return _encode(value, None, 0)


def reference_lines(rows) -> str:
    return "".join(canonical_line(r) + "\n" for r in rows)
