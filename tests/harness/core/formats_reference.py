"""The readers of ``harness.core.formats`` as they were before the fast path: the oracle
the fast readers must agree with (same result, or the same error text, file, line and
field).  Frozen here on purpose; do not "fix" it to follow the product.  Only the checks
added since (label range, integer scores beyond 2^53, long ranks, unreadable JSON) may
make the product refuse a file this accepts, or locate what this crashed on; and fields are
split on ASCII whitespace alone, as trec_eval splits them (:func:`_fields`), so an id may hold
U+00A0, \x1c or any other space (it was split there, and the line refused as too long)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from harness.core.records import Qrel, ScoredDoc


_ASCII = " \t\n\r\x0b\x0c"  # C's isspace: what trec_eval splits a line on


def _fields(text: str) -> list[str]:
    return [field for field in re.split("[" + _ASCII + "]", text) if field]


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


def _lines(path, space: str | None = None) -> Iterator[tuple[int, str]]:
    """Non-blank lines with 1-based numbers; refuses a file with none, or bytes that are
    not UTF-8 (naming the line)."""
    path = Path(path)
    if not path.is_file():
        raise FormatError(path, None, None, "no such file")
    seen = False
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise FormatError(path, number, None, f"not UTF-8 text ({exc.reason})") from None
            if number == 1:
                line = line.removeprefix("\ufeff")  # a byte-order mark is not data
            if not line.strip(space):  # TREC and BEIR: ASCII space; JSONL: any
                continue
            seen = True
            yield number, line
    if not seen:
        raise FormatError(path, None, None, "empty file: no records")


_INTEGER = re.compile(r"[+-]?[0-9]+")


def parse_relevance(text: str, path, line: int, field: str = "relevance") -> int:
    """An integer relevance label; ``1.0``, ``1_0`` or ``x`` is refused, never rounded."""
    if not isinstance(text, str) or not _INTEGER.fullmatch(text):
        raise FormatError(path, line, field, f"relevance must be an integer, got {text!r}")
    return int(text)


def parse_score(text, path, line: int | None, field: str = "score") -> float:
    """A finite float score; NaN, infinities and booleans are refused."""
    if isinstance(text, bool) or (isinstance(text, str) and "_" in text):
        raise FormatError(path, line, field, f"score must be a number, got {text!r}")
    try:
        value = float(text)
    except (TypeError, ValueError):
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
    negative = sum(1 for docs in judgements.values() for r in docs.values() if r < 0)
    return QrelsFile(str(path), judgements, negative)


# --------------------------------------------------------------------------- qrels

BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")
_HEADER_TEXT = "\t".join(BEIR_QRELS_HEADER)


def read_trec_qrels(path) -> QrelsFile:
    """TREC qrels: ``query_id iteration doc_id relevance`` per line."""
    judgements: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in _lines(path, _ASCII):
        parts = _fields(text)
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
    return _finish_qrels(path, judgements)


def read_beir_qrels(path) -> QrelsFile:
    """BEIR qrels TSV: a header row ``query-id corpus-id score`` then one judgement per row."""
    judgements: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    header_seen = False
    for line, text in _lines(path, _ASCII):
        parts = text.split("\t")
        if not header_seen:
            if tuple(p.strip(_ASCII) for p in parts) != BEIR_QRELS_HEADER:
                raise FormatError(
                    path, line, "header",
                    f"expected header {_HEADER_TEXT!r}, got {text!r}",
                )
            header_seen = True
            continue
        if len(parts) != 3:
            raise FormatError(path, line, "columns",
                              f"expected 3 tab-separated columns, got {len(parts)}")
        query_id, doc_id, rel = (p.strip(_ASCII) for p in parts)
        if not query_id:
            raise FormatError(path, line, "query-id", "empty query id")
        if not doc_id:
            raise FormatError(path, line, "corpus-id", "empty document id")
        _add_judgement(judgements, seen, path, line, query_id, doc_id,
                       parse_relevance(rel, path, line, "score"))
    if not judgements:
        raise FormatError(path, None, None, "empty file: a header but no judgements")
    return _finish_qrels(path, judgements)


def read_jsonl(path) -> Iterator[tuple[int, dict]]:
    """``(line, object)`` per line of a JSONL file; a line that is not an object is refused."""
    for line, text in _lines(path):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise FormatError(path, line, None, f"not valid JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise FormatError(path, line, None, f"expected a JSON object, got {type(obj).__name__}")
        yield line, obj


def read_json_object(path) -> dict:
    """A JSON file holding one object, or a :class:`FormatError` naming the file and line.

    ``NaN`` / ``Infinity`` parse (as Python does) so that the document's validator can
    refuse them naming the field they sit in.
    """
    path = Path(path)
    if not path.is_file():
        raise FormatError(path, None, None, "no such file")
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise FormatError(path, exc.lineno, None, f"not valid JSON: {exc.msg}") from None
    except UnicodeDecodeError:
        raise FormatError(path, None, None, "not UTF-8 text") from None
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


def read_jsonl_qrels(path) -> QrelsFile:
    """JSONL qrels: ``{"query_id": .., "doc_id": .., "relevance": int}`` per line."""
    judgements: dict[str, dict[str, int]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, obj in read_jsonl(path):
        query_id = require_field(obj, "query_id", path, line)
        doc_id = require_field(obj, "doc_id", path, line)
        rel = require_field(obj, "relevance", path, line, kind=None)
        if isinstance(rel, bool) or not isinstance(rel, int):
            raise FormatError(path, line, "relevance", f"relevance must be an integer, got {rel!r}")
        _add_judgement(judgements, seen, path, line, query_id, doc_id, rel)
    return _finish_qrels(path, judgements)


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


def read_trec_run(path) -> dict[str, list[ScoredDoc]]:
    """TREC run: ``query_id Q0 doc_id rank score tag`` per line.

    Each query's list is in rank-column order (file order among equal ranks): that is the
    order ``preserve_order`` scores.  trec_eval itself ignores the rank column, and so does
    the default scoring, which orders by score.
    """
    run: dict[str, list[ScoredDoc]] = {}
    ranks: dict[tuple[str, str], int] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in _lines(path, _ASCII):
        parts = _fields(text)
        if len(parts) != 6:
            raise FormatError(
                path, line, "columns",
                f"expected 6 columns 'query_id Q0 doc_id rank score tag', got {len(parts)}",
            )
        query_id, _q0, doc_id, rank, score, _tag = parts
        if not _INTEGER.fullmatch(rank):
            raise FormatError(path, line, "rank", f"rank must be an integer, got {rank!r}")
        _add_scored(run, seen, path, line, query_id, doc_id, parse_score(score, path, line))
        ranks[(query_id, doc_id)] = int(rank)
    for query_id, docs in run.items():
        docs.sort(key=lambda d: ranks[(query_id, d.doc_id)])  # stable: file order breaks ties
    return run


def read_jsonl_run(path) -> dict[str, list[ScoredDoc]]:
    """JSONL run: ``{"query_id": .., "doc_id": .., "score": float}`` per line."""
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
