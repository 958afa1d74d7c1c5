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

How it is fast without changing a byte: plain values (dicts with string keys, lists,
tuples, strings, ints, floats, booleans, None) have their floats rounded and go to the
standard library's C JSON encoder; anything else (numpy scalars, subclasses, bad keys,
non-finite numbers) takes the general encoder :func:`_encode`, which defines the bytes
and every error.  :func:`canonical_lines` writes JSONL column by column (one float format
over a whole column), falling back to :func:`canonical_line` row by row on anything
unusual, so an error is the one the first bad row raises.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from itertools import chain, repeat
from operator import itemgetter
from typing import Any, Callable, Iterable, Iterator, Sequence, overload

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
    """The general encoder: every value the format accepts, and every refusal."""
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


# --------------------------------------------------------------------------- fast path


class _General(Exception):
    """A value only :func:`_encode` handles (or refuses)."""


#: types the C encoder writes exactly as :func:`_encode` does
_AS_IS = frozenset({str, int, bool, type(None)})
_encode_str = json.encoder.encode_basestring  # json.dumps(s, ensure_ascii=False), in C
_COMPACT = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                            check_circular=False, allow_nan=False).encode
_INDENTED = json.JSONEncoder(ensure_ascii=False, sort_keys=True, indent=2,
                             separators=(",", ": "), check_circular=False,
                             allow_nan=False).encode


def _rounded(value: float) -> float:
    """The float whose ``repr`` is :func:`canonical_float` of ``value``."""
    rounded = round(value, FLOAT_DECIMALS) + 0.0  # + 0.0: never -0.0
    if not math.isfinite(rounded):
        raise _General
    return rounded


