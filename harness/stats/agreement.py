"""Do two corpora rank changes the same way?

Each arm is reduced to its delta against its own family's control on each of two corpora
(absolute values are never compared: the corpora's baselines differ for reasons that say
nothing about any arm).  Per family and pooled over all arms:

* **Kendall tau-b** (Kendall 1945, tie-corrected: ``(C - D) / sqrt((n0 - n1)(n0 - n2))``), the
  headline, because arm sets contain exact ties (arms that move nothing).  p-value: exact
  permutation distribution when there are no ties and n <= 33, otherwise the normal
  approximation with the tie-corrected variance of ``C - D`` (Kendall 1970, ch. 4).
* **Spearman rho** (Pearson correlation of mid-ranks), p from the t distribution on n-2 df.
* **Pearson r**, printed to be distrusted: two structural outliers can carry it.  It is
  flagged ``outlier_driven`` when it differs from Spearman by more than
  :data:`OUTLIER_GAP`, or when removing a single arm moves it by more than that.
* **Sign agreement**: agree / disagree (both moved, same or opposite sign), inert (zero on
  both: a metric that cannot see the knob, not two corpora concurring), one-sided (zero on
  one).
* each corpus's **winner** (largest delta) and the **delta-range ratio** (range on the second
  corpus / range on the first).

A coefficient of a constant input is undefined and reported as ``None``, never 0.0.  Rank
coefficients are invariant to any monotone transform of either corpus's deltas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from harness.core.tiers import most_restrictive_tier
from harness.claims import AgreementClaim

#: Pearson is flagged when it and Spearman differ by more than this, or one arm moves it this much
OUTLIER_GAP = 0.2
#: exact Kendall p-values for untied inputs up to this many arms (as scipy's "auto")
KENDALL_EXACT_MAX = 33
SIGNS = ("agree", "disagree", "inert", "one-sided")
POOLED_CAVEAT = ("pooled over families with different controls, stages and query sets: a summary, "
                 "read the per-family coefficients first")
DEFAULT_MEASURE = "nDCG@10"


@dataclass(frozen=True)
class Arm:
    """One arm's deltas against its family's control on the two compared corpora."""

    family: str
    name: str
    axis: str | None
    deltas: tuple[float, float]
    #: ``measured`` (from results) or ``given`` (typed into the manifest)
    source: str = "measured"
    run_id: str | None = None
    tier: str = "B"


@dataclass(frozen=True)
class Coefficient:
    value: float | None
    p: float | None
    method: str | None = None

    def to_dict(self) -> dict:
        return {"value": self.value, "p": self.p, "method": self.method}


UNDEFINED = Coefficient(None, None, None)


# --------------------------------------------------------------------------- coefficients


def _pair(x, y) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"need two equal-length vectors, got {x.shape} and {y.shape}")
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(y))):
        raise ValueError("deltas must be finite")
    return x, y


def _constant(v: np.ndarray) -> bool:
    return v.size < 2 or bool(np.all(v == v[0]))


def _mahonian(n: int) -> list[int]:
    """Number of permutations of n items with k inversions, k = 0 .. n(n-1)/2."""
    row = [1]
    for j in range(2, n + 1):
        nxt = [0] * (len(row) + j - 1)
        for k, c in enumerate(row):
            for i in range(j):
                nxt[k + i] += c
        row = nxt
    return row


def _tie_sums(v: np.ndarray) -> tuple[float, float, float]:
    _, counts = np.unique(v, return_counts=True)
    t = counts[counts > 1].astype(np.float64)
    return float((t * (t - 1) / 2).sum()), float((t * (t - 1) * (t - 2)).sum()), \
        float((t * (t - 1) * (2 * t + 5)).sum())


def kendall_tau_b(x, y) -> Coefficient:
    """Kendall's tau-b with its two-sided p-value (module docstring); undefined on a constant input."""
    x, y = _pair(x, y)
    n = x.size
    if _constant(x) or _constant(y):
        return UNDEFINED
    iu = np.triu_indices(n, k=1)
    sx = np.sign(x[:, None] - x[None, :])[iu]
    sy = np.sign(y[:, None] - y[None, :])[iu]
    s = float(np.sum(sx * sy))  # concordant - discordant
    n0 = n * (n - 1) / 2
    xtie, x2, x1 = _tie_sums(x)
    ytie, y2, y1 = _tie_sums(y)
    tau = s / math.sqrt((n0 - xtie) * (n0 - ytie))
    tau = min(1.0, max(-1.0, tau))
    if xtie == 0 and ytie == 0 and n <= KENDALL_EXACT_MAX:
        discordant = int(round((n0 - s) / 2))
        c = min(discordant, int(n0) - discordant)
        counts = _mahonian(n)
        p = min(1.0, 2 * sum(counts[: c + 1]) / math.factorial(n))
        return Coefficient(tau, p, "exact")
    m = n * (n - 1)
    var = (m * (2 * n + 5) - x1 - y1) / 18 + 2 * xtie * ytie / m
    if n > 2:
        var += x2 * y2 / (9 * m * (n - 2))
    p = math.erfc(abs(s) / math.sqrt(var) / math.sqrt(2)) if var > 0 else None
    return Coefficient(tau, p, "normal approximation, tie-corrected variance")


