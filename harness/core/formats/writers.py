"""Writers of TREC qrels, BEIR qrels, TREC runs and canonical JSONL, each atomic."""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from harness.core.formats.base import FilePath, FormatError, parse_score
from harness.core.formats.beir import BEIR_QRELS_HEADER
from harness.core.records import Qrel, ScoredDoc

def _atomic_write_text(path: FilePath, text: str) -> None:
    """Write beside ``path`` and rename into place: the old file or the new one, never half."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        with tmp.open("x", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _token(value: str, path: FilePath, what: str) -> str:
    """An id written into a whitespace-separated TREC file must hold no whitespace."""
    if not value or any(c.isspace() for c in value):
        raise FormatError(path, None, what, f"{what} {value!r} cannot be written to a TREC file "
                                            "(empty or holds whitespace)")
    return value


def _sorted_qrels(qrels: Iterable[Qrel] | Mapping[str, Mapping[str, int]]) -> list[Qrel]:
    if isinstance(qrels, Mapping):
        qrels = [Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()]
    return sorted(qrels)


def write_trec_qrels(path: FilePath, qrels: Iterable[Qrel] | Mapping[str, Mapping[str, int]]) -> None:
    """Write TREC qrels, sorted by (query_id, doc_id)."""
    _atomic_write_text(path, "".join(
        f"{_token(q.query_id, path, 'query_id')} 0 {_token(q.doc_id, path, 'doc_id')} {int(q.relevance)}\n"
        for q in _sorted_qrels(qrels)))


def write_beir_qrels(path: FilePath, qrels: Iterable[Qrel] | Mapping[str, Mapping[str, int]]) -> None:
    """Write BEIR qrels TSV with its header row."""
    rows = ["\t".join(BEIR_QRELS_HEADER)]
    rows += [f"{q.query_id}\t{q.doc_id}\t{q.relevance}" for q in _sorted_qrels(qrels)]
    _atomic_write_text(path, "\n".join(rows) + "\n")


def write_trec_run(path: FilePath, run: Mapping[str, Sequence[ScoredDoc]], tag: str = "harness") -> None:
    """Write a TREC run in the given list order per query (queries sorted by id)."""
    lines = []
    _token(tag, path, "tag")
    for query_id in sorted(run):
        _token(query_id, path, "query_id")
        for rank, doc in enumerate(run[query_id], start=1):
            score = parse_score(doc.score, path, None)
            lines.append(f"{query_id} Q0 {_token(doc.doc_id, path, 'doc_id')} {rank} {score!r} {tag}\n")
    _atomic_write_text(path, "".join(lines))


def write_jsonl(path: FilePath, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write canonical JSONL (sorted keys, fixed float formatting), atomically."""
    from harness.core.canonical import canonical_lines

    _atomic_write_text(path, canonical_lines(rows))
