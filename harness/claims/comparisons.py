"""The comparisons claim (``comparisons.json``, ``harness intervals --control``): every arm
against its control per corpus x class x measure, with the paired test, Holm's correction
and the verdict (docs/statistics.md).

What a verdict means is defined here, so the writer and every reader agree: Holm's
adjustment (Holm 1979, Scand. J. Statist. 6:65-70), the family's Holm floor (the smallest
adjusted p any outcome could give a member) and the verdict read off both.  The warehouse
recomputes each row's family size, Holm floor and verdict from the document's own p-values.
"""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime
from typing import Any, ClassVar, Iterable, Mapping, Sequence

from harness.claims import base as b
from harness.claims.metrics import COMPARISONS_JSON
from harness.claims.metrics import run_id as metrics_run_id
from harness.core.measures import delta_range, measure_range
from harness.core.tiers import at_least_as_restrictive, most_restrictive_tier

VERDICTS = ("significant", "not significant", "cannot be significant")
#: what ``delta_lower`` / ``delta_upper`` are (schema 2); the unadjusted bootstrap interval is
#: ``unadjusted_lower`` / ``unadjusted_upper`` at the document's ``confidence``
DELTA_INTERVAL = ("paired randomization test inverted at the Holm level of each row's verdict "
                  "(alpha / holm_divisor; Lehmann & Romano 2005; Strassburger & Bretz 2008): "
                  "excludes 0 exactly when the verdict is significant")
TEST_METHODS = ("exact", "monte-carlo")

COLUMNS: b.Columns = (
    ("document_id", "string"), ("control_run_id", "string"), ("control_name", "string"),
    ("arm_run_id", "string"), ("arm_name", "string"), ("corpus", "string"), ("tier", "string"),
    ("query_class", "string"), ("measure", "string"), ("n", "int64"),
    ("control_mean", "double"), ("arm_mean", "double"), ("delta", "double"),
    ("delta_lower", "double"), ("delta_upper", "double"), ("delta_confidence", "double"),
    ("holm_divisor", "int32"), ("unadjusted_lower", "double"), ("unadjusted_upper", "double"),
    ("confidence", "double"), ("interval_method", "string"), ("discordant", "int64"), ("improved", "int64"),
    ("worsened", "int64"), ("test_method", "string"), ("permutations", "int64"),
    ("p", "double"), ("p_floor", "double"), ("p_holm", "double"), ("family_size", "int32"),
    ("alpha", "double"), ("verdict", "string"), ("seed", "int64"), ("ingested_at", "timestamp"))

ROW_FIELDS = ("corpus", "tier", "query_class", "measure", "arm", "n", "control_mean",
              "arm_mean", "delta", "delta_lower", "delta_upper", "delta_confidence",
              "holm_divisor", "unadjusted_lower", "unadjusted_upper", "discordant", "improved",
              "worsened", "method", "permutations", "p", "p_floor", "p_holm", "family_size",
              "verdict")


def holm(pvalues: Iterable[float]) -> list[float]:
    """Holm-adjusted p-values, in the input order (R's ``p.adjust(p, "holm")``; Holm 1979)."""
    p = [float(x) for x in pvalues]
    if not all(0.0 <= x <= 1.0 for x in p):  # NaN fails both comparisons
        raise ValueError(f"p-values must lie in [0, 1], got {p}")
    m = len(p)
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(sorted(range(m), key=p.__getitem__)):  # stable: ties keep order
        running = max(running, (m - rank) * p[i])
        adjusted[i] = min(1.0, running)
    return adjusted


def holm_divisors(pvalues: Sequence[float], alpha: float) -> list[int]:
    """The divisor c of each hypothesis's level ``alpha / c`` in Holm's step-down, in input
    order: ``m - r + 1`` for a hypothesis Holm rejects at rank r; ``m - R`` for every one it
    retains (R rejected: the level at which the step-down stopped; Strassburger & Bretz
    2008).  A delta interval inverted at that level excludes 0 exactly when Holm rejects:
    ``c p <= alpha`` is the comparison :func:`holm` makes for the rejected ones, and
    ``(m - R) p > alpha`` holds for the first retained p and every larger one.  See
    :mod:`harness.stats.inversion`."""
    adjusted = holm(pvalues)
    m = len(adjusted)
    rejected = sum(1 for q in adjusted if q <= alpha)
    order = sorted(range(m), key=lambda i: float(pvalues[i]))  # holm's order (stable)
    out = [m - rejected] * m
    for rank, i in enumerate(order):
        if adjusted[i] <= alpha:
            out[i] = m - rank
    return out


