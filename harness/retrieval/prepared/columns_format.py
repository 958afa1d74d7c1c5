"""A checked columnar file: named columns of Python values, read back equal, fast.

The prepared-corpus cache stores about 130k chunks per full-size corpus.  As one JSON
document, reading that back cost about 0.5 s of decoding and as much again of rebuilding
per-record values; here every column is one block of bytes and is decoded as a whole:

* ``dict``: few distinct strings or None (file ids, speakers, types): the distinct values
  as JSON and an int32 code per row;
* ``text``: strings (no None): one UTF-8 block and an int64 array of their lengths;
* ``i8``: ints (not bools) within int64: a little-endian int64 array;
* ``f8``: floats or None: a float64 array and a None mask;
* ``json``: anything else, as one JSON list (its type decides nothing: it reads back as
  JSON gives it), decoded only when the column is first asked for.

A column takes the first encoding its values fit, so every value reads back equal and of
the same type (a column of ints is never read back as floats).  The file is a header line
(JSON: ``key``, the columns with their encodings, offsets and lengths, and the sha256 of
everything after the header) followed by the blocks.  Reading checks the key, the digest,
and every column's length and codes before returning anything: a damaged or foreign file
raises ``ValueError`` (the cache treats it as a miss and rebuilds it), never a wrong value.
"""

from __future__ import annotations

import hashlib
import json
from typing import Callable

import numpy as np

FORMAT = "columns/1"
_INT64 = (-(2 ** 63), 2 ** 63 - 1)


def _fits_text(values) -> bool:
    return all(type(v) is str for v in values)


def _fits_dict(values) -> bool:
    if not all(v is None or type(v) is str for v in values):
        return False
    return len(set(values)) <= max(16, len(values) // 4)


def _fits_i8(values) -> bool:
    return all(type(v) is int and _INT64[0] <= v <= _INT64[1] for v in values)


def _fits_f8(values) -> bool:
    return all(v is None or type(v) is float for v in values)


def _dumps(value) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"),
                      allow_nan=True).encode("ascii")


def _encode_column(values: list) -> tuple[str, list[bytes]]:
    if _fits_dict(values):
        distinct = sorted(set(values), key=lambda v: (v is not None, v or ""))
        code = {v: i for i, v in enumerate(distinct)}
        codes = np.fromiter((code[v] for v in values), dtype="<i4", count=len(values))
        return "dict", [_dumps(distinct), codes.tobytes()]
    if _fits_text(values):
        try:
            blob = "".join(values).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: JSON escapes it
            return "json", [_dumps(values)]
        lengths = np.fromiter((len(v) for v in values), dtype="<i8", count=len(values))
        return "text", [blob, lengths.tobytes()]
    if _fits_i8(values):
        return "i8", [np.asarray(values, dtype="<i8").tobytes()]
    if _fits_f8(values):
        mask = np.fromiter((v is None for v in values), dtype=np.uint8, count=len(values))
        data = np.fromiter((0.0 if v is None else v for v in values), dtype="<f8",
                           count=len(values))
        return "f8", [data.tobytes(), mask.tobytes()]
    return "json", [_dumps(values)]


def encode(key: dict, columns: dict[str, list]) -> bytes:
    """The file holding ``columns`` (name -> list of values) under ``key``."""
    blocks: list[bytes] = []
    table = []
    offset = 0
    for name in sorted(columns):
        values = list(columns[name])
        kind, parts = _encode_column(values)
        spans = []
        for part in parts:
            spans.append([offset, len(part)])
            blocks.append(part)
            offset += len(part)
        table.append({"name": name, "kind": kind, "rows": len(values), "blocks": spans})
    body = b"".join(blocks)
    header = {"format": FORMAT, "key": key, "columns": table,
              "sha256": hashlib.sha256(body).hexdigest(), "bytes": len(body)}
    line = json.dumps(header, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return line.encode("utf-8") + b"\n" + body


class Columns:
    """Decoded columns by name; ``json`` columns decode on first access."""

    def __init__(self, decoded: dict[str, list], lazy: dict[str, Callable[[], list]],
                 rows: dict[str, int]):
        self._decoded, self._lazy, self.rows = decoded, lazy, rows

    def __contains__(self, name: str) -> bool:
        return name in self.rows

    def __getitem__(self, name: str) -> list:
        if name not in self._decoded:
            if name not in self._lazy:
                raise KeyError(name)
            values = self._lazy.pop(name)()
            if not isinstance(values, list) or len(values) != self.rows[name]:
                raise ValueError(f"column {name}: not a list of {self.rows[name]} values")
            self._decoded[name] = values
        return self._decoded[name]


def _decode_column(kind: str, rows: int, parts: list[memoryview], name: str):
    def bad(why: str):
        return ValueError(f"column {name}: {why}")

    if kind == "text":
        blob, raw = parts
        lengths = np.frombuffer(raw, dtype="<i8")
        if len(lengths) != rows or (rows and lengths.min() < 0):
            raise bad("lengths do not match its rows")
        text = bytes(blob).decode("utf-8")
        ends = np.cumsum(lengths).tolist()
        if (ends[-1] if ends else 0) != len(text):
            raise bad("lengths do not add up to its text")
        starts = [0] + ends[:-1]
        return [text[a:b] for a, b in zip(starts, ends)]
    if kind == "i8":
        data = np.frombuffer(parts[0], dtype="<i8")
        if len(data) != rows:
            raise bad("holds the wrong number of values")
        return data.tolist()
    if kind == "f8":
        data = np.frombuffer(parts[0], dtype="<f8")
        mask = np.frombuffer(parts[1], dtype=np.uint8)
        if len(data) != rows or len(mask) != rows or (rows and mask.max() > 1):
            raise bad("holds the wrong number of values or a bad None mask")
        values = data.tolist()
        for i in np.flatnonzero(mask).tolist():
            values[i] = None
        return values
    if kind == "dict":
        distinct = json.loads(bytes(parts[0]))
        codes = np.frombuffer(parts[1], dtype="<i4")
        if not isinstance(distinct, list) or len(codes) != rows or \
                (rows and (codes.min() < 0 or codes.max() >= len(distinct))):
            raise bad("codes do not index its values")
        return [distinct[c] for c in codes.tolist()]
    if kind == "json":
        return lambda: json.loads(bytes(parts[0]))
    raise bad(f"unknown encoding {kind!r}")


def decode(data: bytes, key: dict) -> Columns:
    """The columns of a file written by :func:`encode` under ``key`` (``ValueError`` when it
    is damaged, truncated or written under another key)."""
    newline = data.find(b"\n")
    if newline < 0:
        raise ValueError("no header line")
    try:
        header = json.loads(data[:newline])
    except ValueError as exc:
        raise ValueError(f"header is not JSON: {exc}") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file")
    if header.get("key") != key:
        raise ValueError("its key does not match its name")
    body = memoryview(data)[newline + 1:]
    if len(body) != header.get("bytes") or hashlib.sha256(body).hexdigest() != header.get("sha256"):
        raise ValueError("its contents do not match their recorded sha256 (damaged or cut)")
    decoded, lazy, rows = {}, {}, {}
    try:
        for col in header["columns"]:
            name, kind, n = col["name"], col["kind"], col["rows"]
            parts = [body[a:a + size] for a, size in col["blocks"]]
            value = _decode_column(kind, n, parts, name)
            rows[name] = n
            (lazy if callable(value) else decoded)[name] = value
    except (KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ValueError(f"a column is not readable: {exc!r}") from None
    return Columns(decoded, lazy, rows)
