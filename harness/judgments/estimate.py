"""nDCG@10 of a run from a few hand labels and many judge labels, by prediction-powered
inference (Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi & Zrnic 2023).

The unit is the query.  A uniformly drawn sample of the pool's queries (``harness pool
--sample-queries``) is hand-labelled in full; every pooled pair gets a judge grade.  For each
query, nDCG@10 of the run is computed twice: with the hand labels (sampled queries only) and
with the judge's grades.  :func:`harness.certificates.ppi.ppi_mean` then corrects the mean of
the judge's nDCG over all queries by the judge's bias measured on the sample.  Reported beside
it: the hand-only mean and interval (valid, wider) and the judge-only mean (no validity: it
measures the judge's opinion, not the truth).

nDCG@10 follows trec_eval's ``ndcg_cut.10``: gain = grade, discount ``log2(rank + 1)``, the
ideal from the query's judged grades; a query with no relevant judged document scores 0
(unlike ``-c`` averaging over the qrels' queries, the estimand is every pooled query).  A
document the run ranks in its top 10 must be pooled (pool the run at depth >= 10), so the
hand and judge values score the same documents.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from harness.certificates.ppi import PPIResult, ppi_mean

DEPTH = 10


def ndcg(ranked: Sequence[str], grades: Mapping[str, float], k: int = DEPTH) -> float:
    """nDCG@k of ``ranked`` under ``grades`` (missing: 0; negative grades count as 0).

    Computed here, not by the scoring engine, because the judge's grades are fractional and
    trec_eval's qrels hold integers only; the tests check it against ir_measures."""
    dcg = sum(max(grades.get(d, 0.0), 0.0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((max(g, 0.0) for g in grades.values()), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


@dataclass(frozen=True)
class Estimate:
    """The three figures for one run, and what they came from."""

    measure: str
    result: PPIResult
    queries: int
    labelled_queries: int
    hand_pairs: int
    judge_pairs: int

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {"measure": self.measure, "alpha": r.alpha, "queries": self.queries,
                "labelled_queries": self.labelled_queries, "hand_pairs": self.hand_pairs,
                "judge_pairs": self.judge_pairs,
                "ppi": {"estimate": r.estimate, "interval": list(r.interval), "lambda": r.lam,
                        "judge_bias": r.judge_bias, "effective_labels": r.effective_labels},
                "hand_only": {"estimate": r.labels_only,
                              "interval": list(r.labels_only_interval)},
                "judge_only": {"estimate": r.judge_only, "valid": False}}

    def lines(self) -> list[str]:
        r, level = self.result, round((1 - self.result.alpha) * 100)
        return [
            f"{self.measure} by PPI: {r.estimate:.4f} [{r.interval[0]:.4f}, {r.interval[1]:.4f}] "
            f"({level}% interval; {self.labelled_queries} hand-labelled of {self.queries} "
            f"queries, judge weight {r.lam:.2f}, worth {r.effective_labels:.0f} hand-labelled "
            "queries)",
            f"{self.measure} by hand labels alone: {r.labels_only:.4f} "
            f"[{r.labels_only_interval[0]:.4f}, {r.labels_only_interval[1]:.4f}]",
            f"{self.measure} by the judge alone: {r.judge_only:.4f} (no validity: the judge's "
            f"opinion, biased by {r.judge_bias:+.4f} on the hand-labelled queries)",
        ]


def estimate_ndcg(tops: Mapping[str, Sequence[str]], queries: Sequence[str],
                  labelled: Sequence[str], hand: Mapping[str, Mapping[str, int]],
                  judge: Mapping[tuple[str, str], float], alpha: float = 0.05) -> Estimate:
    """PPI nDCG@10 of a run (``tops``: each query's ranked ids) over ``queries``, the
    ``labelled`` ones hand-labelled in ``hand``, every pair graded by ``judge``."""
    labelled_set = set(labelled)
    strays = sorted(labelled_set - set(queries))
    if strays:
        raise ValueError(f"hand-labelled query {strays[0]!r} is not among the estimate's queries")
    judge_by_query: dict[str, dict[str, float]] = {}
    for (q, d), g in judge.items():
        judge_by_query.setdefault(q, {})[d] = g
    for q in queries:
        unpooled = [d for d in tops.get(q, ())[:DEPTH] if d not in judge_by_query.get(q, {})]
        if unpooled:
            raise ValueError(f"query {q!r}: document {unpooled[0]!r} in the run's top {DEPTH} "
                             f"has no judge grade: pool the run at depth {DEPTH} or more")
        if q in labelled_set:
            missing = [d for d in judge_by_query.get(q, {}) if d not in hand.get(q, {})]
            if missing:
                raise ValueError(f"sampled query {q!r}: {len(missing)} pooled pair(s) have no "
                                 f"hand label (e.g. {missing[0]!r}); the sample must be "
                                 "labelled in full")
    ordered = sorted(queries)
    ys = [ndcg(tops.get(q, ()), hand[q]) for q in ordered if q in labelled_set]
    fs = [ndcg(tops.get(q, ()), judge_by_query.get(q, {})) for q in ordered if q in labelled_set]
    fu = [ndcg(tops.get(q, ()), judge_by_query.get(q, {})) for q in ordered
          if q not in labelled_set]
    result = ppi_mean(ys, fs, fu, alpha=alpha)
    return Estimate(f"nDCG@{DEPTH}", result, len(ordered), len(ys),
                    sum(len(hand.get(q, {})) for q in labelled_set), len(judge))