def holm_floors(floors: Sequence[float]) -> list[float]:
    """The smallest Holm-adjusted p each member of a family could attain, in input order.

    ``floors`` are the members' raw floors (the smallest p each test allows).  Member j
    ranked r-th, behind the r-1 other members with the lowest floors ``g_1 <= ... <=
    g_{r-1}`` (each at its floor), has raw p at least ``q_r = max(f_j, g_{r-1})`` and Holm
    p ``max((m - r + 1) q_r, max_{i<r} (m - i + 1) g_i)``; its Holm floor is the least of
    these over r (capped at 1).  Every other arrangement only raises some term.  A family
    of one keeps its raw floor; m members sharing floor f get ``m f``.
    """
    f = [float(x) for x in floors]
    for x in f:
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"p floors must lie in [0, 1], got {f}")
    m = len(f)
    out = []
    for j, own in enumerate(f):
        others = sorted(f[:j] + f[j + 1:])
        best, ahead = 1.0, 0.0
        for r in range(1, m + 1):
            q = own if r == 1 else max(own, others[r - 2])
            best = min(best, max(ahead, (m - r + 1) * q))
            if r < m:
                ahead = max(ahead, (m - r + 1) * others[r - 1])
        out.append(min(1.0, best))
    return out


def verdict(p_adjusted: float, floor: float, alpha: float) -> str:
    """``cannot be significant`` (``floor > alpha``), ``significant`` or ``not significant``.

    ``floor`` is the smallest value ``p_adjusted`` could take: the Holm floor
    (:func:`holm_floors`) for a Holm-adjusted p; for a family of one it is the raw floor.
    """
    if floor > alpha:
        return "cannot be significant"
    return "significant" if p_adjusted <= alpha else "not significant"


#: standard errors of a Monte Carlo p within which a verdict is *borderline* (99.9%, two-sided)
MONTE_CARLO_Z = 3.29


def monte_carlo_error(p: float, permutations: int | None) -> float:
    """The standard error of a Monte Carlo p from ``permutations`` sign vectors,
    ``sqrt(p (1 - p) / N)`` (binomial; Phipson & Smyth 2010); 0 for an exact p (``None``)."""
    if permutations is None or permutations <= 0:
        return 0.0
    p = min(1.0, max(0.0, float(p)))
    return math.sqrt(p * (1.0 - p) / permutations)


def is_borderline(p: float, p_holm: float, permutations: int | None, alpha: float) -> bool:
    """Whether a Holm verdict at ``alpha`` lies within Monte Carlo error: the adjusted p, with
    the raw p moved by :data:`MONTE_CARLO_Z` standard errors (scaled by the row's Holm
    multiplier ``p_holm / p``), falls on both sides of ``alpha``.  Never for an exact p."""
    error = monte_carlo_error(p, permutations)
    if error == 0.0 or not p > 0.0:
        return False
    spread = MONTE_CARLO_Z * error * (float(p_holm) / float(p))
    return float(p_holm) - spread <= alpha < float(p_holm) + spread


