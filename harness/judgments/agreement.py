"""How far raters agree: Cohen's kappa for each two raters, Fleiss' kappa for more, each
with a bootstrap interval over queries.

- Cohen's kappa (Cohen, 1960) over the pairs both raters labelled:
  ``(p_o - p_e) / (1 - p_e)``; linearly weighted (Cohen, 1968), disagreement ``|i - j| /
  (k - 1)`` on the k-point scale, credits a near miss (2 vs 3) over a far one (0 vs 3).
- Fleiss' kappa (Fleiss, 1971) over the pairs rated by the same number ``m >= 2`` of people
  (the largest such ``m`` with at least two pairs): the chance-corrected share of agreeing
  rater couples.

The interval is a percentile bootstrap that resamples *queries* (pairs of one query share its
difficulty, so they are not independent), seeded, so the same labels give the same interval.
Point values agree with statsmodels' ``cohens_kappa`` / ``fleiss_kappa`` (the tests check).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Sequence

import numpy as np

from harness.claims.labels import GRADES, Label, latest

RESAMPLES = 2000
LEVEL = 0.95
#: the fewest shared pairs a kappa is reported for (below it: "too few shared pairs")
MIN_SHARED = 2


def _table(rows: Sequence[tuple[int, int]], k: int) -> np.ndarray:
    table = np.zeros((k, k))
    for a, b in rows:
        table[a, b] += 1
    return table


def cohen_kappa(rows: Sequence[tuple[int, int]], k: int = len(GRADES),
                weighted: bool = False) -> float:
    """Cohen's kappa of ``(label_a, label_b)`` rows on a ``k``-point scale (NaN when the
    raters' chance agreement is total, e.g. both gave one grade only)."""
    table = _table(rows, k)
    total = table.sum()
    if total == 0:
        return float("nan")
    observed = table / total
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    i, j = np.indices((k, k))
    weight = np.abs(i - j) / (k - 1) if weighted else (i != j).astype(float)
    chance = float((weight * expected).sum())
    if chance == 0:
        return float("nan")
    return 1.0 - float((weight * observed).sum()) / chance


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa of an items x categories table of how many raters chose each grade
    (every row sums to the same ``m``)."""
    counts = np.asarray(counts, dtype=float)
    items, m = counts.shape[0], counts[0].sum()
    share = counts.sum(axis=0) / (items * m)
    per_item = ((counts * counts).sum(axis=1) - m) / (m * (m - 1))
    chance = float((share * share).sum())
    if chance == 1:
        return float("nan")
    return (float(per_item.mean()) - chance) / (1 - chance)


def _interval(groups: list[list[Any]], statistic, seed: int) -> tuple[float, float] | None:
    """Percentile bootstrap of ``statistic(rows)`` resampling the groups (queries)."""
    if len(groups) < 2:
        return None
    rng = np.random.default_rng(seed)
    values = []
    for _ in range(RESAMPLES):
        picked = rng.integers(0, len(groups), len(groups))
        value = statistic([row for g in picked for row in groups[g]])
        if np.isfinite(value):
            values.append(value)
    if len(values) < RESAMPLES // 2:
        return None
    tail = (1 - LEVEL) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _grouped(rows: list[tuple[str, Any]]) -> list[list[Any]]:
    by_query: dict[str, list[Any]] = {}
    for query_id, row in rows:
        by_query.setdefault(query_id, []).append(row)
    return [by_query[q] for q in sorted(by_query)]


@dataclass(frozen=True)
class Agreement:
    """Agreement among the raters of a set of labels."""

    raters: tuple[str, ...]
    shared_pairs: int  #: pairs labelled by two or more raters
    cohen: tuple[dict[str, Any], ...]  #: one entry per two raters who share pairs
    fleiss: dict[str, Any] | None
    per_rater: dict[str, dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"raters": list(self.raters), "shared_pairs": self.shared_pairs,
                "cohen": list(self.cohen), "fleiss": self.fleiss, "per_rater": self.per_rater,
                "interval": {"method": "percentile bootstrap over queries",
                             "resamples": RESAMPLES, "level": LEVEL}}

    def lines(self) -> list[str]:
        out = [f"{len(self.raters)} rater(s), {self.shared_pairs} pair(s) labelled by more "
               "than one"]
        for c in self.cohen:
            out.append(f"Cohen's kappa {c['raters'][0]} vs {c['raters'][1]} over {c['pairs']} "
                       f"pairs: {_shown(c['kappa'], c['interval'])}; linearly weighted "
                       f"{_shown(c['linear'], c['linear_interval'])}")
        if self.fleiss:
            f = self.fleiss
            out.append(f"Fleiss' kappa over {f['pairs']} pairs rated by {f['raters_per_pair']} "
                       f"people: {_shown(f['kappa'], f['interval'])}")
        if not self.cohen:
            out.append("no two raters labelled the same pair: no agreement to measure (show a "
                       "share of pairs to two people)")
        return out


def _shown(value: float | None, interval) -> str:
    if value is None:
        return "undefined (one grade only)"
    if interval is None:
        return f"{value:.3f} (too few queries for an interval)"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def agreement(labels: Sequence[Label], seed: int = 0) -> Agreement:
    """Cohen's kappa for each two raters, Fleiss' kappa when three or more rate the same
    pairs, and each rater's kappa against everyone else, over each rater's latest labels."""
    by_pair: dict[tuple[str, str], dict[str, int]] = {}
    for item in latest(labels):
        by_pair.setdefault((item.query_id, item.doc_id), {})[item.rater] = item.label
    raters = tuple(sorted({r for given in by_pair.values() for r in given}))
    shared = {pair: given for pair, given in by_pair.items() if len(given) > 1}
    cohen = []
    for a, b in combinations(raters, 2):
        rows = [(q, (g[a], g[b])) for (q, _), g in sorted(shared.items()) if a in g and b in g]
        if len(rows) < MIN_SHARED:
            continue
        cohen.append(_cohen_entry([a, b], rows, seed))
    per_rater = {}
    for r in raters:
        rows = [(q, (g[r], o)) for (q, _), g in sorted(shared.items()) if r in g
                for other, o in sorted(g.items()) if other != r]
        per_rater[r] = {"labels": sum(r in g for g in by_pair.values()),
                        "shared": sum(r in g for g in shared.values()),
                        **({"kappa_vs_others": _cohen_entry(None, rows, seed)}
                           if len(rows) >= MIN_SHARED else {})}
    return Agreement(raters, len(shared), tuple(cohen), _fleiss_entry(shared, seed), per_rater)


def _cohen_entry(names, rows, seed: int) -> dict[str, Any]:
    groups = _grouped(rows)
    plain = cohen_kappa([r for _, r in rows])
    linear = cohen_kappa([r for _, r in rows], weighted=True)
    entry = {"pairs": len(rows), "queries": len(groups),
             "kappa": _finite(plain), "interval": _interval(groups, cohen_kappa, seed),
             "linear": _finite(linear),
             "linear_interval": _interval(groups, lambda x: cohen_kappa(x, weighted=True), seed)}
    return {"raters": names, **entry} if names else entry


def _fleiss_entry(shared: dict[tuple[str, str], dict[str, int]], seed: int) -> dict[str, Any] | None:
    sizes = sorted({len(g) for g in shared.values() if len(g) >= 3}, reverse=True)
    for m in sizes:
        rows = [(q, np.bincount(list(g.values()), minlength=len(GRADES)))
                for (q, _), g in sorted(shared.items()) if len(g) == m]
        if len(rows) < MIN_SHARED:
            continue
        groups = _grouped(rows)
        value = fleiss_kappa(np.array([r for _, r in rows]))
        return {"pairs": len(rows), "raters_per_pair": m, "queries": len(groups),
                "kappa": _finite(value),
                "interval": _interval(groups, lambda x: fleiss_kappa(np.array(x)), seed)}
    return None
