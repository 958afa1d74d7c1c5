"""Measures as data: one canonical name each (ir_measures style) and how trec_eval computes it.

The canonical name is what every results file and the warehouse store.  ``nDCG@k`` is
trec_eval's ``ndcg_cut.k`` (ideal DCG truncated at k, linear gain); bare ``nDCG`` is
trec_eval's untruncated ``ndcg`` and is never what ``@k`` means.  ``MRR@10`` is reciprocal
rank on the run truncated at rank 10 (trec_eval has no cut-off form of ``recip_rank``).

Definitions: nDCG (Jarvelin & Kekalainen, ACM TOIS 2002) with trec_eval's linear gain and
``log2(rank + 1)`` discount; reciprocal rank (Voorhees, TREC-8 QA track 1999); average
precision and R@k / P@k / Success@k as in trec_eval (Buckley & Voorhees 2005).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable


@dataclass(frozen=True)
class Measure:
    name: str
    #: pytrec_eval measure specification, e.g. ``ndcg_cut.10``
    trec_measure: str
    #: key of the value in pytrec_eval's per-query output, e.g. ``ndcg_cut_10``
    trec_key: str
    #: truncate the (tie-normalised) run to this many documents before scoring
    run_cutoff: int | None = None
    #: True when the per-query value is 0 or 1 (exact binomial intervals apply)
    binary_valued: bool = False
    description: str = ""

    @property
    def by_trec_eval(self) -> bool:
        """False for a measure trec_eval does not compute (Judged@10)."""
        return bool(self.trec_measure)


#: share of the top 10 that has a judgement (harness.evaluation.judged; ir_measures Judged@10)
JUDGED = "Judged@10"


def _cut(name: str, family: str, k: int, description: str, binary_valued: bool = False) -> Measure:
    return Measure(name, f"{family}.{k}", f"{family}_{k}", None, binary_valued, description)


MEASURES: dict[str, Measure] = {
    m.name: m
    for m in [
        _cut("nDCG@5", "ndcg_cut", 5, "nDCG with the ideal DCG truncated at 5, linear gain"),
        _cut("nDCG@10", "ndcg_cut", 10, "nDCG with the ideal DCG truncated at 10, linear gain"),
        _cut("nDCG@20", "ndcg_cut", 20, "nDCG with the ideal DCG truncated at 20, linear gain"),
        Measure("nDCG", "ndcg", "ndcg", None, False, "untruncated nDCG over the whole run"),
        _cut("R@5", "recall", 5, "share of relevant documents in the top 5"),
        _cut("R@10", "recall", 10, "share of relevant documents in the top 10"),
        _cut("R@20", "recall", 20, "share of relevant documents in the top 20"),
        _cut("R@100", "recall", 100, "share of relevant documents in the top 100"),
        _cut("P@5", "P", 5, "precision at 5"),
        _cut("P@10", "P", 10, "precision at 10"),
        Measure("MRR", "recip_rank", "recip_rank", None, False,
                "reciprocal rank of the first relevant document"),
        Measure("MRR@10", "recip_rank", "recip_rank", 10, False,
                "reciprocal rank, run truncated at 10"),
        Measure("AP", "map", "map", None, False, "average precision"),
        _cut("Success@1", "success", 1, "1 if the top document is relevant", binary_valued=True),
        _cut("Success@5", "success", 5, "1 if a relevant document is in the top 5",
             binary_valued=True),
        _cut("Success@10", "success", 10, "1 if a relevant document is in the top 10",
             binary_valued=True),
        Measure(JUDGED, "", "", 10, False,
                "share of the top 10 that has a judgement (any label; ir_measures Judged@10)"),
    ]
}

DEFAULT_MEASURES: tuple[str, ...] = (
    "nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "P@5", "P@10",
    "MRR", "MRR@10", "AP", "Success@1", JUDGED,
)


def reported(names: Iterable[str] | None = None) -> tuple[str, ...]:
    """The measures a scored run reports: those asked for, then Judged@10 when they omit it,
    so every run says how much of its top 10 the qrels judge (an HTTP system whose results
    fall outside the qrels is visibly under-judged, not silently scored low)."""
    asked = DEFAULT_MEASURES if names is None else tuple(names)
    return asked if JUDGED in asked else (*asked, JUDGED)


#: the columns of a delta table (``harness compare``)
COMPARE_MEASURES: tuple[str, ...] = ("nDCG@10", "nDCG@5", "MRR", "R@10")


def resolve(names: Iterable[str] | None = None) -> tuple[Measure, ...]:
    """Measures by canonical name, in the order given; unknown names list the known ones."""
    names = DEFAULT_MEASURES if names is None else tuple(names)
    if not names:
        raise ValueError("at least one measure is needed")
    out, seen = [], set()
    for name in names:
        if name not in MEASURES:
            raise ValueError(f"unknown measure {name!r}; known measures: {sorted(MEASURES)}")
        if name not in seen:
            seen.add(name)
            out.append(MEASURES[name])
    return tuple(out)


#: prefix of the file-level measures a chunk run also reports (``file:Success@1``)
FILE_PREFIX = "file:"
#: every measure the product computes lies in [0, 1]
UNIT_RANGE = (0.0, 1.0)


def measure_range(name: str) -> tuple[float, float]:
    """The values a measure (or its file-level twin) can take; a measure this product does
    not compute is unbounded.  Every retrieval measure here is a proportion, so its mean and
    any interval of its mean lie in [0, 1]; an interval of a *delta* lies in [-1, 1]."""
    base = name[len(FILE_PREFIX):] if name.startswith(FILE_PREFIX) else name
    return UNIT_RANGE if base in MEASURES else (float("-inf"), float("inf"))


def delta_range(name: str) -> tuple[float, float]:
    """The values a difference of two means of ``name`` can take."""
    lo, hi = measure_range(name)
    return lo - hi, hi - lo
