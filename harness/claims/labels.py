"""Labels: one person's graded judgement of one (query, document) pair.

A labels file is JSONL, one label per line::

    {"query_id": "q1", "doc_id": "d7", "label": 2, "rater": "ana", "at": "2026-12-07T09:30:00Z",
     "scale": "0-3"}

on the four-point scale of the TREC Deep Learning track (Craswell et al., TREC 2019):
0 not relevant, 1 related, 2 relevant, 3 highly relevant.  A person may change their mind:
their later label of the same pair replaces the earlier one (by ``at``, then by line), which
is how the Judge page's undo is written.  A skipped pair has no label.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Sequence

from harness.core.canonical import canonical_lines
from harness.core.formats import FormatError, read_jsonl, require_field

SCALE = "0-3"
#: the grades and what each means, as the Judge page shows them
GRADES: dict[int, str] = {0: "not relevant", 1: "related", 2: "relevant", 3: "highly relevant"}
#: the longest rater name accepted (a login identity or a chosen name)
MAX_RATER = 200


@dataclass(frozen=True, order=True)
class Label:
    """One label.  Ordered (and so written) by pair, then rater, then time."""

    query_id: str
    doc_id: str
    rater: str
    at: str  #: ISO 8601 UTC time, e.g. 2026-12-07T09:30:00Z
    label: int

    def to_dict(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "doc_id": self.doc_id, "label": self.label,
                "rater": self.rater, "at": self.at, "scale": SCALE}


def check_time(text: object, path: str | Path, line: int | None, field: str = "at") -> str:
    """``text`` if it is an ISO 8601 time with a zone; else a located error."""
    if not isinstance(text, str):
        raise FormatError(path, line, field, f"expected an ISO 8601 time, got {text!r}")
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise FormatError(path, line, field, f"not an ISO 8601 time: {text!r}") from None
    if parsed.tzinfo is None:
        raise FormatError(path, line, field, f"{text!r} has no time zone (write it in UTC, "
                          "ending in Z)")
    return text


def parse_label(obj: Any, path: str | Path, line: int | None, where: str = "") -> Label:
    """One label object, checked; errors name ``path``, ``line`` and the field (prefixed by
    ``where``, e.g. ``labels[3].`` for a row of a qrels version)."""
    try:
        return _parse_label(obj, path, line)
    except FormatError as exc:
        if not where:
            raise
        field = where + exc.field if exc.field else where.rstrip(".")
        raise FormatError(path, line, field, exc.message) from None


def _parse_label(obj: Any, path: str | Path, line: int | None) -> Label:
    if not isinstance(obj, dict):
        raise FormatError(path, line, None, f"expected a label object, got {obj!r:.60}")
    query_id = plain_id(obj, "query_id", path, line)
    doc_id = plain_id(obj, "doc_id", path, line)
    rater = check_rater(require_field(obj, "rater", path, line), path, line)
    value = obj.get("label")
    if type(value) is not int or value not in GRADES:
        raise FormatError(path, line, "label", f"expected one of {sorted(GRADES)} (scale "
                          f"{SCALE}), got {value!r}")
    scale = obj.get("scale", SCALE)
    if scale != SCALE:
        raise FormatError(path, line, "scale", f"expected {SCALE!r}, got {scale!r}")
    return Label(query_id, doc_id, rater, check_time(obj.get("at"), path, line), value)


def check_rater(rater: str, path: str | Path, line: int | None) -> str:
    """``rater`` if it is a usable name (printable, no outer spaces, at most
    :data:`MAX_RATER` characters); else a located error."""
    if len(rater) > MAX_RATER or not rater.isprintable() or rater != rater.strip():
        raise FormatError(path, line, "rater", f"not a usable name: {rater[:60]!r}")
    return rater


def now() -> str:
    """The current UTC time as a label records it (microseconds: an undo a moment later
    is still later)."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def plain_id(obj: dict[str, Any], name: str, path: str | Path, line: int | None) -> str:
    """A query or document id: no whitespace, which TREC qrels could not hold."""
    value = require_field(obj, name, path, line)
    if any(c.isspace() for c in value) or not value.isprintable():
        raise FormatError(path, line, name, f"{value[:60]!r} holds whitespace or an "
                          "unprintable character: TREC qrels cannot hold it")
    return value


def read_labels(paths: Iterable[str | Path]) -> list[Label]:
    """Every label in ``paths``, checked; each line's errors name its file, line and field."""
    found: list[Label] = []
    for path in paths:
        found.extend(parse_label(obj, path, line) for line, obj in read_jsonl(path))
    return found


def latest(labels: Sequence[Label]) -> list[Label]:
    """Each rater's last word on each pair (a later label replaces an earlier one), sorted."""
    last: dict[tuple[str, str, str], Label] = {}
    for item in labels:  # in reading order: at equal times the later line wins
        key = (item.query_id, item.doc_id, item.rater)
        held = last.get(key)
        if held is None or _when(item.at) >= _when(held.at):
            last[key] = item
    return sorted(last.values())


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def labels_text(labels: Sequence[Label]) -> str:
    """Labels as a JSONL file, in order."""
    return canonical_lines([item.to_dict() for item in sorted(labels)])
