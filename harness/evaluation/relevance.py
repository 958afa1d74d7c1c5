"""Qrels as trec_eval will see them: labels checked, negatives judged non-relevant, an
optional binary collapse, and the queries without a relevant document set apart."""

from __future__ import annotations

import numbers
from typing import Mapping

from harness.core.formats import RELEVANCE_MAX, RELEVANCE_MIN

def _relevance(query_id, doc_id, rel) -> int:
    if isinstance(rel, bool) or not isinstance(rel, numbers.Integral):
        raise ValueError(
            f"qrels: field 'relevance' for (query_id={query_id!r}, doc_id={doc_id!r}) "
            f"must be an integer, got {rel!r}"
        )
    return int(rel)


def prepare_qrels(qrels: Mapping[str, Mapping[str, int]], binary: bool = False):
    """Qrels as trec_eval will see them: negatives -> 0, optional binary collapse.

    Returns ``(judgeable, dropped, negative_labels)`` where ``dropped`` lists (sorted) the
    queries with no relevant document.  Query and doc ids must be strings and labels
    integers in ``RELEVANCE_MIN .. RELEVANCE_MAX`` (trec_eval keeps a label in a C int:
    a larger one silently zeroes every measure, or crashes the engine; doc ids are checked
    when trec_eval is handed the qrels, by :func:`harness.evaluation.scoring.score`); a
    query's mapping is passed through uncopied when nothing needs rewriting.
    """
    judgeable: dict[str, dict[str, int]] = {}
    dropped: list[str] = []
    negative = 0
    for query_id, docs in qrels.items():
        if not isinstance(query_id, str):
            raise ValueError(f"qrels: query_id must be a string, got {query_id!r}")
        values = docs.values()
        if set(map(type, values)) != {int}:
            if not docs:
                dropped.append(query_id)
                continue
            docs = {d: _relevance(query_id, d, r) for d, r in docs.items()}
            values = docs.values()
        if max(values) > RELEVANCE_MAX or min(values) < RELEVANCE_MIN:
            doc_id, rel = next((d, r) for d, r in docs.items()
                               if not RELEVANCE_MIN <= r <= RELEVANCE_MAX)
            raise ValueError(f"qrels: field 'relevance' for (query_id={query_id!r}, "
                             f"doc_id={doc_id!r}): {rel} is outside the supported range "
                             f"{RELEVANCE_MIN} .. {RELEVANCE_MAX}")
        if max(values) <= 0:
            dropped.append(query_id)
            negative += sum(1 for r in values if r < 0)
            continue
        if min(values) < 0 or (binary and max(values) > 1):
            negative += sum(1 for r in values if r < 0)
            docs = {d: (0 if r < 0 else (1 if binary and r > 0 else r)) for d, r in docs.items()}
        judgeable[query_id] = docs
    return judgeable, sorted(dropped), negative
