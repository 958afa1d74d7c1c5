"""Readers and writers for TREC qrels, TREC runs, BEIR qrels TSV and JSONL.

Every reader is strict: a bad line raises :class:`FormatError` naming the file, the line
and the field, before anything is returned.  Duplicate ``(query_id, doc_id)`` pairs, NaN
or infinite scores, non-integer relevance and empty files are all refused, and so are:

* relevance labels outside :data:`RELEVANCE_MIN` .. :data:`RELEVANCE_MAX` (trec_eval
  keeps labels in a C ``long`` and its pytrec_eval binding in an ``int``: larger labels
  silently zero every measure or crash the engine);
* scores written as integers beyond +-2^53 (:data:`EXACT_INTEGER`), which no double holds
  exactly, so distinct scores would tie (a decimal such as ``1e30`` reads as the nearest
  double, and one that overflows to infinity is refused);
* rank fields of more than 18 digits, JSON nested too deeply to read, and numbers too long
  to convert: each named by file and line.

How they are fast: a qrels file is read whole, a run or a JSONL file in blocks of lines
(what one block leaves behind is reused by the next, see :class:`_RunBlocks`), and
checked a column at a time; only when a check fails is it read again line by line
(``_located_*``), which finds the first bad line and names it.  JSONL blocks and a TREC
run's scores are read by orjson where it can (:mod:`harness.core.fast_json`), which gives
the standard decoder's values wherever the readers use it.  A result therefore comes
only from input that the line-by-line reader accepts too.  The garbage collector is
paused while a file's records are built (:func:`gc_paused`): they hold no reference cycles,
and a collection every few hundred new containers costs more than the parsing itself.
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
import secrets
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, compress, count, islice, repeat
from operator import add, eq, itemgetter, lt, ne, sub
from pathlib import Path
from typing import Iterable, Iterator, Mapping, Sequence

from harness.core.fast_json import JOINT as _JOINT, decimal_floats, file_blocks
from harness.core.records import Qrel, RankedDocs, ScoredDoc

#: the relevance labels every reader accepts (a signed 32-bit integer)
RELEVANCE_MIN, RELEVANCE_MAX = -2 ** 31, 2 ** 31 - 1
#: the largest magnitude of a score written as an integer (every integer up to it is a double)
EXACT_INTEGER = 2 ** 53
#: digits a rank field may hold
RANK_DIGITS = 18
_RANK_BOUND = 10 ** RANK_DIGITS


class FormatError(ValueError):
    """Bad input, located: ``file:line: field 'x': what is wrong``."""

    def __init__(self, path, line: int | None, field: str | None, message: str):
        self.path = str(path)
        self.line = line
        self.field = field
        where = self.path if line is None else f"{self.path}:{line}"
        what = f"field '{field}': " if field else ""
        super().__init__(f"{where}: {what}{message}")


@dataclass(frozen=True)
class QrelsFile:
    """Judgements read from one file: ``judgements[query_id][doc_id] = relevance``."""

    path: str
    judgements: dict[str, dict[str, int]]
    #: judgements with a negative label (judged non-relevant)
    negative_labels: int

    @property
    def qrels(self) -> list[Qrel]:
        return [
            Qrel(q, d, r)
            for q in sorted(self.judgements)
            for d, r in sorted(self.judgements[q].items())
        ]


# --------------------------------------------------------------------------- helpers


def _open_bytes(path):
    """``path`` opened for reading bytes; a missing or unreadable file is a FormatError."""
    path = Path(path)
    if not path.is_file():
        raise FormatError(path, None, None, "no such file")
    try:
        return path.open("rb")
    except OSError as exc:
        raise FormatError(path, None, None, f"cannot read: {exc.strerror}") from None


def _lines(path) -> Iterator[tuple[int, str]]:
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
            if not line.strip():
                continue
            seen = True
            yield number, line
    if not seen:
        raise FormatError(path, None, None, "empty file: no records")


@contextmanager
def gc_paused():
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


def _whole_text(path) -> str | None:
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


def _text_blocks(path) -> Iterator[str | None]:
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


def _read_lines(handle, path) -> bytes:
    """About :data:`_TEXT_BLOCK` bytes of ``handle``, to the end of a line."""
    try:
        data = handle.read(_TEXT_BLOCK)
        return data if data.endswith(b"\n") or not data else data + handle.readline()
    except OSError as exc:
        raise FormatError(path, None, None, f"cannot read: {exc.strerror}") from None


_INTEGER = re.compile(r"[+-]?[0-9]+")


def _short(value, limit: int = 60) -> str:
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


def _out_of_range(path, line, field: str, shown: str) -> FormatError:
    return FormatError(path, line, field, f"relevance {shown} is outside the supported range "
                                          f"{RELEVANCE_MIN} .. {RELEVANCE_MAX}")


def _in_range(value: int, path, line, field: str) -> int:
    if not RELEVANCE_MIN <= value <= RELEVANCE_MAX:
        raise _out_of_range(path, line, field, _short(value))
    return value


def parse_relevance(text: str, path, line: int, field: str = "relevance") -> int:
    """An integer relevance label in :data:`RELEVANCE_MIN` .. :data:`RELEVANCE_MAX`;
    ``1.0``, ``1_0`` or ``x`` is refused, never rounded."""
    if not isinstance(text, str) or not _INTEGER.fullmatch(text):
        raise FormatError(path, line, field, f"relevance must be an integer, got {text!r}")
    value = _bounded_int(text, 10)
    if value is None:
        raise _out_of_range(path, line, field, _short(text))
    return _in_range(value, path, line, field)


def _inexact(path, line, field, shown) -> FormatError:
    return FormatError(path, line, field,
                       f"integer score {shown} is beyond +-2^53: no double holds it exactly, "
                       "so distinct scores would tie (write it as a decimal)")


def parse_score(text, path, line: int | None, field: str = "score") -> float:
    """A finite float score; NaN, infinities, booleans and integers beyond +-2^53 are
    refused."""
    if isinstance(text, bool) or (isinstance(text, str) and "_" in text):
        raise FormatError(path, line, field, f"score must be a number, got {text!r}")
    if isinstance(text, int):
        if not -EXACT_INTEGER <= text <= EXACT_INTEGER:
            raise _inexact(path, line, field, _short(text))
    elif isinstance(text, str) and _INTEGER.fullmatch(text.strip()):
        value = _bounded_int(text.strip(), 16)
        if value is None or not -EXACT_INTEGER <= value <= EXACT_INTEGER:
            raise _inexact(path, line, field, _short(text))
    try:
        value = float(text)
    except (TypeError, ValueError, OverflowError):
        raise FormatError(path, line, field, f"score must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise FormatError(path, line, field, f"score must be finite, got {text!r}")
    return value


def _add_judgement(judgements, seen_lines, path, line, query_id, doc_id, relevance):
    per_query = judgements.setdefault(query_id, {})
    if doc_id in per_query:
        raise FormatError(
            path, line, "doc_id",
            f"duplicate judgement for (query_id={query_id!r}, doc_id={doc_id!r}); "
            f"first seen on line {seen_lines[(query_id, doc_id)]}",
        )
    per_query[doc_id] = relevance
    seen_lines[(query_id, doc_id)] = line


def _finish_qrels(path, judgements) -> QrelsFile:
    negative = sum(sum(map((0).__gt__, docs.values())) for docs in judgements.values()
                   if docs and min(docs.values()) < 0)  # most queries have none: min is cheaper
    return QrelsFile(str(path), judgements, negative)


def _group_starts(query_ids: Sequence[str]) -> list[int] | None:
    """Where each query's block begins when every query's lines are contiguous; else None."""
    starts = [0, *compress(count(1), map(ne, islice(query_ids, 1, None), query_ids))]
    # contiguous exactly when no two blocks share an id (every id is its block's first)
    return starts if len(starts) == len(set(map(query_ids.__getitem__, starts))) else None


def _judgements(query_ids, doc_ids, labels) -> dict[str, dict[str, int]] | None:
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


#: the texts of the labels qrels use, and their values (``int`` of each text)
_SMALL_LABELS = {str(i): i for i in range(-9, 100)}


def _labels(texts: Sequence[str]) -> list[int] | None:
    """Relevance labels from their text, or None when one is not an in-range integer."""
    try:
        return list(map(_SMALL_LABELS.__getitem__, texts))
    except KeyError:  # a label of another spelling or size: converted below
        pass
    joined = "".join(texts)
    if not joined.isascii() or "_" in joined or max(map(len, texts)) > 11:
        return None
    try:
        labels = list(map(int, texts))
    except ValueError:
        return None
    if min(labels) < RELEVANCE_MIN or max(labels) > RELEVANCE_MAX:
        return None
    return labels


def _scores(values: Sequence, texts: bool = False) -> list[float] | None:
    """Scores from text (``texts``: all ``str``) or JSON numbers (the fast path's check),
    or None when any would be refused (or needs a closer look: magnitudes from 2^53 on)."""
    kinds = {str} if texts else set(map(type, values))
    scores = decimal_floats(values) if kinds == {str} else None
    if scores is None:
        if kinds == {str}:
            if "_" in "".join(values):
                return None
        elif not kinds <= {float, int}:
            return None
        try:
            scores = list(values) if kinds == {float} else list(map(float, values))
        except (ValueError, OverflowError):
            return None
    if (not math.isfinite(sum(scores)) or max(scores) >= EXACT_INTEGER
            or min(scores) <= -EXACT_INTEGER):
        return None
    return scores


#: ASCII whitespace other than the space and the newline
_ODD_SPACE = ("\t", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x1f")


def _plain_columns(text: str, width: int, sep: str) -> list[list[str]] | None:
    """The ``width`` columns of a text whose lines are fields separated by single ``sep``
    characters, with no other whitespace and no blank line (checked by the caller but for
    the separators), split in one pass; None for any other text.

    Each newline is kept as a field of its own: every line holds ``width`` fields exactly
    when every ``width + 1``-th field is a newline and no field is empty."""
    body = text.removesuffix("\n")
    spaced = body.replace("\n", f"{sep}\n{sep}") + f"{sep}\n"
    # no empty field: no two separators in a row, none at the start
    if sep + sep in spaced or spaced.startswith(sep):
        return None
    fields = spaced.split(sep)
    step = width + 1
    lines = (len(spaced) - len(body)) // 2  # each newline is one field, two characters longer
    if len(fields) != lines * step or fields[width::step].count("\n") != lines:
        return None
    return [fields[i::step] for i in range(width)]


def _columns(text: str, width: int) -> list[list[str]] | None:
    """The ``width`` whitespace-separated columns of every non-blank line, or None when a
    line has another number of fields.

    A plain file (ASCII, fields separated by single spaces, no whitespace but spaces and
    newlines, no blank line) is split in one pass over the whole text
    (:func:`_plain_columns`).  Any other file is split line by line.
    """
    if text.isascii() and not any(map(text.__contains__, _ODD_SPACE)):
        columns = _plain_columns(text, width, " ")
        if columns is not None:
            return columns
    lines = text.split("\n")
    rows = list(map(str.split, lines))
    widths = set(map(len, rows))
    if widths != {width}:
        if widths != {0, width}:
            return None
        rows = list(filter(None, rows))
    return [list(map(itemgetter(i), rows)) for i in range(width)]


def _ranks(texts: list[str]) -> list[int] | None:
    """Integer ranks of at most :data:`RANK_DIGITS` digits, or None.  (ASCII text without
    ``_`` that ``int`` reads is exactly ``[+-]?[0-9]+``.)"""
    joined = "".join(texts)
    if not joined.isascii() or "_" in joined:
        return None
    try:
        ranks = list(map(int, texts))
    except ValueError:  # not an integer, or thousands of digits
        return None
    # past 18 digits (leading zeros aside), the line-by-line reader refuses the rank
    return ranks if -_RANK_BOUND < min(ranks) and max(ranks) < _RANK_BOUND else None


# --------------------------------------------------------------------------- qrels

BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")
_HEADER_TEXT = "\t".join(BEIR_QRELS_HEADER)


def _fast_trec_qrels(text: str) -> dict | None:
    columns = _columns(text, 4)
    if columns is None:
        return None
    query_ids, _, doc_ids, texts = columns
    labels = _labels(texts)
    return None if labels is None else _judgements(query_ids, doc_ids, labels)


def read_trec_qrels(path) -> QrelsFile:
    """TREC qrels: ``query_id iteration doc_id relevance`` per line."""
    with gc_paused():
        text = _whole_text(path)
        judgements = None if text is None else _fast_trec_qrels(text)
        if judgements is None:
            judgements = _located_trec_qrels(path)
        return _finish_qrels(path, judgements)


def _located_trec_qrels(path) -> dict:
    judgements: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in _lines(path):
        parts = text.split()
        if tuple(parts) == BEIR_QRELS_HEADER:
            raise FormatError(path, line, "header",
                              "a BEIR header row in a TREC qrels file (name BEIR qrels *.tsv)")
        if len(parts) != 4:
            raise FormatError(
                path, line, "columns",
                f"expected 4 columns 'query_id iteration doc_id relevance', got {len(parts)}",
            )
        query_id, _iteration, doc_id, rel = parts
        _add_judgement(judgements, seen, path, line, query_id, doc_id, parse_relevance(rel, path, line))
    return judgements


#: whitespace a BEIR field may not hold for its text to be split in one pass
_TSV_ODD_SPACE = (" ", *(c for c in _ODD_SPACE if c != "\t"))


def _fast_beir_qrels(text: str) -> dict | None:
    header, _, body = text.partition("\n")
    if (body and header.rstrip("\r") == _HEADER_TEXT and body.isascii()
            and not any(map(body.__contains__, _TSV_ODD_SPACE))):
        columns = _plain_columns(body, 3, "\t")  # no field to strip, no blank line
        if columns is not None:
            query_ids, doc_ids, texts = columns
            labels = _labels(texts)
            if labels is not None:
                return _judgements(query_ids, doc_ids, labels)
    lines = list(filter(str.strip, text.split("\n")))
    if not lines or tuple(p.strip() for p in lines[0].split("\t")) != BEIR_QRELS_HEADER:
        return None
    rows = [line.split("\t") for line in islice(lines, 1, None)]
    if not rows or set(map(len, rows)) != {3}:
        return None
    query_ids, doc_ids, texts = (list(map(str.strip, column)) for column in zip(*rows))
    if "" in query_ids or "" in doc_ids:
        return None
    labels = _labels(texts)
    return None if labels is None else _judgements(query_ids, doc_ids, labels)


def read_beir_qrels(path) -> QrelsFile:
    """BEIR qrels TSV: a header row ``query-id corpus-id score`` then one judgement per row."""
    with gc_paused():
        text = _whole_text(path)
        judgements = None if text is None else _fast_beir_qrels(text)
        if judgements is None:
            judgements = _located_beir_qrels(path)
        return _finish_qrels(path, judgements)


def _located_beir_qrels(path) -> dict:
    judgements: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    header_seen = False
    for line, text in _lines(path):
        parts = text.split("\t")
        if not header_seen:
            if tuple(p.strip() for p in parts) != BEIR_QRELS_HEADER:
                raise FormatError(
                    path, line, "header",
                    f"expected header {_HEADER_TEXT!r}, got {text!r}",
                )
            header_seen = True
            continue
        if len(parts) != 3:
            raise FormatError(path, line, "columns",
                              f"expected 3 tab-separated columns, got {len(parts)}")
        query_id, doc_id, rel = (p.strip() for p in parts)
        if not query_id:
            raise FormatError(path, line, "query-id", "empty query id")
        if not doc_id:
            raise FormatError(path, line, "corpus-id", "empty document id")
        _add_judgement(judgements, seen, path, line, query_id, doc_id,
                       parse_relevance(rel, path, line, "score"))
    if not judgements:
        raise FormatError(path, None, None, "empty file: a header but no judgements")
    return judgements


# --------------------------------------------------------------------------- JSON

_DECODER = json.JSONDecoder()
_scan = _DECODER.scan_once
_JSONL_BLOCK = 1 << 18  # bytes of lines decoded at a time (see _TEXT_BLOCK)


def _json_error(exc: Exception) -> str:
    """What is wrong, in the reader's words, for anything ``json.loads`` raises."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON: {exc.msg}"
    if isinstance(exc, RecursionError):
        return "not valid JSON: nested too deeply to read"
    if "integer string conversion" in str(exc):
        return "not valid JSON: a number with more digits than can be read (limit 4300)"
    return f"not valid JSON: {exc}"


def _loads(text: str, path, line: int):
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FormatError(path, line, None, _json_error(exc)) from None


def _decoded(lines: list[str]) -> list | None:
    """``json.loads`` of every line (none blank), or None where any line needs the full
    decoder (leading or trailing space, an error): the C scanner on each line as is."""
    try:
        found = list(map(_scan, lines, repeat(0)))
    except Exception:  # noqa: BLE001 - the line-by-line reader names what is wrong
        return None
    if len(found) != len(lines) or list(map(itemgetter(1), found)) != list(map(len, lines)):
        return None  # a StopIteration ends map() early; an end short of the line is extra text
    return list(map(itemgetter(0), found))


def _together(lines: list[str]) -> list | None:
    """``json.loads`` of every line, read as one JSON array (one call, and its keys read
    once), or None.

    The lines are joined by a string that no line can spell: the empty string where no
    line holds ``""`` (no escape spells it), else :data:`_JOINT` where no line holds it
    and none holds a ``\\u`` escape.  When the array reads as value, joint, value, ...,
    every joint sits at the top level, so each line was exactly one value.
    """
    probe = "\n".join(lines)
    if '""' not in probe:
        joint = ""
    elif _JOINT in probe or "\\u" in probe:
        return None
    else:
        joint = _JOINT
    try:
        values = json.loads("[" + f',"{joint}",'.join(lines) + "]")
    except (ValueError, RecursionError):
        return None
    if len(values) != 2 * len(lines) - 1 or values[1::2].count(joint) != len(lines) - 1:
        return None
    return values[0::2]


def _jsonl_block(path, numbers: list[int], lines: list[str]):
    """``(values, error)``: the values of the lines, up to the first that does not read
    (whose located error comes second, else None)."""
    with gc_paused():
        objects = _together(lines)
        if objects is None:
            objects = _decoded(lines)
        if objects is not None:
            return objects, None
        objects = []
        for line, text in zip(numbers, lines):
            try:
                objects.append(_loads(text, path, line))
            except FormatError as exc:
                return objects, exc
    return objects, None


#: a newline, then ASCII whitespace or the end of the text: where a blank line may begin
_LINE_SPACE = tuple("\n" + c for c in " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f")


def _split_block(path, raw: list[bytes], first: int):
    """``(numbers, lines, error)`` of one block of lines (``first`` is the number of its
    first): its non-blank lines, cut short by the error of an undecodable line."""
    try:
        text = b"".join(raw).decode("utf-8")
    except UnicodeDecodeError:  # line by line, to name the line
        numbers, lines = [], []
        for number, data in enumerate(raw, start=first):
            try:
                line = data.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                return numbers, lines, FormatError(path, number, None,
                                                   f"not UTF-8 text ({exc.reason})")
            if number == 1:
                line = line.removeprefix("\ufeff")
            if line.strip():
                numbers.append(number)
                lines.append(line)
        return numbers, lines, None
    if first == 1:
        text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    if "\r" in text:
        lines = list(map(str.rstrip, lines, repeat("\r\n")))
    elif text.startswith("{") and text.count("\n{") == len(lines) - 1:
        return list(range(first, first + len(lines))), lines, None  # each line opens an object
    elif (text and text.isascii() and not text[0].isspace()
          and not any(map(text.__contains__, _LINE_SPACE))):
        return list(range(first, first + len(lines))), lines, None  # no line is blank
    keep = list(map(str.strip, lines))
    return list(compress(count(first), keep)), list(compress(lines, keep)), None


def _jsonl_blocks(path) -> Iterator[tuple[list[int], list]]:
    """``(line numbers, values)`` per block of non-blank lines of a JSONL file, each value
    read as ``json.loads`` reads it; an error names its line."""
    path = Path(path)
    first, seen = 1, False
    with _open_bytes(path) as handle:
        while raw := handle.readlines(_JSONL_BLOCK):
            numbers, lines, error = _split_block(path, raw, first)
            first += len(raw)
            if lines:
                seen = True
                objects, bad = _jsonl_block(path, numbers, lines)
                yield numbers[:len(objects)], objects
                error = bad or error
            if error is not None:
                raise error
    if not seen:
        raise FormatError(path, None, None, "empty file: no records")


def read_jsonl(path) -> Iterator[tuple[int, dict]]:
    """``(line, object)`` per line of a JSONL file; a line that is not an object is refused."""
    for numbers, objects in _jsonl_blocks(path):
        if set(map(type, objects)) == {dict}:
            yield from zip(numbers, objects)
            continue
        for line, obj in zip(numbers, objects):
            if not isinstance(obj, dict):
                raise FormatError(path, line, None,
                                  f"expected a JSON object, got {type(obj).__name__}")
            yield line, obj


def _deepest_line(text: str) -> int:
    """The line where the nesting of ``text`` (outside strings) is deepest."""
    depth = deepest = 0
    line = where = 1
    in_string = escaped = False
    for char in text:
        if char == "\n":
            line += 1
        elif in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest, where = depth, line
        elif char in "]}":
            depth -= 1
    return where


def read_json_object(path) -> dict:
    """A JSON file holding one object, or a :class:`FormatError` naming the file and line.

    ``NaN`` / ``Infinity`` parse (as Python does) so that the document's validator can
    refuse them naming the field they sit in.
    """
    path = Path(path)
    if not path.is_file():
        raise FormatError(path, None, None, "no such file")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise FormatError(path, None, None, "not UTF-8 text") from None
    except OSError as exc:
        raise FormatError(path, None, None, f"cannot read: {exc.strerror}") from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, None, f"not valid JSON: {exc.msg}") from None
    except RecursionError:
        raise FormatError(path, _deepest_line(text), None, _json_error(RecursionError())) from None
    except ValueError as exc:  # a number of more digits than Python converts
        long = re.search(r"[0-9]{4301,}", text)
        line = None if long is None else text.count("\n", 0, long.start()) + 1
        raise FormatError(path, line, None, _json_error(exc)) from None
    if not isinstance(doc, dict):
        raise FormatError(path, None, None, f"expected a JSON object, got {type(doc).__name__}")
    return doc


