"""TREC qrels, BEIR qrels, TREC runs and canonical JSONL: the text of each, in the order
given (:func:`trec_run_text`, :func:`trec_qrels_text`; ``harness export-run`` writes these),
and the files, each written atomically (:func:`harness.core.atomic.write_files`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from harness.core.atomic import write_files
from harness.core.formats.base import ASCII_SPACE, FilePath, FormatError, parse_score
from harness.core.formats.beir import BEIR_QRELS_HEADER
from harness.core.records import Qrel, ScoredDoc


def _write_text(path: FilePath, text: str) -> None:
    write_files([(Path(path), text)])


def _token(value: str, where: FilePath, what: str) -> str:
    """An id written into a whitespace-separated TREC file must hold no ASCII whitespace
    (the readers, as trec_eval, split on it alone: any other space is part of the id)."""
    if not value or any(c in ASCII_SPACE for c in value):
        raise FormatError(where, None, what, f"{what} {value!r} cannot be written to a TREC file "
                                             "(empty or holds whitespace): write JSONL instead "
                                             "(--format jsonl)")
    return value


def trec_qrels_text(qrels: Iterable[Qrel], where: FilePath) -> str:
    """TREC qrels lines ``query_id 0 doc_id relevance``, in the order given; an id a TREC
    file cannot hold is a :class:`FormatError` naming ``where``."""
    return "".join(f"{_token(q.query_id, where, 'query_id')} 0 {_token(q.doc_id, where, 'doc_id')} "
                   f"{int(q.relevance)}\n" for q in qrels)


def trec_run_text(run: Mapping[str, Sequence[ScoredDoc]], tag: str, where: FilePath, *,
                  tag_where: FilePath | None = None) -> str:
    """TREC run lines ``query_id Q0 doc_id rank score tag``: queries in the mapping's order,
    each list in the order given and ranked from 1, scores as ``repr`` of the float (the
    shortest text that reads back as it).  An id (or the tag: named by ``tag_where``) a TREC
    file cannot hold, or a score that is not finite, is a :class:`FormatError`."""
    _token(tag, where if tag_where is None else tag_where, "tag")
    lines = []
    for query_id, docs in run.items():
        _token(query_id, where, "query_id")
        for rank, doc in enumerate(docs, start=1):
            score = parse_score(doc.score, where, None)
            lines.append(f"{query_id} Q0 {_token(doc.doc_id, where, 'doc_id')} {rank} {score!r} {tag}\n")
    return "".join(lines)


def _sorted_qrels(qrels: Iterable[Qrel] | Mapping[str, Mapping[str, int]]) -> list[Qrel]:
    if isinstance(qrels, Mapping):
        qrels = [Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    return sorted(qrels)


def write_trec_qrels(path: FilePath, qrels: Iterable[Qrel] | Mapping[str, Mapping[str, int]]) -> None:
    """Write TREC qrels, sorted by (query_id, doc_id)."""
    _write_text(path, trec_qrels_text(_sorted_qrels(qrels), path))


def write_beir_qrels(path: FilePath, qrels: Iterable[Qrel] | Mapping[str, Mapping[str, int]]) -> None:
    """Write BEIR qrels TSV with its header row, sorted by (query_id, doc_id)."""
    rows = ["\t".join(BEIR_QRELS_HEADER)]
    rows += [f"{q.query_id}\t{q.doc_id}\t{q.relevance}" for q in _sorted_qrels(qrels)]
    _write_text(path, "\n".join(rows) + "\n")


def write_trec_run(path: FilePath, run: Mapping[str, Sequence[ScoredDoc]], tag: str = "harness") -> None:
    """Write a TREC run in the given list order per query (queries sorted by id)."""
    _write_text(path, trec_run_text({query_id: run[query_id] for query_id in sorted(run)}, tag, path))


def write_jsonl(path: FilePath, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write canonical JSONL (sorted keys, fixed float formatting), atomically."""
    from harness.core.canonical import canonical_lines

    _write_text(path, canonical_lines(rows))
