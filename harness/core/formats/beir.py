"""BEIR qrels TSV: a header row ``query-id corpus-id score`` then one judgement per row."""

from __future__ import annotations

from itertools import islice

from harness.core.formats.base import (ASCII_SPACE, FilePath, FormatError, Judgements, QrelsFile,
                                       _add_judgement, _judgements, _whole_qrels, parse_relevance,
                                       read_lines)
from harness.core.formats.columns import _ODD_SPACE, _labels, _plain_columns

BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")
_HEADER_TEXT = "\t".join(BEIR_QRELS_HEADER)


#: whitespace a BEIR field may not hold for its text to be split in one pass
_TSV_ODD_SPACE = (" ", *(c for c in _ODD_SPACE if c != "\t"))


def _fast_beir_qrels(text: str) -> Judgements | None:
    header, _, body = text.partition("\n")
    if (body and header.rstrip("\r") == _HEADER_TEXT and body.isascii()
            and not any(map(body.__contains__, _TSV_ODD_SPACE))):
        columns = _plain_columns(body, 3, "\t")  # no field to strip, no blank line
        if columns is not None:
            query_ids, doc_ids, texts = columns
            labels = _labels(texts)
            if labels is not None:
                return _judgements(query_ids, doc_ids, labels)
    lines = [line for line in text.split("\n") if line.strip(ASCII_SPACE)]
    if not lines or tuple(p.strip(ASCII_SPACE) for p in lines[0].split("\t")) != BEIR_QRELS_HEADER:
        return None
    rows = [line.split("\t") for line in islice(lines, 1, None)]
    if not rows or set(map(len, rows)) != {3}:
        return None
    query_ids, doc_ids, texts = ([v.strip(ASCII_SPACE) for v in column] for column in zip(*rows))
    if "" in query_ids or "" in doc_ids:
        return None
    labels = _labels(texts)
    return None if labels is None else _judgements(query_ids, doc_ids, labels)


def read_beir_qrels(path: FilePath) -> QrelsFile:
    """BEIR qrels TSV: a header row ``query-id corpus-id score`` then one judgement per row."""
    return _whole_qrels(path, _fast_beir_qrels, _located_beir_qrels)


def _located_beir_qrels(path: FilePath) -> Judgements:
    judgements: Judgements = {}
    seen: dict[tuple[str, str], int] = {}
    header_seen = False
    for line, text in read_lines(path):
        parts = text.split("\t")
        if not header_seen:
            if tuple(p.strip(ASCII_SPACE) for p in parts) != BEIR_QRELS_HEADER:
                raise FormatError(
                    path, line, "header",
                    f"expected header {_HEADER_TEXT!r}, got {text!r}",
                )
            header_seen = True
            continue
        if len(parts) != 3:
            raise FormatError(path, line, "columns",
                              f"expected 3 tab-separated columns, got {len(parts)}")
        query_id, doc_id, rel = (p.strip(ASCII_SPACE) for p in parts)
        if not query_id:
            raise FormatError(path, line, "query-id", "empty query id")
        if not doc_id:
            raise FormatError(path, line, "corpus-id", "empty document id")
        _add_judgement(judgements, seen, path, line, query_id, doc_id,
                       parse_relevance(rel, path, line, "score"))
    if not judgements:
        raise FormatError(path, None, None, "empty file: a header but no judgements")
    return judgements