def require_field(obj: Mapping, name: str, path, line: int, kind=str):
    """``obj[name]``, which must exist and be of ``kind``."""
    if name not in obj:
        raise FormatError(path, line, name, "missing")
    value = obj[name]
    if kind is str:
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise FormatError(path, line, name, f"expected a string, got {value!r}")
        value = str(value)
        if not value:
            raise FormatError(path, line, name, "empty")
    return value


def _ids(objects: list[dict], name: str) -> list[str] | None:
    """The string (or integer) ids of one field, as :func:`require_field` reads them."""
    try:
        values = list(map(itemgetter(name), objects))
    except (KeyError, TypeError):
        return None
    try:
        "".join(values)  # all strings (the common case): cheaper than their types
    except TypeError:  # integers are read as their text, any other value is refused
        kinds = set(map(type, values))
        if kinds == {int}:
            values = list(map(str, values))
        elif kinds <= {str, int}:
            values = [v if type(v) is str else str(v) for v in values]
        else:
            return None
    return None if "" in values else values


def _block_fields(objects: list | None, fields: tuple[str, str, str]):
    """``(query ids, doc ids, third field values)`` of a block of JSON values, or None
    where the block is None or a value is not an object with ids in both id fields and
    the third field."""
    if not objects:  # (a JSON value read by its key is an object: others raise TypeError)
        return None
    query_ids, doc_ids = _ids(objects, fields[0]), _ids(objects, fields[1])
    if query_ids is None or doc_ids is None:
        return None
    try:
        return query_ids, doc_ids, list(map(itemgetter(fields[2]), objects))
    except KeyError:
        return None