def _correlation(x: np.ndarray, y: np.ndarray) -> float:
    xc, yc = x - x.mean(), y - y.mean()
    r = float(np.sum(xc * yc) / math.sqrt(float(np.sum(xc * xc)) * float(np.sum(yc * yc))))
    return min(1.0, max(-1.0, r))


def _t_p(r: float, n: int) -> float | None:
    from scipy.stats import t as student

    if n < 3:
        return None
    if abs(r) >= 1.0:
        return 0.0
    stat = r * math.sqrt((n - 2) / ((1 - r) * (1 + r)))
    return float(2 * student.sf(abs(stat), n - 2))


def midranks(v: np.ndarray) -> np.ndarray:
    """Ranks 1..n with ties given the mean of the ranks they span."""
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(v.size, dtype=np.float64)
    sorted_v = v[order]
    i = 0
    while i < v.size:
        j = i
        while j + 1 < v.size and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x, y) -> Coefficient:
    x, y = _pair(x, y)
    if _constant(x) or _constant(y):
        return UNDEFINED
    r = _correlation(midranks(x), midranks(y))
    return Coefficient(r, _t_p(r, x.size), "t distribution, n-2 df")


def pearson(x, y) -> Coefficient:
    x, y = _pair(x, y)
    if _constant(x) or _constant(y):
        return UNDEFINED
    r = _correlation(x, y)
    return Coefficient(r, _t_p(r, x.size), "t distribution, n-2 df")


def pearson_report(x, y) -> dict:
    """Pearson r with what it would take to trust it: its gap to Spearman and its
    leave-one-out range; ``outlier_driven`` when either exceeds :data:`OUTLIER_GAP`."""
    x, y = _pair(x, y)
    r = pearson(x, y)
    rho = spearman(x, y)
    out = {**r.to_dict(), "spearman_gap": None, "leave_one_out_min": None,
           "leave_one_out_max": None, "outlier_driven": None}
    if r.value is None:
        return out
    gap = r.value - rho.value
    loo = []
    if x.size >= 4:
        for i in range(x.size):
            keep = np.arange(x.size) != i
            c = pearson(x[keep], y[keep])
            if c.value is not None:
                loo.append(c.value)
    moved = max((abs(v - r.value) for v in loo), default=0.0)
    out.update(spearman_gap=gap, leave_one_out_min=min(loo) if loo else None,
               leave_one_out_max=max(loo) if loo else None,
               outlier_driven=bool(abs(gap) > OUTLIER_GAP or moved > OUTLIER_GAP))
    return out


# --------------------------------------------------------------------------- signs, winners


def sign_class(a: float, b: float, tolerance: float = 0.0) -> str:
    """``agree`` / ``disagree`` / ``inert`` (zero on both) / ``one-sided`` (zero on one)."""
    za, zb = abs(a) <= tolerance, abs(b) <= tolerance
    if za and zb:
        return "inert"
    if za or zb:
        return "one-sided"
    return "agree" if (a > 0) == (b > 0) else "disagree"


def _sign_counts(arms: Sequence[Arm], tolerance: float) -> dict:
    counts = {s: 0 for s in SIGNS}
    for arm in arms:
        counts[sign_class(*arm.deltas, tolerance)] += 1
    moved = counts["agree"] + counts["disagree"]
    return {"agree": counts["agree"], "disagree": counts["disagree"], "inert": counts["inert"],
            "one_sided": counts["one-sided"],
            "agree_share": counts["agree"] / moved if moved else None}


def _winner(arms: Sequence[Arm], side: int) -> dict:
    best = max(a.deltas[side] for a in arms)
    tied = sorted(a.name for a in arms if a.deltas[side] == best)
    return {"arm": tied[0], "delta": best, "tied_with": tied[1:], "beats_control": best > 0}


