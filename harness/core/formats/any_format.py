"""The readers that choose a file's format by its extension."""

from __future__ import annotations

from pathlib import Path

from harness.core.formats.base import FilePath, QrelsFile, gc_paused
from harness.core.formats.beir import read_beir_qrels
from harness.core.formats.jsonl import _fast_jsonl_run, read_jsonl_qrels, read_jsonl_run
from harness.core.formats.trec import _fast_trec_run, read_trec_qrels, read_trec_run
from harness.core.records import RankedDocs, ScoredDoc

def read_qrels(path: FilePath) -> QrelsFile:
    """Qrels in any supported format, chosen by extension (``.tsv``, ``.jsonl``, else TREC)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".tsv":
        return read_beir_qrels(path)
    if suffix == ".jsonl":
        return read_jsonl_qrels(path)
    return read_trec_qrels(path)


def read_run(path: FilePath) -> dict[str, list[ScoredDoc]]:
    """A run in any supported format, chosen by extension (``.jsonl``, else TREC)."""
    if Path(path).suffix.lower() == ".jsonl":
        return read_jsonl_run(path)
    return read_trec_run(path)


def read_run_columns(path: FilePath) -> dict[str, RankedDocs]:
    """:func:`read_run` with each query's list as :class:`RankedDocs` (two columns): the
    same lists, values and errors, without a record per document."""
    with gc_paused():
        if Path(path).suffix.lower() == ".jsonl":
            run = _fast_jsonl_run(path, records=False)
        else:
            run = _fast_trec_run(path, records=False)
        if run is not None:
            return run
        return {query_id: RankedDocs([d.doc_id for d in docs], [d.score for d in docs])
                for query_id, docs in read_run(path).items()}
