"""JSONL qrels (``{"query_id", "doc_id", "relevance"}`` per line) and JSONL runs
(``{"query_id", "doc_id", "score"}`` per line)."""

from __future__ import annotations

from typing import Any, Literal, overload

from harness.core.formats.base import (RELEVANCE_MAX, RELEVANCE_MIN, FilePath, FormatError,
                                       Judgements, QrelsFile, _add_judgement, _finish_qrels,
                                       _in_range, _judgements, gc_paused, parse_score)
from harness.core.formats.columns import _scores
from harness.core.formats.json_files import (_block_fields, _decoded_blocks, _fast_jsonl,
                                             _orjson_blocks, read_jsonl, require_field)
from harness.core.formats.runs import _add_scored, _RunBlocks
from harness.core.records import RankedDocs, ScoredDoc


def read_jsonl_qrels(path: FilePath) -> QrelsFile:
    """JSONL qrels: ``{"query_id": .., "doc_id": .., "relevance": int}`` per line."""
    with gc_paused():
        judgements: Judgements | None = None
        columns = _fast_jsonl(path, ("query_id", "doc_id", "relevance"))
        if columns is not None and set(map(type, columns[2])) == {int}:
            labels = columns[2]
            if min(labels) >= RELEVANCE_MIN and max(labels) <= RELEVANCE_MAX:
                judgements = _judgements(columns[0], columns[1], labels)
        if judgements is None:
            judgements = _located_jsonl_qrels(path)
        return _finish_qrels(path, judgements)


def _located_jsonl_qrels(path: FilePath) -> Judgements:
    judgements: Judgements = {}
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


@overload
def _fast_jsonl_run(path: FilePath, records: Literal[True] = ...) -> dict[str, list[ScoredDoc]] | None:
    ...


@overload
def _fast_jsonl_run(path: FilePath, records: Literal[False]) -> dict[str, RankedDocs] | None:
    ...


def _fast_jsonl_run(path: FilePath, records: bool = True
                    ) -> dict[str, list[ScoredDoc]] | dict[str, RankedDocs] | None:
    """The lists of a JSONL run (:meth:`_RunBlocks.lists`) read a block at a time, or
    None where the line-by-line reader must look.  orjson reads it first
    (:mod:`harness.core.fast_json`), the standard decoder where orjson cannot."""
    for blocks in (_orjson_blocks(path), _decoded_blocks(path)):
        run = _RunBlocks(records)
        for objects in blocks:
            if objects is None:  # not read: by the standard decoder next, if by orjson
                break
            columns = _block_fields(objects, ("query_id", "doc_id", "score"))
            scores = None if columns is None else _json_scores(columns[2])
            if columns is None or scores is None:
                return None
            run.add(columns[0], columns[1], scores)
            if run.refused:
                return None
        else:
            return run.lists()
    return None


def _json_scores(values: list[Any]) -> list[float] | None:
    """:func:`_scores` of JSON numbers; None for any other value."""
    return _scores(values) if set(map(type, values)) <= {float, int} else None


def read_jsonl_run(path: FilePath) -> dict[str, list[ScoredDoc]]:
    """JSONL run: ``{"query_id": .., "doc_id": .., "score": float}`` per line."""
    with gc_paused():
        run = _fast_jsonl_run(path)
        return _located_jsonl_run(path) if run is None else run


def _located_jsonl_run(path: FilePath) -> dict[str, list[ScoredDoc]]:
    run: dict[str, list[ScoredDoc]] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, obj in read_jsonl(path):
        query_id = require_field(obj, "query_id", path, line)
        doc_id = require_field(obj, "doc_id", path, line)
        score = parse_score(require_field(obj, "score", path, line, kind=None), path, line)
        _add_scored(run, seen, path, line, query_id, doc_id, score)
    return run
