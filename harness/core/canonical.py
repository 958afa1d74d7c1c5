"""Canonical JSON: the byte form of every claim the product writes.

Sorted keys, two-space indentation, UTF-8, and one float format: rounded to
:data:`FLOAT_DECIMALS` decimals, then the shortest text that reads back as that value
(``-0.0`` becomes ``0.0``).  NaN and infinities are refused, because they are not JSON
and never a measurement.  Two runs on unchanged inputs therefore produce identical bytes
whatever ``PYTHONHASHSEED`` is, and the sha256 of those bytes names the run.

The one exception is opt-in: a :class:`Unrounded` float (an exact quantity too small for
the fixed decimals, such as a p floor ``2^(1-n)``) is written as the shortest text that
reads back as the same float, so ``2^-54`` does not become ``0.0``.  Ordinary floats keep
the rounding, which also absorbs float noise such as ``0.1 + 0.2 - 0.3``.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

FLOAT_DECIMALS = 10


def canonical_float(value: float) -> str:
    """The one textual form of a float in every results file."""
    if not math.isfinite(value):
        raise ValueError(f"non-finite number {value!r} cannot be written to a results file")
    rounded = round(float(value), FLOAT_DECIMALS)
    if rounded == 0.0:
        rounded = 0.0
    return repr(rounded)


class Unrounded(float):
    """A float written in full (``repr``: shortest round-trip text), not to
    :data:`FLOAT_DECIMALS` decimals."""

    __slots__ = ()


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


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_file(path, chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk_size), b""):
            digest.update(block)
    return digest.hexdigest()
