"""What every reader shares: the error, the qrels result, reading a file (whole, in
blocks of lines, line by line), parsing a label or a score, and assembling judgements."""

from __future__ import annotations

import gc
import math
import os
import re
from contextlib import contextmanager
from io import BufferedReader
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import ne
from pathlib import Path
from typing import BinaryIO, Callable, Iterator, Sequence, SupportsFloat, cast

from harness.core.records import Qrel

#: a path as the readers take it
FilePath = str | os.PathLike[str]
#: ``judgements[query_id][doc_id] = relevance``
Judgements = dict[str, dict[str, int]]

#: the whitespace that separates the fields of a TREC line (C's ``isspace``, as trec_eval
#: splits): any other space (U+00A0, U+2003, U+0085, \x1c-\x1f ...) is part of an id
ASCII_SPACE = " \t\n\r\x0b\x0c"
#: what ``str.split()`` splits on besides :data:`ASCII_SPACE`
_OTHER_SPACE = re.compile("[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
_ASCII_RUN = re.compile("[ \t\n\r\x0b\x0c]+")

#: the relevance labels every reader accepts (a signed 32-bit integer)
RELEVANCE_MIN, RELEVANCE_MAX = -2 ** 31, 2 ** 31 - 1
#: the largest magnitude of a score written as an integer (every integer up to it is a double)
EXACT_INTEGER = 2 ** 53
#: digits a rank field may hold
RANK_DIGITS = 18


class FormatError(ValueError):
    """Bad input, located: ``file:line: field 'x': what is wrong``."""

    def __init__(self, path: FilePath, line: int | None, field: str | None, message: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.message = message
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{message}")


@dataclass(frozen=True)
class QrelsFile:
    """Judgements read from one file: ``judgements[query_id][doc_id] = relevance``."""

    path: str
    judgements: Judgements
    #: judgements with a negative label (judged non-relevant)
    negative_labels: int

    @property
    def qrels(self) -> list[Qrel]:
        return [
            Qrel(q, d, r)
            for q in sorted(self.judgements)
            for d, r in sorted(self.judgements[q].items())
        ]


def _open_bytes(path: FilePath) -> BufferedReader:
    """``path`` opened for reading bytes; a missing or unreadable file is a FormatError."""
    path = Path(path)
    if not path.is_file():
        raise FormatError(path, None, None, "no such file")
    try:
        return path.open("rb")
    except OSError as exc:
        raise FormatError(path, None, None, f"cannot read: {exc.strerror}") from None


def read_lines(path: FilePath) -> Iterator[tuple[int, str]]:
    """Non-blank lines with 1-based numbers; refuses a file with none, or bytes that are
    not UTF-8 (naming the line)."""
    path = Path(path)
    seen = False
    with _open_bytes(path) as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise FormatError(path, number, None, f"not UTF-8 text ({exc.reason})") from None
            if number == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark is not data
            if not line.strip(ASCII_SPACE):
                continue
            seen = True
            yield number, line
    if not seen:
        raise FormatError(path, None, None, "empty file: no records")


@contextmanager
def gc_paused() -> Iterator[None]:
    """Build many acyclic containers without the cyclic garbage collector running.

    On the way out every tracked object is moved to the oldest generation (``gc.freeze``
    then ``gc.unfreeze``, both constant-time) unless something else froze objects: else
    the first allocation after re-enabling would scan every container built meanwhile, at
    a cost close to that of building them, to free nothing."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():
            gc.freeze()
            gc.unfreeze()
        gc.enable()


def _whole_text(path: FilePath) -> str | None:
    """The file as text without its byte-order mark, or None when it is not UTF-8 (the
    line-by-line reader then names the line)."""
    path = Path(path)
    if not path.is_file():
        raise FormatError(path, None, None, "no such file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise FormatError(path, None, None, f"cannot read: {exc.strerror}") from None
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None


#: bytes read (and split into fields) at a time by the run readers: the short-lived
#: fields of one block are freed before the next is split, which reuses their memory
_TEXT_BLOCK = 1 << 18


def _text_blocks(path: FilePath) -> Iterator[str | None]:
    """The file as text in blocks of whole lines (about :data:`_TEXT_BLOCK` bytes each),
    without its byte-order mark; a None ends the blocks where one is not UTF-8 (the
    line-by-line reader then names the line)."""
    path = Path(path)
    with _open_bytes(path) as handle:
        first = True
        while data := _read_lines(handle, path):
            if first:
                data, first = data.removeprefix(b"\xef\xbb\xbf"), False
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                yield None
                return
            yield text


def _read_lines(handle: BinaryIO, path: FilePath) -> bytes:
    """About :data:`_TEXT_BLOCK` bytes of ``handle``, to the end of a line."""
    try:
        data = handle.read(_TEXT_BLOCK)
        return data if data.endswith(b"\n") or not data else data + handle.readline()
    except OSError as exc:
        raise FormatError(path, None, None, f"cannot read: {exc.strerror}") from None


_INTEGER = re.compile(r"[+-]?[0-9]+")


def _short(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a number of thousands of digits is
    not echoed whole)."""
    try:
        text = repr(value)
    except ValueError:  # an int too long to print
        text = f"<{type(value).__name__} of thousands of digits>"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _bounded_int(text: str, digits: int) -> int | None:
    """``int(text)`` of integer text (:data:`_INTEGER`), or None past ``digits`` digits
    (leading zeros aside): no conversion of thousands of digits."""
    sign = -1 if text.startswith("-") else 1
    magnitude = text.lstrip("+-").lstrip("0")
    return None if len(magnitude) > digits else sign * int(magnitude or "0")


def _out_of_range(path: FilePath, line: int | None, field: str, shown: str) -> FormatError:
    return FormatError(path, line, field, f"relevance {shown} is outside the supported range "
                                          f"{RELEVANCE_MIN} .. {RELEVANCE_MAX}")


def _in_range(value: int, path: FilePath, line: int | None, field: str) -> int:
    if not RELEVANCE_MIN <= value <= RELEVANCE_MAX:
        raise _out_of_range(path, line, field, _short(value))
    return value


def parse_relevance(text: object, path: FilePath, line: int | None,
                    field: str = "relevance") -> int:
    """An integer relevance label in :data:`RELEVANCE_MIN` .. :data:`RELEVANCE_MAX`;
    ``1.0``, ``1_0`` or ``x`` is refused, never rounded."""
    if not isinstance(text, str) or not _INTEGER.fullmatch(text):
        raise FormatError(path, line, field, f"relevance must be an integer, got {text!r}")
    value = _bounded_int(text, 10)
    if value is None:
        raise _out_of_range(path, line, field, _short(text))
    return _in_range(value, path, line, field)


def _inexact(path: FilePath, line: int | None, field: str, shown: str) -> FormatError:
    return FormatError(path, line, field,
                       f"integer score {shown} is beyond +-2^53: no double holds it exactly, "
                       "so distinct scores would tie (write it as a decimal)")


def parse_score(text: object, path: FilePath, line: int | None, field: str = "score") -> float:
    """A finite float score; NaN, infinities, booleans and integers beyond +-2^53 are
    refused."""
    if isinstance(text, bool) or (isinstance(text, str) and "_" in text):
        raise FormatError(path, line, field, f"score must be a number, got {text!r}")
    if isinstance(text, int):
        if not -EXACT_INTEGER <= text <= EXACT_INTEGER:
            raise _inexact(path, line, field, _short(text))
    elif isinstance(text, str) and _INTEGER.fullmatch(text.strip()):
        whole = _bounded_int(text.strip(), 16)
        if whole is None or not -EXACT_INTEGER <= whole <= EXACT_INTEGER:
            raise _inexact(path, line, field, _short(text))
    try:  # float() raises TypeError for a value of any other kind: refused below
        value = float(cast("str | SupportsFloat", text))
    except (TypeError, ValueError, OverflowError):
        raise FormatError(path, line, field, f"score must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise FormatError(path, line, field, f"score must be finite, got {text!r}")
    return value


def _add_judgement(judgements: Judgements, seen_lines: dict[tuple[str, str], int], path: FilePath,
                   line: int, query_id: str, doc_id: str, relevance: int) -> None:
    per_query = judgements.setdefault(query_id, {})
    if doc_id in per_query:
        raise FormatError(
            path, line, "doc_id",
            f"duplicate judgement for (query_id={query_id!r}, doc_id={doc_id!r}); "
            f"first seen on line {seen_lines[(query_id, doc_id)]}",
        )
    per_query[doc_id] = relevance
    seen_lines[(query_id, doc_id)] = line


def _finish_qrels(path: FilePath, judgements: Judgements) -> QrelsFile:
    negative = sum(sum(map((0).__gt__, docs.values())) for docs in judgements.values()
                   if docs and min(docs.values()) < 0)  # most queries have none: min is cheaper
    return QrelsFile(str(path), judgements, negative)


def _group_starts(query_ids: Sequence[str]) -> list[int] | None:
    """Where each query's block begins when every query's lines are contiguous; else None."""
    starts = [0, *compress(count(1), map(ne, islice(query_ids, 1, None), query_ids))]
    # contiguous exactly when no two blocks share an id (every id is its block's first)
    return starts if len(starts) == len(set(map(query_ids.__getitem__, starts))) else None


def _judgements(query_ids: Sequence[str], doc_ids: Sequence[str],
                labels: Sequence[int]) -> Judgements | None:
    """``{query: {doc: label}}`` in file order, or None when a pair repeats."""
    n = len(query_ids)
    starts = _group_starts(query_ids)
    if starts is not None:
        out = {query_ids[a]: dict(zip(doc_ids[a:b], labels[a:b]))
               for a, b in zip(starts, [*starts[1:], n])}
    else:
        out = {}
        for query_id, doc_id, label in zip(query_ids, doc_ids, labels):
            out.setdefault(query_id, {})[doc_id] = label
    return out if sum(map(len, out.values())) == n else None


def _whole_qrels(path: FilePath, fast: Callable[[str], Judgements | None],
                 located: Callable[[FilePath], Judgements]) -> QrelsFile:
    """Qrels read whole by ``fast`` (None: not sure), else line by line by ``located``,
    which names the first bad line."""
    with gc_paused():
        text = _whole_text(path)
        judgements = None if text is None else fast(text)
        if judgements is None:
            judgements = located(path)
        return _finish_qrels(path, judgements)


def split_fields(text: str) -> list[str]:
    """The fields of a whitespace-separated line, split as trec_eval splits them: on ASCII
    whitespace only (:data:`ASCII_SPACE`), so an id may hold any other space."""
    if _OTHER_SPACE.search(text) is None:
        return text.split()
    stripped = text.strip(ASCII_SPACE)
    return _ASCII_RUN.split(stripped) if stripped else []