def _prepared(value: Any) -> Any:
    """``value`` with every float replaced by its rounded value, ready for the C encoder;
    :class:`_General` for anything else."""
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is float:
        return _rounded(value)
    if kind is dict:
        if not value:
            return value
        if set(map(type, value)) != {str}:
            raise _General
        if set(map(type, value.values())) <= _AS_IS:
            return value
        return {k: _prepared(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        kinds = set(map(type, value))
        if kinds <= _AS_IS:
            return value
        if kinds == {float}:
            return list(map(_rounded, value))
        return list(map(_prepared, value))
    if kind is Unrounded:
        if not math.isfinite(value):
            raise _General
        return float(value) + 0.0
    raise _General


def canonical_json(value: Any) -> str:
    """Indented canonical JSON text ending in a newline."""
    try:
        prepared = _prepared(value)
    except _General:
        return _encode(value, 2, 0) + "\n"
    return _INDENTED(prepared) + "\n"


def canonical_line(value: Any) -> str:
    """Compact canonical JSON on one line (for JSONL files), without the newline."""
    try:
        prepared = _prepared(value)
    except _General:
        return _encode(value, None, 0)
    return _COMPACT(prepared)


# --------------------------------------------------------------------------- JSONL columns

_FIXED_LINE = f"%.{FLOAT_DECIMALS}f\n"
_ZERO_RUNS = ("00000000\n", "0000\n", "00\n", "0\n")
_NEGATIVE_ZERO = re.compile(r"(?<=\n)-(?=0\.0\n)")
#: a fixed-point text whose value is 0 or has 1e-4 <= |v| < 1e5: at most 15 significant
#: digits, so it is also the shortest text that reads back as the rounded float, which is
#: what ``repr`` writes in that range
_SHORT = re.compile(r"-?(?:[1-9][0-9]{0,4}\.[0-9]+|0\.[0-9]{0,3}[1-9][0-9]*|0\.0)")


def _float_texts(values: Sequence[float]) -> list[str]:
    """:func:`canonical_float` of every (exact ``float``) value, a column at a time.

    ``"%.10f"`` rounds exactly as ``round(v, 10)`` does (both are correctly rounded), and
    without its trailing zeros it is ``repr`` of the rounded value wherever :data:`_SHORT`
    holds.  A column of finite values with 1e-4 <= |v| < 99999 and a nonzero fraction
    (most scores) loses its zeros text by text; any other column takes
    :func:`_stripped_texts`.
    """
    body = (_FIXED_LINE * len(values)) % tuple(values)
    if ("0.0000" in body or ".0000000000\n" in body or "n" in body  # tiny, zero, whole, inf, nan
            or not (len(body) == 13 * len(values)  # each "d.dddddddddd\n": 0 <= v < 10
                    or max(values) < 99999.0 and min(values) > -99999.0)):
        return _stripped_texts("\n" + body, values)
    texts = list(map(str.rstrip, body.split("\n"), repeat("0")))
    texts.pop()  # the empty text after the last newline
    return texts


def _stripped_texts(text: str, values: Sequence[float]) -> list[str]:
    """The texts of :func:`_float_texts` from ``text`` ("\n" then each value's
    ``"%.10f\n"``): trailing zeros taken off the whole text, then each text that is not
    :data:`_SHORT` (tiny, large or not finite) replaced by :func:`canonical_float`."""
    for zeros in _ZERO_RUNS:  # 8 + 4 + 2 + 1: up to all ten trailing zeros of a line
        text = text.replace(zeros, "\n")
    text = text.replace(".\n", ".0\n")
    if "-0.0\n" in text:
        text = _NEGATIVE_ZERO.sub("", text)
    texts = text[1:-1].split("\n")
    if "0.0000" not in text and math.isfinite(sum(values)) and max(map(abs, values)) < 99999.0:
        return texts
    return [t if _SHORT.fullmatch(t) else canonical_float(v) for t, v in zip(texts, values)]


def _cached(values: list[Any], encode: Callable[[list[Any]], list[str]]) -> list[str]:
    """``encode`` of each value, computed once per distinct value when values repeat
    (judged on a sample spread over the column first: a set of every value costs more
    than it saves on a column of distinct floats)."""
    sample = values[::max(1, len(values) // 4096)]
    if len(set(sample)) * 4 > len(sample):
        return encode(values)
    distinct = set(values)
    if len(distinct) * 4 > len(values):
        return encode(values)
    unique = list(distinct)
    table = dict(zip(unique, encode(unique)))
    return list(map(table.__getitem__, values))


def _ints(values: list[int]) -> list[str]:
    return list(map(int.__repr__, values))


def _strings(values: list[str]) -> list[str]:
    joined = "".join(values)
    if values and joined.isprintable() and '"' not in joined and "\\" not in joined:
        # nothing to escape (no control character, quote or backslash): quoted as they are
        return ('"' + '"\n"'.join(values) + '"').split("\n")
    return list(map(_encode_str, values))


_SCALAR_TEXT = {True: "true", False: "false", None: "null"}


def _scalars(values: list[Any]) -> list[str]:  # str, bool and None: no two of these kinds compare equal
    return [_SCALAR_TEXT[v] if v is None or v is True or v is False else _encode_str(v)
            for v in values]


def _lists(values: list[list[Any]]) -> list[str] | None:
    """The texts of a column of lists that all hold exact floats, or all booleans (a
    certificate's calibration rows: 50 scores and 50 flags a query), every element of the
    column formatted in one pass; None for any other column."""
    flat = list(chain.from_iterable(values))
    kinds = set(map(type, flat))
    if kinds == {float}:
        texts = _float_texts(flat)
    elif kinds == {bool}:
        texts = list(map(_SCALAR_TEXT.__getitem__, flat))
    elif not kinds:
        return ["[]"] * len(values)
    else:
        return None
    out: list[str] = []
    start = 0
    for n in map(len, values):
        out.append("[" + ",".join(texts[start:start + n]) + "]")
        start += n
    return out


def _column(values: list[Any]) -> list[str]:
    """The canonical text of each value of one column."""
    kinds = set(map(type, values))
    if kinds == {float}:
        return _cached(values, _float_texts)
    if kinds == {str}:
        return _cached(values, _strings)
    if kinds == {int}:
        return _cached(values, _ints)
    if kinds <= {str, bool, type(None)}:
        return _cached(values, _scalars)
    if kinds == {list}:
        texts = _lists(values)
        if texts is not None:
            return texts
    return list(map(canonical_line, values))


class Grouped(list[Any]):
    """A column given one value per group of rows (:class:`Columns` ``groups``)."""

    __slots__ = ()


class _Ranks:
    __slots__ = ()

    def __repr__(self) -> str:
        return "RANKS"


#: a column that numbers the rows of each group 1, 2, ... (:class:`Columns` ``groups``)
RANKS = _Ranks()


class Columns(Sequence[dict[str, Any]]):
    """Rows that all hold the same keys, stored a column at a time.

    A sequence of dicts to whoever reads it (each row is built when asked for), and the
    form :func:`canonical_lines` writes without taking rows apart again: large claim files
    (a results directory's rankings, its qrels) are built this way.

    ``groups`` (the sizes of consecutive groups of rows, such as one query's ranking) lets a
    column be given per group: a :class:`Grouped` list holds one value per group, and
    :data:`RANKS` numbers each group's rows from 1.  Such a column is written once per group,
    not once per row (the same bytes as its expanded form)."""

    __slots__ = ("names", "_columns", "_given", "_rows", "groups")

    def __init__(self, columns: dict[str, Any], groups: Sequence[int] | None = None) -> None:
        self.groups: list[int] | None = None if groups is None else list(groups)
        rows = None if groups is None else sum(groups)
        lengths = set()
        for name, values in columns.items():
            if isinstance(values, Grouped) or values is RANKS:
                if self.groups is None:
                    raise ValueError(f"column {name!r} is given per group, but no groups are")
                if isinstance(values, Grouped) and len(values) != len(self.groups):
                    raise ValueError(f"column {name!r}: {len(values)} values for "
                                     f"{len(self.groups)} groups")
            else:
                lengths.add(len(values))
        if rows is not None:
            lengths.add(rows)
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self.names = tuple(columns)
        self._given = tuple(columns.values())
        self._columns: tuple[list[Any], ...] | None = None
        self._rows = lengths.pop() if lengths else 0

    @property
    def columns(self) -> tuple[list[Any], ...]:
        """Every column row by row (a per-group column expanded, once, when first asked)."""
        if self._columns is None:
            self._columns = tuple(map(self._expanded, self._given))
        return self._columns

    def _expanded(self, values: Any) -> list[Any]:
        sizes = self.groups or []
        if values is RANKS:
            return list(chain.from_iterable(map(range, repeat(1), [n + 1 for n in sizes])))
        if isinstance(values, Grouped):
            return list(chain.from_iterable(map(repeat, values, sizes)))
        return list(values) if not isinstance(values, list) else values

    def __len__(self) -> int:
        return self._rows if self.names else 0

    @overload
    def __getitem__(self, index: int) -> dict[str, Any]:
        ...

    @overload
    def __getitem__(self, index: slice) -> list[dict[str, Any]]:
        ...

    def __getitem__(self, index: int | slice) -> dict[str, Any] | list[dict[str, Any]]:
        if isinstance(index, slice):
            return [dict(zip(self.names, row)) for row in zip(*(c[index] for c in self.columns))]
        return {name: column[index] for name, column in zip(self.names, self.columns)}

    def __iter__(self) -> Iterator[dict[str, Any]]:
        names = self.names
        return (dict(zip(names, row)) for row in zip(*self.columns))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Columns):
            other = list(other)
        return isinstance(other, (list, tuple)) and list(self) == list(other)

    # rows compare by value, so no hash (as a list); typeshed types __hash__ as a method
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Columns({len(self)} rows: {', '.join(self.names)})"

    def parts(self, rows: int) -> Iterator[Columns]:
        """These rows as consecutive Columns of about ``rows`` rows each (whole groups)."""
        if self.groups is None:
            for i in range(0, len(self), rows):
                yield Columns({n: c[i:i + rows] for n, c in zip(self.names, self.columns)})
            return
        first = start = size = 0
        for g, n in enumerate(self.groups):
            size += n
            if size >= rows or g == len(self.groups) - 1:
                yield Columns({name: values if values is RANKS
                               else (Grouped(values[first:g + 1]) if isinstance(values, Grouped)
                                     else values[start:start + size])
                               for name, values in zip(self.names, self._given)},
                              self.groups[first:g + 1])
                first, start, size = g + 1, start + size, 0


def _constant(values: list[Any]) -> bool:
    """Whether every value is the first, as a string, None or a boolean (of one type: for
    ``==``, ``True`` is ``1``): the column's text is then the first value's."""
    first = values[0]
    return (type(first) in (str, bool, type(None)) and values.count(first) == len(values)
            and set(map(type, values)) == {type(first)})


def _interleaved(names: Sequence[str], columns: Sequence[list[Any]]) -> str:
    """JSONL text of rows given as (non-empty) columns under sorted string ``names``."""
    # each key, then its column's texts; a column of one text joins the keys around it,
    # so each row is assembled from as few pieces as possible
    pieces: list[str | list[str]] = []  # a str (the same in every row) or a list (one text per row)
    for i, (name, values) in enumerate(zip(names, columns)):
        pieces.append(("{" if i == 0 else ",") + _encode_str(name) + ":")
        if _constant(values):
            pieces.append(_column(values[:1])[0])
            continue
        texts = _column(values)
        pieces.append(texts[0] if texts.count(texts[0]) == len(texts) else texts)
    pieces.append("}\n")
    return _rows_text(_merged(pieces), len(columns[0]))


def _columnar(rows: list[Any]) -> str:
    """JSONL text of dicts that all hold the same string keys; :class:`_General` (or a
    KeyError) for anything else."""
    if set(map(type, rows)) != {dict}:
        raise _General
    names = sorted(rows[0])
    if set(map(len, rows)) != {len(names)} or set(map(type, names)) - {str}:
        raise _General
    if not names:
        return "{}\n" * len(rows)
    return _interleaved(names, [list(map(itemgetter(name), rows)) for name in names])


def _merged(pieces: Iterable[str | list[str]]) -> list[str | list[str]]:
    """``pieces`` with each run of consecutive strings joined into one."""
    merged: list[str | list[str]] = []
    for piece in pieces:
        last = merged[-1] if merged else None
        if isinstance(piece, str) and isinstance(last, str):
            merged[-1] = last + piece
        else:
            merged.append(piece)
    return merged


def _rows_text(merged: list[str | list[str]], n: int) -> str:
    """The ``n`` rows assembled from pieces that are one text for every row or one per row."""
    if len(merged) == 1 and isinstance(merged[0], str):  # (one piece is a str: "{...}\n")
        return merged[0] * n
    return "".join(chain.from_iterable(zip(*(
        repeat(piece) if type(piece) is str else piece for piece in merged))))


def _by_group(names: Sequence[str], given: Sequence[Any], groups: list[int]) -> str:
    """JSONL text of rows whose columns are given per row, per group (:class:`Grouped`) or
    as :data:`RANKS`: each per-group value formatted once, with the keys beside it."""
    # pieces: a str (the same in every row), ("group", one text per group), ("rank", the
    # text of rank 1, 2, ...) or ("row", one text per row); keys and per-group texts that
    # meet are joined per group first, so each row is assembled from few pieces
    pieces: list[Any] = []
    for i, (name, values) in enumerate(zip(names, given)):
        key = ("{" if i == 0 else ",") + _encode_str(name) + ":"
        if values is RANKS:
            column: tuple[str, list[str]] = ("rank", _ints(list(range(1, max(groups) + 1))))
        elif isinstance(values, Grouped):
            column = ("group", _column(list(values)))
        else:
            column = ("row", _column(values))
        pieces += [key, column]
    pieces.append("}\n")
    merged: list[Any] = []
    for piece in pieces:
        last = merged[-1] if merged else None
        if isinstance(piece, str) and isinstance(last, str):
            merged[-1] = last + piece
        elif isinstance(piece, str) and isinstance(last, tuple) and last[0] in ("group", "rank"):
            merged[-1] = (last[0], [text + piece for text in last[1]])  # the key after it
        elif isinstance(piece, tuple) and piece[0] == "group" and isinstance(last, str):
            merged[-1] = ("group", [last + text for text in piece[1]])  # the key before it
        else:
            merged.append(piece)
    per_row: list[Any] = []
    for piece in merged:
        if isinstance(piece, str) or piece[0] == "row":
            per_row.append(piece if isinstance(piece, str) else piece[1])
        elif piece[0] == "group":
            texts = piece[1]
            per_row.append(texts[0] if texts.count(texts[0]) == len(texts) else
                           list(chain.from_iterable(map(repeat, texts, groups))))
        else:  # ranks: 1 .. n of each group
            per_row.append(list(chain.from_iterable(map(piece[1].__getitem__,
                                                        map(slice, repeat(0), groups)))))
    return _rows_text(_merged(per_row), sum(groups))


def _from_columns(rows: Columns) -> str:
    if set(map(type, rows.names)) - {str}:
        raise _General
    order = sorted(range(len(rows.names)), key=rows.names.__getitem__)
    names = [rows.names[i] for i in order]
    if rows.groups is not None and all(rows.groups):
        return _by_group(names, [rows._given[i] for i in order], rows.groups)
    return _interleaved(names, [rows.columns[i] for i in order])


def canonical_lines(rows: Iterable[Any]) -> str:
    """Canonical JSONL: ``canonical_line(row) + "\\n"`` for every row, joined."""
    if isinstance(rows, Columns):
        if not len(rows):
            return ""
        try:
            return _from_columns(rows)
        except Exception:  # noqa: BLE001 - row by row below raises the first bad row's error
            return "".join([canonical_line(row) + "\n" for row in rows])
    rows = rows if isinstance(rows, list) else list(rows)
    if not rows:
        return ""
    try:
        return _columnar(rows)
    except Exception:  # noqa: BLE001 - row by row below raises the first bad row's error
        return "".join([canonical_line(row) + "\n" for row in rows])


class Parts(tuple[str, ...]):
    """A text held as parts that join to it: a large JSONL file (a million queries' per-query
    values) is never one string, nor one bytes object, in memory."""

    __slots__ = ()


#: rows per part of :func:`canonical_parts`, and characters per slice of :func:`text_slices`
PART_ROWS = 1 << 15
SLICE_CHARS = 1 << 20


def canonical_parts(rows: Sequence[Any]) -> Parts:
    """:func:`canonical_lines` of ``rows`` as :class:`Parts` of :data:`PART_ROWS` rows each
    (the same bytes when joined, and the same error for a bad row)."""
    if isinstance(rows, Columns):
        return Parts(map(canonical_lines, rows.parts(PART_ROWS)))
    rows = rows if isinstance(rows, list) else list(rows)
    return Parts(canonical_lines(rows[i:i + PART_ROWS]) for i in range(0, len(rows), PART_ROWS))


def text_slices(text: str | Parts) -> Iterator[str]:
    """``text`` as slices of at most :data:`SLICE_CHARS` characters, in order: what is
    hashed or written a slice at a time, so no full-size encoded copy is ever made."""
    for part in text if isinstance(text, Parts) else (text,):
        if len(part) <= SLICE_CHARS:
            yield part
        else:
            yield from (part[i:i + SLICE_CHARS] for i in range(0, len(part), SLICE_CHARS))


def joined(text: str | Parts) -> str:
    """``text`` as one string."""
    return "".join(text) if isinstance(text, Parts) else text


def sha256_text(text: str | Parts) -> str:
    """sha256 of ``text``'s UTF-8 bytes, encoded a slice at a time."""
    digest = hashlib.sha256()
    for piece in text_slices(text):
        digest.update(piece.encode("utf-8"))
    return digest.hexdigest()


def sha256_file(path: str | os.PathLike[str], chunk_size: int = 1 << 20) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(chunk_size), b""):
            digest.update(block)
    return digest.hexdigest()