def _decoded_blocks(path) -> Iterator[list | None]:
    """The values of each block of a JSONL file as the standard decoder reads them
    (:func:`_jsonl_blocks`); a None ends the blocks where a line is refused."""
    try:
        for _numbers, objects in _jsonl_blocks(path):
            yield objects
    except FormatError:
        yield None


def _field_columns(blocks: Iterable[list | None], fields: tuple[str, str, str]):
    """:func:`_block_fields` of every block, joined; None where that of a block is."""
    columns: list[list] = [[], [], []]
    for objects in blocks:
        block = _block_fields(objects, fields)
        if block is None:
            return None
        for column, values in zip(columns, block):
            column += values
    return columns if columns[0] else None


def _fast_jsonl(path, fields: tuple[str, str, str]):
    """``(query ids, doc ids, third field values)`` of a JSONL file, or None where the
    line-by-line reader must look.  orjson reads it first
    (:mod:`harness.core.fast_json`), the standard decoder where orjson cannot."""
    columns = _field_columns(file_blocks(path, _JSONL_BLOCK), fields)
    return columns if columns is not None else _field_columns(_decoded_blocks(path), fields)


def read_jsonl_qrels(path) -> QrelsFile:
    """JSONL qrels: ``{"query_id": .., "doc_id": .., "relevance": int}`` per line."""
    with gc_paused():
        judgements = None
        columns = _fast_jsonl(path, ("query_id", "doc_id", "relevance"))
        if columns is not None and set(map(type, columns[2])) == {int}:
            labels = columns[2]
            if min(labels) >= RELEVANCE_MIN and max(labels) <= RELEVANCE_MAX:
                judgements = _judgements(columns[0], columns[1], labels)
        if judgements is None:
            judgements = _located_jsonl_qrels(path)
        return _finish_qrels(path, judgements)


