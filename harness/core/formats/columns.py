"""Text split into columns a whole block at a time (the fast path of the TREC and BEIR
readers), and the labels, scores and ranks read from a column of texts."""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Any, Sequence

from harness.core.fast_json import decimal_floats
from harness.core.formats.base import (_OTHER_SPACE, EXACT_INTEGER, RANK_DIGITS, RELEVANCE_MAX,
                                       RELEVANCE_MIN, split_fields)

_RANK_BOUND = 10 ** RANK_DIGITS

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


def _scores(values: Sequence[Any], texts: bool = False) -> list[float] | None:
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
    rows = list(map(str.split if _OTHER_SPACE.search(text) is None else split_fields, lines))
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
