"""TREC qrels (``query_id iteration doc_id relevance``) and TREC runs
(``query_id Q0 doc_id rank score tag``)."""

from __future__ import annotations

from typing import Literal, overload

from harness.core.formats.base import (_INTEGER, ASCII_SPACE, RANK_DIGITS, FilePath, FormatError, Judgements,
                                       QrelsFile, _add_judgement, _bounded_int, _judgements, _short,
                                       _text_blocks, _whole_qrels, gc_paused, parse_relevance,
                                       parse_score, read_lines, split_fields)
from harness.core.formats.beir import BEIR_QRELS_HEADER
from harness.core.formats.columns import _columns, _labels, _scores
from harness.core.formats.runs import _add_scored, _RunBlocks
from harness.core.records import RankedDocs, ScoredDoc

def _fast_trec_qrels(text: str) -> Judgements | None:
    columns = _columns(text, 4)
    if columns is None:
        return None
    query_ids, _, doc_ids, texts = columns
    labels = _labels(texts)
    return None if labels is None else _judgements(query_ids, doc_ids, labels)


def read_trec_qrels(path: FilePath) -> QrelsFile:
    """TREC qrels: ``query_id iteration doc_id relevance`` per line."""
    return _whole_qrels(path, _fast_trec_qrels, _located_trec_qrels)


def _located_trec_qrels(path: FilePath) -> Judgements:
    judgements: Judgements = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in read_lines(path):
        parts = split_fields(text)
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


@overload
def _fast_trec_run(path: FilePath, records: Literal[True] = ...) -> dict[str, list[ScoredDoc]] | None:
    ...


@overload
def _fast_trec_run(path: FilePath, records: Literal[False]) -> dict[str, RankedDocs] | None:
    ...


def _fast_trec_run(path: FilePath, records: bool = True
                   ) -> dict[str, list[ScoredDoc]] | dict[str, RankedDocs] | None:
    """The lists of a TREC run (:meth:`_RunBlocks.lists`) read a block at a time
    (:func:`_text_blocks`), or None where the line-by-line reader must look."""
    run = _RunBlocks(records)
    for text in _text_blocks(path):
        if text is None:
            return None
        if not text.strip(ASCII_SPACE):
            continue  # blank lines only
        columns = _columns(text, 6)
        scores = None if columns is None else _scores(columns[4], texts=True)
        if columns is None or scores is None:
            return None
        run.add(columns[0], columns[2], scores, columns[3])
        if run.refused:
            return None
    return run.lists()


def read_trec_run(path: FilePath) -> dict[str, list[ScoredDoc]]:
    """TREC run: ``query_id Q0 doc_id rank score tag`` per line.

    Each query's list is in rank-column order (file order among equal ranks): that is the
    order ``preserve_order`` scores.  trec_eval itself ignores the rank column, and so does
    the default scoring, which orders by score.
    """
    with gc_paused():
        run = _fast_trec_run(path)
        return _located_trec_run(path) if run is None else run


def _located_trec_run(path: FilePath) -> dict[str, list[ScoredDoc]]:
    run: dict[str, list[ScoredDoc]] = {}
    ranks: dict[tuple[str, str], int] = {}
    seen: dict[tuple[str, str], int] = {}
    for line, text in read_lines(path):
        parts = split_fields(text)
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