def _located_jsonl_qrels(path) -> dict:
    judgements: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, obj in read_jsonl(path):
        query_id = require_field(obj, "query_id", path, line)
        doc_id = require_field(obj, "doc_id", path, line)
        rel = require_field(obj, "relevance", path, line, kind=None)
        if isinstance(rel, bool) or not isinstance(rel, int):
            raise FormatError(path, line, "relevance", f"relevance must be an integer, got {rel!r}")
        _add_judgement(judgements, seen, path, line, query_id, doc_id,
                       _in_range(rel, path, line, "relevance"))
    return judgements


def read_qrels(path) -> QrelsFile:
    """Qrels in any supported format, chosen by extension (``.tsv``, ``.jsonl``, else TREC)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".tsv":
        return read_beir_qrels(path)
    if suffix == ".jsonl":
        return read_jsonl_qrels(path)
    return read_trec_qrels(path)


# --------------------------------------------------------------------------- runs


def _add_scored(run, seen, path, line, query_id, doc_id, score):
    if (query_id, doc_id) in seen:
        raise FormatError(
            path, line, "doc_id",
            f"duplicate (query_id={query_id!r}, doc_id={doc_id!r}) in run; "
            f"first seen on line {seen[(query_id, doc_id)]}",
        )
    seen[(query_id, doc_id)] = line
    run.setdefault(query_id, []).append(ScoredDoc(query_id, doc_id, score))


#: "0", "1", "2", ...: the rank texts of a list numbered in file order (grown on demand)
_COUNTING = [str(i) for i in range(1024)]


def _run_firsts(rank_texts: list[str], starts: list[int], first: int | None = None) -> list[int]:
    """Where the numbering of each run of lines beginning at ``starts`` starts: 0 where
    its first rank text is "0", else 1; ``first`` for the first run, when it was begun in
    an earlier block (the number its next line needs)."""
    firsts = list(map(int, map(ne, map(rank_texts.__getitem__, starts), repeat("0"))))
    if first is not None:
        firsts[0] = first
    return firsts


def _counting(rank_texts: list[str], starts: list[int], firsts: list[int] | None = None) -> bool:
    """Whether each run of lines beginning at ``starts`` is numbered ``1, 2, 3, ...`` (or
    from 0; from ``firsts``, :func:`_run_firsts`, when given) in file order, as rank texts
    a line-by-line read would accept."""
    if firsts is None:
        firsts = _run_firsts(rank_texts, starts)
    ends = [*starts[1:], len(rank_texts)]
    stops = list(map(add, firsts, map(sub, ends, starts)))
    if max(stops) > len(_COUNTING):
        _COUNTING.extend(map(str, range(len(_COUNTING), max(stops))))
    return all(map(eq, map(rank_texts.__getitem__, map(slice, starts, ends)),
                   map(_COUNTING.__getitem__, map(slice, firsts, stops))))


class _RunBlocks:
    """A run's columns, gathered a block of lines at a time; what its lists need is
    checked on each block while the block is fresh in memory: where each run of one
    query's lines begins, that no such run holds a document twice, and (TREC) whether
    the ranks count ``1, 2, 3, ...`` (or from 0) in file order, which then orders nothing
    and is not converted.

    The lines of a run share one query id object (equal to each line's own), so that what
    a block leaves behind is little.  ``records``: a :class:`ScoredDoc` per line, as the
    lists hold them."""

    def __init__(self, records: bool) -> None:
        self.query_ids: list[str] = []
        self.doc_ids: list[str] = []
        self.scores: list[float] = []
        self.docs: list[ScoredDoc] | None = [] if records else None
        self.starts: list[int] = []  # where each run of one query's lines begins
        self.ranks: list[int] | None = None  # once some run's ranks do not count
        self.refused = False  # a run holds a document twice, or a rank is not read
        self._firsts: list[int] = []  # each run's first rank, while the ranks count
        self._last: str | None = None  # the query of the last run so far, its documents,
        self._docs: set[str] = set()  # and the rank its next line needs (if counting)
        self._next = 0

    def add(self, query_ids: list[str], doc_ids: list[str], scores: list[float],
            rank_texts: list[str] | None = None) -> None:
        n = len(query_ids)
        starts = [0, *compress(count(1), map(ne, islice(query_ids, 1, None), query_ids))]
        ends = [*starts[1:], n]
        sizes = list(map(sub, ends, starts))
        goes_on = query_ids[0] == self._last  # the last run of the block before goes on
        runs = list(map(set, map(doc_ids.__getitem__, map(slice, starts, ends))))
        heads = list(map(query_ids.__getitem__, starts))
        carried = len(self._docs) if goes_on else 0
        if goes_on:
            runs[0] |= self._docs
            heads[0] = self._last
        if list(map(len, runs)) != [sizes[0] + carried, *islice(sizes, 1, None)]:
            self.refused = True
        if rank_texts is not None:
            self._add_ranks(rank_texts, starts, goes_on)
        self.starts += map(len(self.query_ids).__add__, starts[goes_on:])
        self._last, self._docs = heads[-1], runs[-1]
        shared = list(chain.from_iterable(map(repeat, heads, sizes)))
        if self.docs is not None:
            self.docs += map(tuple.__new__, repeat(ScoredDoc), zip(shared, doc_ids, scores))
        self.query_ids += shared
        self.doc_ids += doc_ids
        self.scores += scores

    def _add_ranks(self, rank_texts: list[str], starts: list[int], goes_on: bool) -> None:
        """Check a block's ranks (before its runs are added); converted once they do not
        count, and those before them made from the count."""
        if self.ranks is None:
            firsts = _run_firsts(rank_texts, starts, self._next if goes_on else None)
            if _counting(rank_texts, starts, firsts):
                self._firsts += firsts[goes_on:]
                self._next = firsts[-1] + len(rank_texts) - starts[-1]
                return
            self.ranks = self._counted()
        ranks = _ranks(rank_texts)
        if ranks is None:
            self.refused = True
        else:
            self.ranks += ranks

    def _counted(self) -> list[int]:
        """The ranks of the lines so far, all in runs that count (from ``_firsts``)."""
        ends = [*self.starts[1:], len(self.query_ids)]
        return list(chain.from_iterable(map(range, self._firsts, map(
            add, self._firsts, map(sub, ends, self.starts)))))

    def lists(self) -> dict[str, list[ScoredDoc]] | dict[str, RankedDocs] | None:
        """``{query: [ScoredDoc]}`` (or :class:`RankedDocs` without ``records``) in file
        order of first appearance, each list in rank order (stable; file order without
        ranks); None where a pair repeats, a rank needs the line-by-line reader, or (no
        ``records``) the lists are not runs of lines already in order."""
        query_ids, docs, ranks = self.query_ids, self.docs, self.ranks
        starts: list[int] | None = self.starts
        if self.refused or not query_ids:
            return None
        if len(starts) != len(set(map(query_ids.__getitem__, starts))):
            starts = None  # some query's lines are not contiguous
        if starts is not None and (ranks is None or set(
                compress(count(1), map(lt, islice(ranks, 1, None), ranks))) <= set(starts)):
            bounds = list(zip(starts, [*starts[1:], len(query_ids)]))
            if docs is None:
                return {query_ids[a]: RankedDocs(self.doc_ids[a:b], self.scores[a:b])
                        for a, b in bounds}
            return {query_ids[a]: docs[a:b] for a, b in bounds}
        if docs is None or len(set(zip(query_ids, self.doc_ids))) != len(query_ids):
            return None
        if ranks is None and self._firsts:  # runs that count, of queries met again
            ranks = self._counted()
        positions: dict[str, list[int]] = {}
        for i, query_id in enumerate(query_ids):
            positions.setdefault(query_id, []).append(i)
        if ranks is not None:
            for kept in positions.values():
                kept.sort(key=ranks.__getitem__)
        return {q: list(map(docs.__getitem__, kept)) for q, kept in positions.items()}


def _fast_trec_run(path, records: bool = True) -> dict | None:
    """The lists of a TREC run (:meth:`_RunBlocks.lists`) read a block at a time
    (:func:`_text_blocks`), or None where the line-by-line reader must look."""
    run = _RunBlocks(records)
    for text in _text_blocks(path):
        if text is not None and text.isspace():
            continue  # blank lines only
        columns = None if text is None else _columns(text, 6)
        scores = None if columns is None else _scores(columns[4], texts=True)
        if scores is None:
            return None
        run.add(columns[0], columns[2], scores, columns[3])
        if run.refused:
            return None
    return run.lists()


def read_trec_run(path) -> dict[str, list[ScoredDoc]]:
    """TREC run: ``query_id Q0 doc_id rank score tag`` per line.

    Each query's list is in rank-column order (file order among equal ranks): that is the
    order ``preserve_order`` scores.  trec_eval itself ignores the rank column, and so does
    the default scoring, which orders by score.
    """
    with gc_paused():
        run = _fast_trec_run(path)
        return _located_trec_run(path) if run is None else run


def _located_trec_run(path) -> dict[str, list[ScoredDoc]]:
    run: dict[str, list[ScoredDoc]] = {}
    ranks: dict[tuple[str, str], int] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in _lines(path):
        parts = text.split()
        if len(parts) != 6:
            raise FormatError(
                path, line, "columns",
                f"expected 6 columns 'query_id Q0 doc_id rank score tag', got {len(parts)}",
            )
        query_id, _q0, doc_id, rank, score, _tag = parts
        if not _INTEGER.fullmatch(rank):
            raise FormatError(path, line, "rank", f"rank must be an integer, got {rank!r}")
        value = _bounded_int(rank, RANK_DIGITS)
        if value is None:
            raise FormatError(path, line, "rank",
                              f"rank {_short(rank)} has more than {RANK_DIGITS} digits")
        _add_scored(run, seen, path, line, query_id, doc_id, parse_score(score, path, line))
        ranks[(query_id, doc_id)] = value
    for query_id, docs in run.items():
        docs.sort(key=lambda d: ranks[(query_id, d.doc_id)])  # stable: file order breaks ties
    return run


def _fast_jsonl_run(path, records: bool = True) -> dict | None:
    """The lists of a JSONL run (:meth:`_RunBlocks.lists`) read a block at a time, or
    None where the line-by-line reader must look.  orjson reads it first
    (:mod:`harness.core.fast_json`), the standard decoder where orjson cannot."""
    for blocks in (file_blocks(path, _JSONL_BLOCK), _decoded_blocks(path)):
        run = _RunBlocks(records)
        for objects in blocks:
            if objects is None:  # not read: by the standard decoder next, if by orjson
                break
            columns = _block_fields(objects, ("query_id", "doc_id", "score"))
            scores = None if columns is None else _json_scores(columns[2])
            if scores is None:
                return None
            run.add(columns[0], columns[1], scores)
            if run.refused:
                return None
        else:
            return run.lists()
    return None


def _json_scores(values: list) -> list[float] | None:
    """:func:`_scores` of JSON numbers; None for any other value."""
    return _scores(values) if set(map(type, values)) <= {float, int} else None


def read_jsonl_run(path) -> dict[str, list[ScoredDoc]]:
    """JSONL run: ``{"query_id": .., "doc_id": .., "score": float}`` per line."""
    with gc_paused():
        run = _fast_jsonl_run(path)
        return _located_jsonl_run(path) if run is None else run


def _located_jsonl_run(path) -> dict[str, list[ScoredDoc]]:
    run: dict[str, list[ScoredDoc]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, obj in read_jsonl(path):
        query_id = require_field(obj, "query_id", path, line)
        doc_id = require_field(obj, "doc_id", path, line)
        score = parse_score(require_field(obj, "score", path, line, kind=None), path, line)
        _add_scored(run, seen, path, line, query_id, doc_id, score)
    return run


def read_run(path) -> dict[str, list[ScoredDoc]]:
    """A run in any supported format, chosen by extension (``.jsonl``, else TREC)."""
    if Path(path).suffix.lower() == ".jsonl":
        return read_jsonl_run(path)
    return read_trec_run(path)


def read_run_columns(path) -> dict[str, RankedDocs]:
    """:func:`read_run` with each query's list as :class:`RankedDocs` (two columns): the
    same lists, values and errors, without a record per document."""
    with gc_paused():
        if Path(path).suffix.lower() == ".jsonl":
            run = _fast_jsonl_run(path, records=False)
        else:
            run = _fast_trec_run(path, records=False)
        if run is not None:
            return run
        return {query_id: RankedDocs([d.doc_id for d in docs], [d.score for d in docs])
                for query_id, docs in read_run(path).items()}


# --------------------------------------------------------------------------- writers


def _atomic_write_text(path, text: str) -> None:
    """Write beside ``path`` and rename into place: the old file or the new one, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with tmp.open("x", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _token(value: str, path, what: str) -> str:
    """An id written into a whitespace-separated TREC file must hold no whitespace."""
    if not value or any(c.isspace() for c in value):
        raise FormatError(path, None, what, f"{what} {value!r} cannot be written to a TREC file "
                                            "(empty or holds whitespace)")
    return value


def _sorted_qrels(qrels: Iterable[Qrel] | Mapping[str, Mapping[str, int]]) -> list[Qrel]:
    if isinstance(qrels, Mapping):
        qrels = [Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    return sorted(qrels)


def write_trec_qrels(path, qrels) -> None:
    """Write TREC qrels, sorted by (query_id, doc_id)."""
    _atomic_write_text(path, "".join(
        f"{_token(q.query_id, path, 'query_id')} 0 {_token(q.doc_id, path, 'doc_id')} {int(q.relevance)}\n"
        for q in _sorted_qrels(qrels)))


def write_beir_qrels(path, qrels) -> None:
    """Write BEIR qrels TSV with its header row."""
    rows = ["\t".join(BEIR_QRELS_HEADER)]
    rows += [f"{q.query_id}\t{q.doc_id}\t{q.relevance}" for q in _sorted_qrels(qrels)]
    _atomic_write_text(path, "\n".join(rows) + "\n")


def write_trec_run(path, run: Mapping[str, Sequence[ScoredDoc]], tag: str = "harness") -> None:
    """Write a TREC run in the given list order per query (queries sorted by id)."""
    lines = []
    _token(tag, path, "tag")
    for query_id in sorted(run):
        _token(query_id, path, "query_id")
        for rank, doc in enumerate(run[query_id], start=1):
            score = parse_score(doc.score, path, None)
            lines.append(f"{query_id} Q0 {_token(doc.doc_id, path, 'doc_id')} {rank} {score!r} {tag}\n")
    _atomic_write_text(path, "".join(lines))


def write_jsonl(path, rows: Iterable[Mapping]) -> None:
    """Write canonical JSONL (sorted keys, fixed float formatting), atomically."""
    from harness.core.canonical import canonical_lines

    _atomic_write_text(path, canonical_lines(rows))
