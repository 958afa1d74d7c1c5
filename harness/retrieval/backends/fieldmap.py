"""Where a system's response holds its ranking: ``--field-map hits=PATH,doc_id=PATH,score=PATH``.

A path is dotted keys with ``[*]`` over a list and ``[N]`` for one element, e.g.
``hits=hits.hits[*],doc_id=_id,score=_score`` for an OpenSearch ``_search`` response.
``hits`` is applied to the whole response and must yield the hit objects in the system's
order; ``doc_id`` and ``score`` are applied to each hit.  ``score`` may be left out: the
system's order then stands for the score (``n - rank``).

Every problem is a :class:`ResponseError` naming the query, the path and what was wrong: a
missing field, a doc id that is not a string or repeated in one response, a score that is not
a finite number.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

DEFAULT_FIELD_MAP = "hits=hits[*],doc_id=doc_id,score=score"
KEYS = ("hits", "doc_id", "score")
_STEP = re.compile(r"([^.\[\]]+)|\[(\*|\d+)\]|(\.)")


class ResponseError(ValueError):
    """A response the field map cannot read; the message names the query and the path."""


def decode_json(data: bytes | str, query_id: str, what: str):
    """``data`` parsed as JSON, or a :class:`ResponseError` naming the query (not JSON, not
    UTF-8, nested deeper than the parser's recursion limit, an integer of more digits than
    Python converts)."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ResponseError(f"query {query_id}: {what} is JSON nested too deeply to "
                            "read") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, the int digit limit
        start = data[:60] if isinstance(data, str) else data[:60].decode("utf-8", "replace")
        raise ResponseError(f"query {query_id}: {what} is not JSON ({exc}; starts "
                            f"{start.strip()!r})") from None


def finite_score(value) -> float | None:
    """``value`` as a finite float, or None (not a number, a bool, NaN, infinite, or an
    integer too large for a float such as 10**400)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def parse_path(text: str, flag: str = "--field-map") -> tuple[object, ...]:
    """``'hits.hits[*]'`` -> ``('hits', 'hits', '*')`` (ints for ``[N]``)."""
    steps: list[object] = []
    pos = 0
    if not text:
        raise ValueError(f"{flag}: an empty path")
    expect_key = True
    while pos < len(text):
        m = _STEP.match(text, pos)
        if m is None:
            raise ValueError(f"{flag}: cannot read path {text!r} at character {pos + 1}")
        key, index, dot = m.groups()
        if dot is not None:
            if expect_key:
                raise ValueError(f"{flag}: path {text!r} has an empty key at character {pos + 1}")
            expect_key = True
        elif key is not None:
            if not expect_key:
                raise ValueError(f"{flag}: path {text!r} needs a '.' before {key!r}")
            steps.append(key)
            expect_key = False
        else:
            steps.append("*" if index == "*" else int(index))
            expect_key = False
        pos = m.end()
    if expect_key:
        raise ValueError(f"{flag}: path {text!r} ends with '.'")
    return tuple(steps)


def render_path(steps) -> str:
    out = ""
    for step in steps:
        if isinstance(step, int) or step == "*":
            out += f"[{step}]"
        else:
            out += ("." if out else "") + str(step)
    return out


def _walk(value, steps, where: str, query_id: str) -> list[tuple[str, object]]:
    """Every ``(location, value)`` the path reaches (``[*]`` fans out)."""
    found = [(where, value)]
    for step in steps:
        nxt = []
        for loc, v in found:
            if step == "*":
                if not isinstance(v, list):
                    raise ResponseError(f"query {query_id}: response field {loc or '(root)'!r} "
                                        f"is {type(v).__name__}, not a list")
                nxt.extend((f"{loc}[{i}]", item) for i, item in enumerate(v))
            elif isinstance(step, int):
                if not isinstance(v, list) or step >= len(v):
                    raise ResponseError(f"query {query_id}: response field {loc}[{step}] is "
                                        "missing")
                nxt.append((f"{loc}[{step}]", v[step]))
            else:
                here = f"{loc}.{step}" if loc else step
                if not isinstance(v, dict) or step not in v:
                    raise ResponseError(f"query {query_id}: response field {here!r} is missing")
                nxt.append((here, v[step]))
        found = nxt
    return found


@dataclass(frozen=True)
class FieldMap:
    hits: tuple[object, ...]
    doc_id: tuple[object, ...]
    score: tuple[object, ...] | None

    @classmethod
    def parse(cls, text: str | None, flag: str = "--field-map") -> "FieldMap":
        parts: dict[str, tuple[object, ...]] = {}
        for item in (text or DEFAULT_FIELD_MAP).split(","):
            name, eq, path = item.strip().partition("=")
            if not eq:
                raise ValueError(f"{flag}: {item!r} is not NAME=PATH (names: {', '.join(KEYS)})")
            if name not in KEYS:
                raise ValueError(f"{flag}: unknown name {name!r}; expected {', '.join(KEYS)}")
            if name in parts:
                raise ValueError(f"{flag}: {name} given twice")
            parts[name] = parse_path(path.strip(), flag)
        for name in ("hits", "doc_id"):
            if name not in parts:
                raise ValueError(f"{flag}: {name}=PATH is required")
        if "*" in parts["doc_id"] or "*" in parts.get("score", ()):
            raise ValueError(f"{flag}: doc_id and score must each name one value per hit "
                             "(no [*])")
        return cls(parts["hits"], parts["doc_id"], parts.get("score"))

    def describe(self) -> dict:
        return {"hits": render_path(self.hits), "doc_id": render_path(self.doc_id),
                "score": None if self.score is None else render_path(self.score)}

    def ranking(self, response, query_id: str) -> list[tuple[str, float]]:
        """``[(doc_id, score), ...]`` in the system's order; :class:`ResponseError` else."""
        hits = _walk(response, self.hits, "", query_id)
        if len(hits) == 1 and isinstance(hits[0][1], list) and "*" not in self.hits:
            loc, items = hits[0]
            hits = [(f"{loc}[{i}]", item) for i, item in enumerate(items)]
        out: list[tuple[str, float]] = []
        seen: dict[str, str] = {}
        for rank, (loc, hit) in enumerate(hits):
            ((id_loc, doc_id),) = _walk(hit, self.doc_id, loc, query_id)
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or not doc_id:
                raise ResponseError(f"query {query_id}: response field {id_loc!r} is "
                                    f"{doc_id!r}, not a document id string")
            if doc_id in seen:
                raise ResponseError(f"query {query_id}: document {doc_id!r} is returned twice "
                                    f"({seen[doc_id]!r} and {id_loc!r}); a ranking lists each "
                                    "document once")
            seen[doc_id] = id_loc
            if self.score is None:
                value = float(len(hits) - rank)
            else:
                ((score_loc, raw),) = _walk(hit, self.score, loc, query_id)
                number = finite_score(raw)
                if number is None:
                    shown = repr(raw) if len(repr(raw)) <= 40 else f"{repr(raw)[:37]}..."
                    raise ResponseError(f"query {query_id}: response field {score_loc!r} is "
                                        f"{shown}, not a finite number")
                value = number
            out.append((doc_id, value))
        return out
