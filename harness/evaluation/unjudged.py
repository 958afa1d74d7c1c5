"""What a run's judgements cover: Judged@k over a query set the qrels may not judge at all.

A team with its own corpus and queries starts with no qrels.  Under trec_eval ``-c`` the
scored query set is the qrels' own, so a query nobody judged is not scored, and a run whose
queries nobody judged has no mean of any measure.  :func:`coverage` says how far the
judgements reach instead: per query the share of its top ``depth`` that is judged
(Judged@k, :mod:`harness.evaluation.judged`), which queries have no judgement at all, and how
many distinct (query, document) pairs judging the top ``depth`` would take (a TREC pool of
this one run at that depth).  It never reports a mean of a relevance measure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from harness.evaluation.judged import DEPTH, judged_share, top_ids
from harness.evaluation.ordering import normalise_ranking


@dataclass(frozen=True)
class Coverage:
    """How much of one run's top ``depth`` the judgements reach, over ``queries``."""

    depth: int
    queries: int  #: the query set: the query file's, else the run's
    answered: int  #: queries the run returned at least one document for
    judged_queries: int  #: queries with at least one judgement (any label, 0 included)
    judged_at_k: float  #: mean Judged@depth over the query set (an unanswered query: 0)
    pairs_to_judge: int  #: distinct unjudged (query, doc) pairs in the run's top ``depth``
    unjudged_queries: tuple[str, ...]  #: queries with no judgement, sorted

    def lines(self) -> list[str]:
        """The report ``harness score`` prints for a run the qrels do not (wholly) judge."""
        k = self.depth
        return [
            f"{self.queries} quer{'y' if self.queries == 1 else 'ies'}, {self.answered} answered "
            f"by the run; {self.judged_queries} with any judgement",
            f"Judged@{k} {self.judged_at_k:.4f} (the share of each query's top {k} that is "
            "judged, averaged over every query)",
            f"{self.pairs_to_judge} unjudged (query, document) pairs in the run's top {k}",
        ]


def coverage(run: Mapping[str, Sequence], queries: Sequence[str] | None = None,
             judgements: Mapping[str, Mapping[str, int]] | None = None,
             depth: int = DEPTH, preserve_order: bool = False) -> Coverage:
    """The :class:`Coverage` of ``run`` by ``judgements`` (none: nothing is judged) over
    ``queries`` (default: the run's queries), the top ``depth`` ordered as scoring orders
    it (or in file order with ``preserve_order``)."""
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    judgements = judgements or {}
    query_set = sorted(set(run) if queries is None else set(queries))
    shares, pairs, answered = [], 0, 0
    for query_id in query_set:
        docs = run.get(query_id)
        top = top_ids(normalise_ranking(docs, preserve_order, query_id=query_id))[:depth] if docs else []
        answered += bool(top)
        judged = judgements.get(query_id, {})
        shares.append(judged_share(top, judged, depth))
        pairs += sum(1 for d in top if d not in judged)
    unjudged = tuple(q for q in query_set if not judgements.get(q))
    return Coverage(depth=depth, queries=len(query_set), answered=answered,
                    judged_queries=len(query_set) - len(unjudged),
                    judged_at_k=sum(shares) / len(shares) if shares else 0.0,
                    pairs_to_judge=pairs, unjudged_queries=unjudged)