def summarize(arms: Sequence[Arm], corpora: Sequence[str], *, tolerance: float = 0.0) -> dict:
    """Coefficients, signs, winners and delta ranges for one set of arms."""
    if not arms:
        return {"n": 0, "kendall_tau_b": UNDEFINED.to_dict(), "spearman": UNDEFINED.to_dict(),
                "pearson": {**UNDEFINED.to_dict(), "spearman_gap": None, "leave_one_out_min": None,
                            "leave_one_out_max": None, "outlier_driven": None},
                "signs": _sign_counts([], tolerance), "winners": None, "delta_range": None}
    x = np.array([a.deltas[0] for a in arms])
    y = np.array([a.deltas[1] for a in arms])
    a_name, b_name = corpora
    wa, wb = _winner(arms, 0), _winner(arms, 1)
    range_a, range_b = float(x.max() - x.min()), float(y.max() - y.min())
    return {
        "n": len(arms),
        "kendall_tau_b": kendall_tau_b(x, y).to_dict(),
        "spearman": spearman(x, y).to_dict(),
        "pearson": pearson_report(x, y),
        "signs": _sign_counts(arms, tolerance),
        "winners": {a_name: wa, b_name: wb, "same": wa["arm"] == wb["arm"]},
        "delta_range": {a_name: range_a, b_name: range_b,
                        "ratio": range_b / range_a if range_a > 0 else None,
                        "ratio_is": f"{b_name} / {a_name}"},
    }


def agreement(arms: Sequence[Arm], corpora: Sequence[str], *, measure: str = DEFAULT_MEASURE,
              query_class: str = "all", exclude_inert: bool = False, drop: Iterable[str] = (),
              tolerance: float = 0.0) -> dict:
    """The ``agreement`` document for ``arms`` on ``corpora`` (two names, in delta order)."""
    corpora = list(corpora)
    if len(corpora) != 2 or corpora[0] == corpora[1]:
        raise ValueError(f"agreement compares exactly two corpora, got {corpora}")
    if not (isinstance(tolerance, (int, float)) and tolerance >= 0):
        raise ValueError(f"the inert tolerance must be >= 0, got {tolerance!r}")
    names = [a.name for a in arms]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"arm names must be unique across families; repeated: {dupes}")
    drop = sorted(set(drop))
    unknown = [d for d in drop if d not in names]
    if unknown:
        raise ValueError(f"--drop names unknown arms {unknown}; arms: {sorted(names)}")
    kept = [a for a in arms if a.name not in drop]
    inert = sorted(a.name for a in kept if sign_class(*a.deltas, tolerance) == "inert")
    if exclude_inert:
        kept = [a for a in kept if a.name not in inert]
    families = sorted({a.family for a in arms})
    fam_docs = []
    for fam in families:
        members = [a for a in kept if a.family == fam]
        fam_docs.append({"family": fam, **summarize(members, corpora, tolerance=tolerance)})
    axes: dict[str, list[Arm]] = {}
    for a in kept:
        axes.setdefault(a.axis or "unspecified", []).append(a)
    axis_docs = [{"axis": ax, "arms": len(members), **_sign_counts(members, tolerance)}
                 for ax, members in sorted(axes.items())]
    return {
        "kind": AgreementClaim.KIND,
        "schema_version": AgreementClaim.SCHEMA_VERSION,
        "measure": measure,
        "query_class": query_class,
        "corpora": corpora,
        "delta": "arm minus its own family's control, per corpus",
        "tier": most_restrictive_tier([a.tier for a in arms]) if arms else "B",
        "options": {"exclude_inert": exclude_inert, "dropped": drop, "inert_tolerance": tolerance},
        "excluded_inert": inert if exclude_inert else [],
        "arms": [{"family": a.family, "name": a.name, "axis": a.axis,
                  "deltas": {corpora[0]: a.deltas[0], corpora[1]: a.deltas[1]},
                  "sign": sign_class(*a.deltas, tolerance), "source": a.source, "run_id": a.run_id,
                  "tier": a.tier, "included": a in kept}
                 for a in sorted(arms, key=lambda a: (a.family, a.name))],
        "families": fam_docs,
        "pooled": {**summarize(kept, corpora, tolerance=tolerance), "caveat": POOLED_CAVEAT},
        "axes": axis_docs,
        "pearson_note": (f"Pearson is reported to be distrusted: flagged outlier-driven when it differs "
                         f"from Spearman by more than {OUTLIER_GAP} or one arm moves it that much"),
    }