def family_expectations(rows: Sequence[Mapping[str, Any]], alpha: float) -> list[b.JSON]:
    """What each ``comparisons.json`` row's family says its Holm numbers must be.

    Rows are grouped into families by ``(corpus, query_class, measure)``; within one,
    ``p_holm`` is :func:`holm` of the members' raw ``p``, ``p_holm_floor`` is
    :func:`holm_floors` of their ``p_floor``, ``family_size`` their count, ``verdict``
    follows from those (:func:`verdict`) and ``holm_divisor`` is :func:`holm_divisors`.
    Returns one dict per row, in row order, for a reader (the warehouse) to compare with
    what the row claims.
    """
    groups: dict[tuple[str, str, str], list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault((row["corpus"], row["query_class"], row["measure"]), []).append(i)
    out: list[b.JSON] = [{} for _ in rows]
    for members in groups.values():
        raw = [float(rows[i]["p"]) for i in members]
        adjusted = holm(raw)
        floors = holm_floors([float(rows[i]["p_floor"]) for i in members])
        divisors = holm_divisors(raw, alpha)
        for i, p_adj, floor, divisor in zip(members, adjusted, floors, divisors):
            out[i] = {"p_holm": p_adj, "p_holm_floor": floor, "family_size": len(members),
                      "verdict": verdict(p_adj, floor, alpha), "holm_divisor": divisor}
    return out


@dataclasses.dataclass(frozen=True)
class ComparisonsClaim(b.Claim):
    KIND: ClassVar[str] = "comparisons"
    #: 2: ``delta_lower`` / ``delta_upper`` are the test's own interval at the verdict's Holm
    #: level; the bootstrap interval moved to ``unadjusted_lower`` / ``unadjusted_upper``
    SCHEMA_VERSION: ClassVar[int] = 2
    RESULTS_FILE: ClassVar[str] = COMPARISONS_JSON
    TABLES: ClassVar[Mapping[str, b.Columns]] = {"comparisons": COLUMNS}

    control: Mapping[str, Any]
    arms: list[b.JSON]
    alpha: float
    seed: int
    confidence: float
    interval_method: str
    rows: list[b.JSON]
    kind: str = "comparisons"
    schema_version: int = 2
    tier: Any = b.ABSENT
    delta_interval: Any = b.ABSENT
    family_size: Any = b.ABSENT
    family_note: Any = b.ABSENT
    measures: Any = b.ABSENT
    test: Any = b.ABSENT
    exact_max_discordant: Any = b.ABSENT
    correction: Any = b.ABSENT
    permutations: Any = b.ABSENT
    resamples: Any = b.ABSENT
    stream: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        """Runs named; each row's delta, interval, counts and p-values coherent and inside
        the measure's range; the verdict recomputed from the Holm p, the family's Holm floor
        and alpha (:func:`family_expectations`); a document tier no laxer than its rows."""
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        b.need(doc, ("control", "arms", "alpha", "seed", "confidence", "interval_method",
                     "rows"), source)
        control = b.mapping(doc["control"], source, "control")
        b.need(control, ("name", "run_id"), source, "control.")
        b.text(control["name"], source, "control.name")
        b.run_id_value(control["run_id"], source, "control.run_id")
        arms: dict[str, str] = {}
        for i, arm in enumerate(b.seq(doc["arms"], source, "arms")):
            b.mapping(arm, source, f"arms[{i}]")
            b.need(arm, ("name", "run_id"), source, f"arms[{i}].")
            name = b.text(arm["name"], source, f"arms[{i}].name")
            if name in arms:
                b.fail(source, f"arms[{i}].name", f"arm {name!r} is listed twice")
            arms[name] = b.run_id_value(arm["run_id"], source, f"arms[{i}].run_id")
        if not arms:
            b.fail(source, "arms", "no arm compared")
        alpha = b.number(doc["alpha"], source, "alpha", lo=0, hi=1)
        b.integer(doc["seed"], source, "seed")
        b.number(doc["confidence"], source, "confidence", lo=0, hi=1)
        b.text(doc["interval_method"], source, "interval_method")
        rows = b.seq(doc["rows"], source, "rows")
        for i, row in enumerate(rows):
            _check_row(row, i, arms, source)
        b.unique([(r["corpus"], r["query_class"], r["measure"], r["arm"]) for r in rows],
                 source, "corpus, class, measure, arm")
        for i, (row, want) in enumerate(zip(rows, family_expectations(rows, alpha))):
            w = f"rows[{i}]."
            if row["family_size"] != want["family_size"]:
                b.fail(source, w + "family_size", f"{row['family_size']!r}, but the document "
                                                  f"holds {want['family_size']} arms for this "
                                                  "slice and measure")
            if "p_holm_floor" in row and abs(row["p_holm_floor"] - want["p_holm_floor"]) > b.TOLERANCE:
                b.fail(source, w + "p_holm_floor", f"{row['p_holm_floor']!r} is not the "
                                                   f"family's Holm floor {want['p_holm_floor']!r}")
            expected = verdict(row["p_holm"], want["p_holm_floor"], alpha)
            if row["verdict"] != expected:
                b.fail(source, w + "verdict", f"{row['verdict']!r} contradicts Holm p "
                                              f"{row['p_holm']!r}, Holm floor "
                                              f"{want['p_holm_floor']!r} (raw floor "
                                              f"{row['p_floor']!r}, family of "
                                              f"{want['family_size']}) and alpha {alpha!r} "
                                              f"({expected!r})")
            _check_compatible(row, want["holm_divisor"], alpha, source, w)
        if doc.get("tier") is not None and rows:
            pooled = most_restrictive_tier([row["tier"] for row in rows])
            if doc["tier"] != pooled:
                b.fail(source, "tier", f"{doc['tier']!r}, but the rows' most restrictive tier "
                                       f"is {pooled!r}")

    def referenced_runs(self) -> tuple[str, ...]:
        return (self.control["run_id"], *(a["run_id"] for a in self.arms))

    def claimed_tier(self) -> str | None:
        if self.tier is not b.ABSENT and self.tier is not None:
            stated: str = self.tier  # the tier the document states
            return stated
        return most_restrictive_tier(r["tier"] for r in self.rows) if self.rows else None

    def check_against_run(self, metrics: Mapping[str, Any], source: str) -> None:
        """This run is one of the runs compared, and no row claims a tier less restrictive
        than this run's row."""
        rid = metrics_run_id(metrics)
        compared = set(self.referenced_runs())
        if rid not in compared:
            b.fail(source, "arms", f"this run ({rid[:12]}) is not among the runs compared "
                                   f"({sorted(r[:12] for r in compared)})")
        rows = {(r["corpus"], r["query_class"]): r for r in metrics["rows"]}
        for i, r in enumerate(self.rows):
            claim = rows.get((r["corpus"], r["query_class"]))
            if claim is not None and not at_least_as_restrictive(r["tier"], claim["tier"]):
                b.fail(source, f"rows[{i}].tier", f"tier {r['tier']!r} is less restrictive "
                                                  f"than this run's {claim['tier']!r} for "
                                                  f"({r['corpus']}, {r['query_class']})")

    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> b.TableRows:
        arms = {a["name"]: a["run_id"] for a in self.arms}
        return {"comparisons": [{
            "document_id": document_id, "control_run_id": self.control["run_id"],
            "control_name": self.control["name"], "arm_run_id": arms[r["arm"]],
            "arm_name": r["arm"], "corpus": r["corpus"], "tier": r["tier"],
            "query_class": r["query_class"], "measure": r["measure"], "n": r["n"],
            "control_mean": r["control_mean"], "arm_mean": r["arm_mean"], "delta": r["delta"],
            "delta_lower": r["delta_lower"], "delta_upper": r["delta_upper"],
            "delta_confidence": r["delta_confidence"], "holm_divisor": r["holm_divisor"],
            "unadjusted_lower": r["unadjusted_lower"], "unadjusted_upper": r["unadjusted_upper"],
            "confidence": self.confidence, "interval_method": self.interval_method,
            "discordant": r["discordant"], "improved": r["improved"],
            "worsened": r["worsened"], "test_method": r["method"],
            "permutations": r["permutations"], "p": r["p"], "p_floor": r["p_floor"],
            "p_holm": r["p_holm"], "family_size": r["family_size"], "alpha": self.alpha,
            "verdict": r["verdict"], "seed": self.seed, "ingested_at": stamp}
            for r in self.rows]}


def _check_compatible(row: Mapping[str, Any], divisor: int, alpha: float,
                      source: b.SourceName, w: str) -> None:
    """The row's delta interval is the one its verdict's Holm level gives
    (:func:`holm_divisors`), and it excludes 0 exactly when the verdict is significant."""
    if row["holm_divisor"] != divisor:
        b.fail(source, w + "holm_divisor", f"{row['holm_divisor']!r}, but Holm's step-down "
                                           f"decides this row at alpha / {divisor}")
    if abs(row["delta_confidence"] - (1.0 - alpha / divisor)) > b.TOLERANCE:
        b.fail(source, w + "delta_confidence", f"{row['delta_confidence']!r} is not "
                                               f"1 - alpha / {divisor}")
    lo, hi = row["delta_lower"], row["delta_upper"]
    excludes_zero = (lo is not None and lo > 0) or (hi is not None and hi < 0)
    if excludes_zero != (row["verdict"] == "significant"):
        b.fail(source, w + "delta_lower", f"the delta interval [{lo!r}, {hi!r}] "
                                          f"{'excludes' if excludes_zero else 'contains'} 0 "
                                          f"but the verdict is {row['verdict']!r}")


def _check_row(row: Any, i: int, arms: Mapping[str, str], source: b.SourceName) -> None:
    w = f"rows[{i}]."
    b.mapping(row, source, f"rows[{i}]")
    b.need(row, ROW_FIELDS, source, w)
    for name in ("corpus", "query_class", "measure"):
        b.text(row[name], source, w + name)
    b.tier(row["tier"], source, w + "tier")
    if row["arm"] not in arms:
        b.fail(source, w + "arm", f"{row['arm']!r} is not among the arms {sorted(arms)}")
    b.integer(row["n"], source, w + "n", lo=1)
    lo_m, hi_m = measure_range(row["measure"])
    lo_d, hi_d = delta_range(row["measure"])
    ctl = b.number(row["control_mean"], source, w + "control_mean", lo=lo_m, hi=hi_m)
    arm = b.number(row["arm_mean"], source, w + "arm_mean", lo=lo_m, hi=hi_m)
    delta = b.number(row["delta"], source, w + "delta", lo=lo_d, hi=hi_d)
    if abs((arm - ctl) - delta) > b.TOLERANCE:
        b.fail(source, w + "delta", f"{delta!r} is not arm_mean - control_mean "
                                    f"({arm!r} - {ctl!r})")
    for lower, upper in (("delta_lower", "delta_upper"), ("unadjusted_lower", "unadjusted_upper")):
        nullable = lower == "delta_lower"  # None: unbounded (a measure without a range)
        lo = b.number(row[lower], source, w + lower, lo=lo_d, hi=hi_d, nullable=nullable)
        hi = b.number(row[upper], source, w + upper, lo=lo_d, hi=hi_d, nullable=nullable)
        if not b.within(delta, -math.inf if lo is None else lo, math.inf if hi is None else hi):
            b.fail(source, w + "delta", f"{delta!r} lies outside its own interval "
                                        f"{lower}/{upper} [{lo!r}, {hi!r}]")
    b.integer(row["holm_divisor"], source, w + "holm_divisor", lo=1)
    b.number(row["delta_confidence"], source, w + "delta_confidence", lo=0, hi=1)
    disc = b.integer(row["discordant"], source, w + "discordant")
    up = b.integer(row["improved"], source, w + "improved")
    down = b.integer(row["worsened"], source, w + "worsened")
    if up + down != disc:
        b.fail(source, w + "discordant", f"{disc} is not improved + worsened ({up} + {down})")
    b.choice(row["method"], TEST_METHODS, source, w + "method")
    b.integer(row["permutations"], source, w + "permutations", nullable=True, lo=1)
    p = b.number(row["p"], source, w + "p", lo=0, hi=1)
    b.number(row["p_floor"], source, w + "p_floor", lo=0, hi=1)
    p_holm = b.number(row["p_holm"], source, w + "p_holm", lo=0, hi=1)
    if p_holm + b.TOLERANCE < p:
        b.fail(source, w + "p_holm", f"{p_holm!r} is below the raw p {p!r}")
    b.integer(row["family_size"], source, w + "family_size", lo=1)
    b.choice(row["verdict"], VERDICTS, source, w + "verdict")
    if "p_holm_floor" in row:
        b.number(row["p_holm_floor"], source, w + "p_holm_floor", lo=0, hi=1)
