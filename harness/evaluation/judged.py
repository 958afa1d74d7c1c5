"""Judged@10: how much of a run's top 10 the qrels judge at all.

A system scored over HTTP or from another index can return documents the qrels never saw; every
measure then counts them as non-relevant and the run looks weak when it is merely
under-judged.  Judged@k is the share of the documents retrieved at rank <= k that have a
judgement (any label, 0 included), per query and as a mean: ir_measures' ``Judged@k``
(after OpenNIR; MacAvaney et al.), which divides by ``min(k, documents retrieved)``.  A
query the run did not answer gets 0, as every measure does under trec_eval ``-c``.  The top
k is the ranking the other measures scored (ties ordered as :mod:`harness.evaluation.ordering`
orders them).
"""

from __future__ import annotations

from typing import Container, Iterable, Mapping, Sequence

from harness.core.records import RankedDocs, ScoredDoc

#: the rank depth Judged@10 reads
DEPTH = 10


def top_ids(ranking) -> list[str]:
    """The document ids of a ranking as scoring holds it: ``(doc_id, score)`` pairs, a
    reader's ScoredDocs or :class:`RankedDocs`."""
    if type(ranking) is RankedDocs:
        return list(ranking.doc_ids)
    return [d.doc_id if type(d) is ScoredDoc else d[0] for d in ranking]


def judged_share(ranked_ids: Sequence[str], judged: Container[str], depth: int = DEPTH) -> float:
    """Share of ``ranked_ids[:depth]`` that ``judged`` holds (0.0 for an empty ranking)."""
    top = ranked_ids[:depth]
    return sum(1 for d in top if d in judged) / len(top) if top else 0.0


def judged_values(queries: Iterable[str], qrels: Mapping[str, Mapping[str, int]],
                  tops: Mapping[str, Sequence[str]]) -> dict[str, float]:
    """Judged@10 of each query in ``queries`` (``tops``: its top-10 ids; absent: unanswered)."""
    return {q: judged_share(tops.get(q, ()), qrels.get(q, {})) for q in queries}
