"""Runs, qrels and query classes in every form the Python API accepts, read into what the
scorer takes, with errors located like the file readers'.

Accepted forms (each adapter is duck-typed: pandas, ranx and ir_measures are never imported
here):

* a path: TREC, BEIR qrels ``.tsv`` or ``.jsonl``, read by :mod:`harness.core.formats`
  (the command line's readers) and identified by the file's sha256;
* a dict of dicts (``{query_id: {doc_id: score}}``; a run's inner value may also be a
  list of ``(doc_id, score)`` pairs or ScoredDocs, in rank order);
* a DataFrame with columns ``query_id, doc_id, score`` (or ``relevance``; a ``rank``
  column, when present, orders a run's lists as the TREC reader does);
* anything with a ``to_dict()`` giving a dict of dicts (``ranx.Run``, ``ranx.Qrels``);
* an iterable of records with ``query_id, doc_id, score`` (or ``relevance``) attributes
  (ir_measures ``ScoredDoc`` / ``Qrel``, :mod:`harness.core.records`).

An input that is not a file is identified by the sha256 of its JSONL form
(:func:`run_jsonl_text`, :func:`qrels_jsonl_text`): the text a ``.jsonl`` file holding the
same records would have, so ``harness score`` on that file claims the same checksum.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from harness.core.canonical import sha256_file, sha256_text
from harness.core.formats import FormatError, read_lines, read_qrels, read_run
from harness.core.records import ScoredDoc

#: the columns a DataFrame input needs, by what it holds
RUN_COLUMNS = ("query_id", "doc_id", "score")
QRELS_COLUMNS = ("query_id", "doc_id", "relevance")
CLASS_COLUMNS = ("query_id", "query_class")
#: names other tools give these columns (said in the error, never renamed silently)
OTHER_NAMES = {"query_id": ("qid", "query-id"), "doc_id": ("docno", "docid", "corpus-id"),
               "relevance": ("label", "rel"), "query_class": ("class",)}

FILE_SOURCE = "run file"
MEMORY_SOURCE = "in-memory run"


class RowError(FormatError):
    """Bad input in one row of a table or record stream:
    ``LABEL row N (index X): field 'f': what is wrong`` (N counts from 0, as ``iloc``)."""

    def __init__(self, label: str, row: int, index: Any, field: str | None, message: str):
        where = f"{label} row {row}" + ("" if index is None or index == row else f" (index {index!r})")
        super().__init__(where, None, field, message)
        self.path, self.line = label, row


@dataclass(frozen=True)
class QrelsInput:
    """Judgements ``{query_id: {doc_id: relevance}}`` read from any accepted form."""

    judgements: dict[str, dict[str, int]]
    sha256: str
    #: names the input in messages (the path, or e.g. "qrels DataFrame")
    label: str
    #: the file's stem when the input is a file (the default corpus name), else None
    stem: str | None = None


@dataclass(frozen=True)
class RunInput:
    """A run ``{query_id: [ScoredDoc, ...]}`` (lists in rank order) from any accepted form."""

    run: dict[str, list[ScoredDoc]]
    sha256: str
    label: str
    #: ``retrieval.source`` of the claim: "run file" or "in-memory run"
    source: str
    stem: str | None = None


# --------------------------------------------------------------------------- checks


def _id(value, where, field: str) -> str:
    """A query or document id: a non-empty string (an integer is read as its digits, as
    the JSONL reader does)."""
    if isinstance(value, str):
        if not value:
            where(field, "empty")
        return value
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        return str(int(value))
    where(field, f"expected a string, got {value!r}")


def _score(value, where) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        where("score", f"score must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        where("score", f"score must be finite, got {value!r}")
    return value


def _relevance(value, where) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        where("relevance", f"relevance must be an integer, got {value!r}")
    return int(value)


def _at(label: str, row: int | None = None, index=None, query_id=None, doc_id=None):
    """A function raising the located error for one record."""
    def fail(field, message):
        if row is not None:
            raise RowError(label, row, index, field, message)
        keys = ", ".join(f"{k}={v!r}" for k, v in (("query_id", query_id), ("doc_id", doc_id))
                         if v is not None)
        raise FormatError(label, None, field, f"({keys}) {message}" if keys else message)
    return fail


# --------------------------------------------------------------------------- JSONL forms


def _line(obj: Mapping) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False) + "\n"


def run_jsonl_text(run: Mapping[str, list[ScoredDoc]]) -> str:
    """The JSONL form of a run: queries sorted, each list in its order, scores exact
    (``repr``).  ``harness score --run`` reads it back as the same run."""
    return "".join(_line({"query_id": q, "doc_id": d.doc_id, "score": d.score})
                   for q in sorted(run) for d in run[q])


def qrels_jsonl_text(judgements: Mapping[str, Mapping[str, int]]) -> str:
    """The JSONL form of qrels, sorted by (query_id, doc_id)."""
    return "".join(_line({"query_id": q, "doc_id": d, "relevance": judgements[q][d]})
                   for q in sorted(judgements) for d in sorted(judgements[q]))


# --------------------------------------------------------------------------- records


def _kind(obj) -> str:
    """``ranx.Run``, ``pandas.DataFrame``...: what an input is, for its label."""
    kind = type(obj)
    return f"{kind.__module__.split('.')[0]}.{kind.__name__}"


def _is_path(obj) -> bool:
    return isinstance(obj, (str, os.PathLike))


def _is_frame(obj) -> bool:
    return hasattr(obj, "columns") and hasattr(obj, "iloc") and hasattr(obj, "index")


def _frame_records(frame, label: str, value_column: str, optional=()):
    """``(row, index, {column: value})`` per row of a DataFrame, after checking its columns."""
    columns = [str(c) for c in frame.columns]
    for name in ("query_id", "doc_id", value_column):
        if name not in columns:
            others = [o for o in OTHER_NAMES.get(name, ()) if o in columns]
            hint = f" (found {others[0]!r}: rename it to {name!r})" if others else ""
            expected = ["query_id", "doc_id", value_column]
            raise FormatError(label, None, name, f"missing column{hint}; the columns are "
                                                 f"{columns}, expected {expected}")
    wanted = ["query_id", "doc_id", value_column, *[c for c in optional if c in columns]]
    data = {c: frame[c].tolist() for c in wanted}
    index = frame.index.tolist()
    for row in range(len(index)):
        yield row, index[row], {c: data[c][row] for c in wanted}


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _from_records(records, label: str, value_field: str, ordered_by_rank: bool = False):
    """``{query_id: {doc_id: (value, rank)}}`` from ``(row, index, fields)`` triples,
    refusing missing fields, bad values and duplicate pairs (naming the first row)."""
    out: dict[str, dict[str, Any]] = {}
    first: dict[tuple[str, str], int] = {}
    for row, index, fields in records:
        fail = _at(label, row, index)
        for name in ("query_id", "doc_id"):
            if _missing(fields.get(name)):
                fail(name, "missing")
        if fields.get(value_field) is None:  # NaN is refused below, as not finite
            fail(value_field, "missing")
        query_id = _id(fields["query_id"], fail, "query_id")
        doc_id = _id(fields["doc_id"], fail, "doc_id")
        value = (_score if value_field == "score" else _relevance)(fields[value_field], fail)
        rank = None
        if ordered_by_rank and "rank" in fields:
            rank = fields["rank"]
            if isinstance(rank, bool) or not isinstance(rank, numbers.Integral):
                fail("rank", f"rank must be an integer, got {rank!r}")
        key = (query_id, doc_id)
        if key in first:
            fail("doc_id", f"duplicate (query_id={query_id!r}, doc_id={doc_id!r}); first seen "
                           f"on row {first[key]}")
        first[key] = row
        out.setdefault(query_id, {})[doc_id] = (value, rank)
    if not out:
        raise FormatError(label, None, None, "empty: no records")
    return out


def _attribute_records(items, value_field: str):
    for row, item in enumerate(items):
        yield row, None, {name: getattr(item, name, None)
                          for name in ("query_id", "doc_id", value_field, "rank")}


def _records_like(obj) -> bool:
    return hasattr(obj, "__iter__") and not isinstance(obj, (str, bytes, Mapping))


# --------------------------------------------------------------------------- qrels


def _qrels_from_mapping(qrels: Mapping, label: str) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for q, docs in qrels.items():
        query_id = _id(q, _at(label), "query_id")
        if not isinstance(docs, Mapping):
            raise FormatError(label, None, None, f"(query_id={query_id!r}) expected a dict "
                                                 f"{{doc_id: relevance}}, got {type(docs).__name__}")
        judged = {}
        for d, rel in docs.items():
            fail = _at(label, query_id=query_id, doc_id=d)
            doc_id = _id(d, fail, "doc_id")
            if doc_id in judged:
                fail("doc_id", "duplicate doc_id")
            judged[doc_id] = _relevance(rel, fail)
        if query_id in out:
            raise FormatError(label, None, "query_id", f"duplicate query_id {query_id!r}")
        if judged:
            out[query_id] = judged
    if not out:
        raise FormatError(label, None, None, "empty: no judgements")
    return out


def read_qrels_input(qrels, label: str = "qrels") -> QrelsInput:
    """Qrels in any accepted form (module docstring)."""
    if _is_path(qrels):
        return QrelsInput(read_qrels(qrels).judgements, sha256_file(qrels), str(qrels),
                          Path(qrels).stem)
    if isinstance(qrels, Mapping):
        judgements = _qrels_from_mapping(qrels, f"{label} dict")
    elif _is_frame(qrels):
        name = f"{label} DataFrame"
        found = _from_records(_frame_records(qrels, name, "relevance"), name, "relevance")
        judgements = {q: {d: v for d, (v, _) in docs.items()} for q, docs in found.items()}
    elif callable(getattr(qrels, "to_dict", None)):  # ranx.Qrels
        judgements = _qrels_from_mapping(qrels.to_dict(), f"{label} {_kind(qrels)}")
    elif _records_like(qrels):  # ir_measures Qrel, harness Qrel
        name = f"{label} records"
        found = _from_records(_attribute_records(qrels, "relevance"), name, "relevance")
        judgements = {q: {d: v for d, (v, _) in docs.items()} for q, docs in found.items()}
    else:
        raise TypeError(f"{label}: expected a path, a dict {{query_id: {{doc_id: relevance}}}}, "
                        f"a DataFrame with columns {list(QRELS_COLUMNS)}, a ranx.Qrels or Qrel "
                        f"records; got {type(qrels).__name__}")
    return QrelsInput(judgements, sha256_text(qrels_jsonl_text(judgements)),
                      label if isinstance(qrels, Mapping) else f"{label} ({_kind(qrels)})")


# --------------------------------------------------------------------------- runs


def _pairs(docs, fail):
    if isinstance(docs, Mapping):
        return list(docs.items())
    out = []
    for doc in docs:
        if isinstance(doc, tuple) and len(doc) == 3 and hasattr(doc, "doc_id"):
            out.append((doc.doc_id, doc.score))
            continue
        try:
            doc_id, value = doc
        except (TypeError, ValueError):
            fail(None, f"expected (doc_id, score), got {doc!r}")
        out.append((doc_id, value))
    return out


def _run_from_mapping(run: Mapping, label: str) -> dict[str, list[ScoredDoc]]:
    out: dict[str, list[ScoredDoc]] = {}
    for q, docs in run.items():
        query_id = _id(q, _at(label), "query_id")
        if query_id in out:
            raise FormatError(label, None, "query_id", f"duplicate query_id {query_id!r}")
        if isinstance(docs, (str, bytes)) or not hasattr(docs, "__iter__"):
            raise FormatError(label, None, None, f"(query_id={query_id!r}) expected a dict "
                                                 f"{{doc_id: score}} or a list, got {type(docs).__name__}")
        ranked, seen = [], set()
        for d, value in _pairs(docs, _at(label, query_id=query_id)):
            fail = _at(label, query_id=query_id, doc_id=d)
            doc_id = _id(d, fail, "doc_id")
            if doc_id in seen:
                fail("doc_id", "duplicate doc_id (a document cannot hold two ranks)")
            seen.add(doc_id)
            ranked.append(ScoredDoc(query_id, doc_id, _score(value, fail)))
        if ranked:  # a query with nothing retrieved is simply unanswered
            out[query_id] = ranked
    if not out:
        raise FormatError(label, None, None, "empty: no records")
    return out


def _run_from_records(found) -> dict[str, list[ScoredDoc]]:
    out = {}
    for q, docs in found.items():
        items = list(docs.items())
        if any(rank is not None for _, (_, rank) in items):  # stable: input order breaks ties
            items.sort(key=lambda item: item[1][1])
        out[q] = [ScoredDoc(q, d, score) for d, (score, _) in items]
    return out


def read_run_input(run, label: str = "run") -> RunInput:
    """A run in any accepted form (module docstring)."""
    if _is_path(run):
        return RunInput(read_run(run), sha256_file(run), str(run), FILE_SOURCE, Path(run).stem)
    if isinstance(run, Mapping):
        docs = _run_from_mapping(run, f"{label} dict")
    elif _is_frame(run):
        name = f"{label} DataFrame"
        docs = _run_from_records(_from_records(
            _frame_records(run, name, "score", optional=("rank",)), name, "score",
            ordered_by_rank=True))
    elif callable(getattr(run, "to_dict", None)):  # ranx.Run
        docs = _run_from_mapping(run.to_dict(), f"{label} {_kind(run)}")
    elif _records_like(run):  # ir_measures ScoredDoc, harness ScoredDoc
        name = f"{label} records"
        docs = _run_from_records(_from_records(_attribute_records(run, "score"), name, "score"))
    else:
        raise TypeError(f"{label}: expected a path, a dict {{query_id: {{doc_id: score}}}}, a "
                        f"DataFrame with columns {list(RUN_COLUMNS)}, a ranx.Run or ScoredDoc "
                        f"records; got {type(run).__name__}")
    return RunInput(docs, sha256_text(run_jsonl_text(docs)),
                    label if isinstance(run, Mapping) else f"{label} ({_kind(run)})",
                    MEMORY_SOURCE)


# --------------------------------------------------------------------------- query classes


def read_query_classes(path) -> dict[str, str]:
    """A TSV ``query_id<TAB>class`` per line (``harness score --query-classes``)."""
    classes = {}
    for line, text in read_lines(path):
        parts = text.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise FormatError(path, line, None, "expected 'query_id<TAB>class'")
        query_id, cls = parts[0].strip(), parts[1].strip()
        if query_id in classes:
            raise FormatError(path, line, "query_id", f"duplicate query id {query_id!r}")
        classes[query_id] = cls
    return classes


#: the id and text fields a JSONL queries file may use (BEIR ``_id``; ours ``query_id``)
QUERY_ID_FIELDS = ("query_id", "_id", "id")
QUERY_TEXT_FIELDS = ("text", "query")


def read_query_texts(path) -> dict[str, str]:
    """``{query_id: text}`` from ``harness score --queries``: a JSONL file (BEIR's
    ``queries.jsonl``, ``{"_id", "text"}``, or ``{"query_id", "text"}``) or a TSV
    ``query_id<TAB>text`` per line; a duplicate id or an empty text is refused, located."""
    from harness.core.formats import read_jsonl

    texts: dict[str, str] = {}
    if str(path).endswith(".jsonl"):
        for line, obj in read_jsonl(path):
            id_field = next((f for f in QUERY_ID_FIELDS if f in obj), None)
            text_field = next((f for f in QUERY_TEXT_FIELDS if f in obj), None)
            if id_field is None or text_field is None:
                missing = "/".join(QUERY_ID_FIELDS if id_field is None else QUERY_TEXT_FIELDS)
                raise FormatError(path, line, missing.split("/")[0], f"missing ({missing})")
            query_id, text = obj[id_field], obj[text_field]
            for field, value in ((id_field, query_id), (text_field, text)):
                if not isinstance(value, str) or not value.strip():
                    raise FormatError(path, line, field, "must be a non-empty string")
            if query_id in texts:
                raise FormatError(path, line, id_field, f"duplicate query id {query_id!r}")
            texts[query_id] = text
        return texts
    for line, row in read_lines(path):
        parts = row.split("\t", 1)
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise FormatError(path, line, None, "expected 'query_id<TAB>text'")
        query_id = parts[0].strip()
        if query_id in texts:
            raise FormatError(path, line, "query_id", f"duplicate query id {query_id!r}")
        texts[query_id] = parts[1].strip()
    return texts


def read_classes_input(classes, label: str = "query_classes") -> tuple[dict[str, str], str]:
    """``({query_id: class}, label)`` from a TSV path, a dict or a DataFrame with columns
    ``query_id, query_class``."""
    if _is_path(classes):
        return read_query_classes(classes), str(classes)
    if _is_frame(classes):
        name = f"{label} DataFrame"
        columns = [str(c) for c in classes.columns]
        for column in CLASS_COLUMNS:
            if column not in columns:
                raise FormatError(name, None, column, f"missing column; the columns are {columns}, "
                                                      f"expected {list(CLASS_COLUMNS)}")
        rows = zip(classes["query_id"].tolist(), classes["query_class"].tolist(),
                   classes.index.tolist())
        out = {}
        for row, (q, cls, index) in enumerate(rows):
            fail = _at(name, row, index)
            for field, value in (("query_id", q), ("query_class", cls)):
                if _missing(value):
                    fail(field, "missing")
            query_id = _id(q, fail, "query_id")
            if query_id in out:
                fail("query_id", f"duplicate query id {query_id!r}")
            out[query_id] = _id(cls, fail, "query_class")
        return out, name
    if isinstance(classes, Mapping):
        name = f"{label} dict"
        out = {}
        for q, cls in classes.items():
            fail = _at(name, query_id=q)
            out[_id(q, fail, "query_id")] = _id(cls, fail, "query_class")
        return out, name
    raise TypeError(f"{label}: expected a TSV path, a dict {{query_id: class}} or a DataFrame "
                    f"with columns {list(CLASS_COLUMNS)}; got {type(classes).__name__}")
