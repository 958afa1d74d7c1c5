"""JSON and JSONL files: ``read_jsonl`` (a block of lines decoded at a time),
``read_json_object``, ``require_field``, and the id columns of a block of JSONL objects."""

from __future__ import annotations

import json
import re
from itertools import compress, count, repeat
from operator import itemgetter
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, overload

from harness.core.fast_json import JOINT as _JOINT, file_blocks
from harness.core.formats.base import FilePath, FormatError, _open_bytes, gc_paused

#: a JSON object as read: ``{name: value}``
JsonObject = dict[str, Any]
#: the query ids, document ids and third field's values of JSONL lines
FieldColumns = tuple[list[str], list[str], list[Any]]

#: the scanner ``json.loads`` runs, without its checks around it (``JSONDecoder.__init__``
#: sets it; typeshed does not declare it)
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]
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


def _loads(text: str, path: FilePath, line: int) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FormatError(path, line, None, _json_error(exc)) from None


def _decoded(lines: list[str]) -> list[Any] | None:
    """``json.loads`` of every line (none blank), or None where any line needs the full
    decoder (leading or trailing space, an error): the C scanner on each line as is."""
    try:
        found = list(map(_scan, lines, repeat(0)))
    except Exception:  # noqa: BLE001 - the line-by-line reader names what is wrong
        return None
    if len(found) != len(lines) or list(map(itemgetter(1), found)) != list(map(len, lines)):
        return None  # a StopIteration ends map() early; an end short of the line is extra text
    return list(map(itemgetter(0), found))


def _together(lines: list[str]) -> list[Any] | None:
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
        values: list[Any] = json.loads("[" + f',"{joint}",'.join(lines) + "]")
    except (ValueError, RecursionError):
        return None
    if len(values) != 2 * len(lines) - 1 or values[1::2].count(joint) != len(lines) - 1:
        return None
    return values[0::2]


def _jsonl_block(path: FilePath, numbers: list[int],
                 lines: list[str]) -> tuple[list[Any], FormatError | None]:
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


def _split_block(path: FilePath, raw: list[bytes],
                 first: int) -> tuple[list[int], list[str], FormatError | None]:
    """``(numbers, lines, error)`` of one block of lines (``first`` is the number of its
    first): its non-blank lines, cut short by the error of an undecodable line."""
    try:
        text = b"".join(raw).decode("utf-8")
    except UnicodeDecodeError:  # line by line, to name the line
        numbers: list[int] = []
        lines: list[str] = []
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


def _jsonl_blocks(path: FilePath) -> Iterator[tuple[list[int], list[Any]]]:
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


def read_jsonl(path: FilePath) -> Iterator[tuple[int, JsonObject]]:
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


def read_json_object(path: FilePath) -> JsonObject:
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


@overload
def require_field(obj: Mapping[str, Any], name: str, path: FilePath, line: int | None,
                  kind: type[str] = ...) -> str:
    ...


@overload
def require_field(obj: Mapping[str, Any], name: str, path: FilePath, line: int | None,
                  kind: None) -> Any:
    ...


def require_field(obj: Mapping[str, Any], name: str, path: FilePath, line: int | None,
                  kind: type[str] | None = str) -> Any:
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


def _ids(objects: list[Any], name: str) -> list[str] | None:
    """The string (or integer) ids of one field, as :func:`require_field` reads them."""
    try:
        values: list[Any] = list(map(itemgetter(name), objects))
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


def _block_fields(objects: list[Any] | None, fields: tuple[str, str, str]) -> FieldColumns | None:
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


def _orjson_blocks(path: FilePath) -> Iterator[list[Any] | None]:
    """The values of each block of a JSONL file as orjson reads them
    (:func:`harness.core.fast_json.file_blocks`); a None ends the blocks."""
    return file_blocks(path, _JSONL_BLOCK)


def _decoded_blocks(path: FilePath) -> Iterator[list[Any] | None]:
    """The values of each block of a JSONL file as the standard decoder reads them
    (:func:`_jsonl_blocks`); a None ends the blocks where a line is refused."""
    try:
        for _numbers, objects in _jsonl_blocks(path):
            yield objects
    except FormatError:
        yield None


def _field_columns(blocks: Iterable[list[Any] | None],
                   fields: tuple[str, str, str]) -> FieldColumns | None:
    """:func:`_block_fields` of every block, joined; None where that of a block is."""
    query_ids: list[str] = []
    doc_ids: list[str] = []
    values: list[Any] = []
    for objects in blocks:
        block = _block_fields(objects, fields)
        if block is None:
            return None
        query_ids += block[0]
        doc_ids += block[1]
        values += block[2]
    return (query_ids, doc_ids, values) if query_ids else None


def _fast_jsonl(path: FilePath, fields: tuple[str, str, str]) -> FieldColumns | None:
    """``(query ids, doc ids, third field values)`` of a JSONL file, or None where the
    line-by-line reader must look.  orjson reads it first
    (:mod:`harness.core.fast_json`), the standard decoder where orjson cannot."""
    columns = _field_columns(_orjson_blocks(path), fields)
    return columns if columns is not None else _field_columns(_decoded_blocks(path), fields)
