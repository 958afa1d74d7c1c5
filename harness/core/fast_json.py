"""What orjson reads for the run and qrels readers' fast paths: blocks of JSONL lines,
and the score column of a TREC run.

orjson (a compiled JSON parser) reads a block of lines as one JSON array, joined as
:func:`harness.core.formats.json_files._together` joins them, in about half the standard decoder's
time.  Where it reads a text it gives what ``json.loads`` gives, but for one thing:
integers beyond 64 bits come back as floats.  The run and qrels readers refuse any such
value on their fast path (an id must be a string or an integer, a label an integer, a
score under 2^53 in magnitude), so their results cannot change; a reader that keeps
arbitrary values (``read_jsonl``) does not use this module.  What orjson refuses and
``json.loads`` reads (``NaN``, ``Infinity``, ``1e400``, lone surrogate escapes, nesting
past 1,024 levels) and anything else it refuses, invalid UTF-8 included, gets None: the
caller then reads the block the general way, which names a bad line.

A TREC run's scores are read the same way (:func:`decimal_floats`), as one JSON array of
the score texts: where every text reads as one JSON float, ``float`` of the text gives
that value (both round correctly), and the one ``float`` call per text is saved.
"""

from __future__ import annotations

from os import PathLike
from typing import Any, Iterator, Sequence

#: joins lines where some line holds ``""`` (see :func:`harness.core.formats.json_files._together`)
JOINT = "harness-jsonl-joint-7f3a9c"


def block_values(data: bytes) -> list[Any] | None:
    """One value per line of ``data`` (whole lines, ending in a newline but perhaps the
    last; no byte-order mark), or None where any line is blank or not exactly one value,
    or orjson refuses the block, or orjson is not installed."""
    try:
        import orjson
    except ImportError:
        return None
    body = data[:-1] if data.endswith(b"\n") else data
    if not body:
        return None
    joint = ""
    if b'""' in body:  # the empty string is no joint here: a line spells it
        if JOINT.encode() in body or b"\\u" in body:
            return None  # a line could spell the other joint too
        joint = JOINT
    try:
        values = orjson.loads(b"[" + body.replace(b"\n", f',"{joint}",'.encode()) + b"]")
    except orjson.JSONDecodeError:
        return None
    lines = body.count(b"\n") + 1
    if len(values) != 2 * lines - 1 or values[1::2].count(joint) != lines - 1:
        return None
    out: list[Any] = values[0::2]
    return out


def file_blocks(path: str | PathLike[str], block_bytes: int) -> Iterator[list[Any] | None]:
    """:func:`block_values` of each block of about ``block_bytes`` of lines of the file
    (its byte-order mark dropped); a None ends the blocks (so does a file that cannot be
    opened, at once)."""
    try:
        handle = open(path, "rb")
    except OSError:
        yield None
        return
    with handle:
        first = True
        while data := handle.read(block_bytes):
            if not data.endswith(b"\n"):
                data += handle.readline()  # to the end of the line
            if first:
                data = data.removeprefix(b"\xef\xbb\xbf")
                first = False
            values = block_values(data)
            yield values
            if values is None:
                return


def decimal_floats(texts: Sequence[str]) -> list[float] | None:
    """``float`` of each text where every text is one JSON number read as a float (with a
    fraction or an exponent, in range); None otherwise (an integer text, whose ``-0``
    ``float`` reads as -0.0, included), or where orjson is not installed."""
    try:
        import orjson
    except ImportError:
        return None
    try:
        values = orjson.loads("[" + ",".join(texts) + "]")
    except orjson.JSONDecodeError:
        return None
    # each text one value: a text holding a comma splits into more values, and what could
    # join texts again (brackets, braces, quotes) yields a value that is not a float
    if len(values) != len(texts) or set(map(type, values)) != {float}:
        return None
    floats: list[float] = values
    return floats
