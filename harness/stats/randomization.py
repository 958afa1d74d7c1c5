"""Paired randomization test over queries, Holm's correction, and ``comparisons.json``.

**Test** (Smucker, Allan & Carterette, CIKM 2007): under the null hypothesis that the two
systems are exchangeable on every query, each per-query difference ``d_i = arm_i -
control_i`` is as likely to carry either sign.  The statistic is ``|sum d_i|``; the p-value
is the share of the ``2^k`` sign assignments (k = discordant queries, those with
``d_i != 0``; ties contribute nothing) whose statistic is at least the observed one.

* ``k <= 16``: exact enumeration of all ``2^k`` assignments.
* larger ``k``: seeded Monte Carlo over ``N`` random assignments, ``p = (b + 1) / (N + 1)``
  with ``b`` the assignments at least as extreme (Phipson & Smyth 2010: never 0).

The identity assignment and its mirror are always at least as extreme, so the smallest p
any outcome can produce is ``2 / 2^k = 2^(1-k)``: three discordant queries give 0.25.

**Exact on stored values.**  Per-query values reach the test through ``per_query.jsonl``,
rounded to 10 decimals (:mod:`harness.core.canonical`), and rational measures (MRR ``1/r``,
recall ``j/R``, AP) tie exactly: ``1/3 = 4 x 1/12`` is ``0.3333333333`` against
``4 x 0.0833333333 = 0.3333333332`` once stored, so a float comparison breaks the tie.  Each
difference is therefore taken as an integer count of ``10^-10`` units, ``D_i =
rint(d_i 10^10)`` (:func:`quantize`), and every signed sum is integer arithmetic (held in
float64, exact while a column's ``sum |D_i| < 2^53``, else refused).  A stored value is
within half a unit of the true one, so ``D_i`` is within one unit of ``d_i 10^10`` and a
signed sum of k terms within k units of its true value; comparing two of them is off by at
most ``2k`` units.  An assignment counts as at least as extreme when ``|S| >= |S_obs| - 2k``
units (:func:`tolerance_units`): no truly-as-extreme assignment is ever missed, so p is
never understated, and p equals the p of the unrounded values whenever distinct values of
the statistic lie more than ``4k`` units apart (multiples of ``1/L`` with ``4k < 10^10 / L``:
MRR@10 and recall over <= 10 relevant have ``L | 2520``).  Differences smaller than half a
unit are ties, as the stored files make them anyway.  Both paths share this arithmetic.

**Holm** (1979, Scand. J. Statist. 6:65-70): the m arms compared on one measure in one
corpus x class slice form a family; sorted ascending, ``p_(j)`` is adjusted to
``min(1, max_{i<=j} (m - i + 1) p_(i))``.  It controls the family-wise error at alpha under
any dependence between the arms.

The verdict is read off the Holm-adjusted p, so its floor must be too: an arm's **Holm
floor** (:func:`holm_floors`) is the smallest adjusted p any outcome of the whole family
could give it.  With m arms sharing one raw floor f it is ``m f``; an arm whose raw floor
is above its siblings' can do better by ranking after them.  A comparison whose Holm floor
exceeds alpha **cannot be significant** - a property of the labels and of the family's
size, distinct from a test that ran and was **not significant**.

Every arm is compared with the control only when the two runs measured the same thing:
:func:`provenance_differences` (metric engine, relevance policy, corpus versions, checksums
and tiers, granularity, scope, stage, the corpora sharing the index) must be empty.
"""

from __future__ import annotations

import logging
import math
import sys
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from harness.claims.comparisons import DELTA_INTERVAL, holm, holm_divisors, holm_floors, verdict
from harness.core.measures import delta_range

from harness.core.tiers import most_restrictive_tier
from harness.claims.metrics import comparability_notes
from harness.claims import ComparisonsClaim
from harness.stats.inversion import SignFlipNull, exact_null, inverted_interval, monte_carlo_null
from harness.stats.intervals import (METHODS, check_contains, interval_bounds, mean_jackknife,
                                     resample_sums)
from harness.stats.perquery import PerQueryIndex
from harness.core.seeding import STREAM_RULE, check_seed, derive_rng

log = logging.getLogger(__name__)

#: exact enumeration up to 2^16 = 65,536 sign assignments
EXACT_MAX_DISCORDANT = 16
#: sign-matrix entries held in memory at once
SIGN_BLOCK = 1 << 21
#: differences are counted in units of 10^-DECIMALS, the precision of a stored per-query
#: value (harness.core.canonical.FLOAT_DECIMALS)
DECIMALS = 10
#: float64 holds every integer below 2^53 exactly, whatever order a sum is taken in
EXACT_INTEGER_LIMIT = 2.0 ** 53

TEST_NAME = "paired randomization test (sign flips over per-query differences; Smucker et al. 2007)"
CORRECTION = "holm across the arms compared on one measure in one corpus x class slice"


@dataclass(frozen=True)
class PairedTest:
    """One arm against its control on one measure over paired queries."""

    n: int
    discordant: int
    improved: int
    worsened: int
    #: mean of arm - control
    delta: float
    p: float
    #: ``exact`` or ``monte-carlo``
    method: str
    permutations: int | None
    #: the smallest p any outcome on these discordant pairs could produce
    p_floor: float

    def to_dict(self) -> dict:
        return {"n": self.n, "discordant": self.discordant, "improved": self.improved,
                "worsened": self.worsened, "delta": self.delta, "p": self.p,
                "method": self.method, "permutations": self.permutations, "p_floor": self.p_floor}


def p_floor(discordant: int) -> float:
    """Smallest attainable two-sided p of a sign-flip test on ``discordant`` pairs: ``2^(1-k)``."""
    if discordant < 0:
        raise ValueError(f"discordant must be >= 0, got {discordant}")
    return 1.0 if discordant == 0 else 2.0 ** (1 - discordant)


def quantize(differences) -> np.ndarray:
    """Differences as whole counts of ``10^-DECIMALS`` units (float64 holding integers).

    Refuses a column whose ``sum |D_i|`` reaches ``2^53``: its signed sums would no longer
    be exact integers.
    """
    d = np.asarray(differences, dtype=np.float64)
    if not np.all(np.isfinite(d)):
        raise ValueError("per-query differences must be finite")
    units = np.rint(d * 10.0 ** DECIMALS)
    size = np.abs(units).sum(axis=0)
    if np.any(size >= EXACT_INTEGER_LIMIT):
        raise ValueError(f"per-query differences too large for exact sign-flip sums at 1e-{DECIMALS} "
                         f"resolution (sum of |differences| {float(np.max(size)) / 10 ** DECIMALS:.6g}"
                         f" >= 2^53 units)")
    return units + 0.0  # no -0.0


def tolerance_units(discordant):
    """``2k`` units: the most rounding can move ``|S| - |S_obs|`` for k stored differences."""
    return 2.0 * np.asarray(discordant, dtype=np.float64)


def exact_p(differences: Sequence[float]) -> float:
    """Exact two-sided sign-flip p-value, enumerating every assignment of the nonzero diffs
    (in integer units, with the rounding tolerance of the module docstring)."""
    units = quantize(differences)
    units = units[units != 0]
    k = units.size
    if k == 0:
        return 1.0
    if k > 24:
        raise ValueError(f"exact enumeration of 2^{k} sign assignments is too large; use Monte Carlo")
    bits = (np.arange(2 ** k, dtype=np.int64)[:, None] >> np.arange(k)) & 1
    stats = (1.0 - 2.0 * bits) @ units
    threshold = abs(units.sum()) - tolerance_units(k)
    extreme = np.count_nonzero(np.abs(stats) >= threshold)
    return float(extreme / 2 ** k)


def sign_flip_sums(units: np.ndarray, permutations: int,
                   rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``permutations`` random sign vectors over the n queries of ``units`` (``(n, m)``,
    whole units) and return, per vector, ``sum s_i x_i`` of each column (``(N, m)``) and
    ``sum s_i`` (``(N,)``).  The stream depends only on ``n`` and ``permutations``."""
    n, m = units.shape
    sums = np.empty((permutations, m), dtype=np.float64)
    totals = np.empty(permutations, dtype=np.float64)
    nbytes = (n + 7) // 8
    block = max(1, SIGN_BLOCK // n)
    for start in range(0, permutations, block):
        size = min(block, permutations - start)
        raw = rng.integers(0, 256, size=(size, nbytes), dtype=np.uint8)
        signs = 1.0 - 2.0 * np.unpackbits(raw, axis=1, count=n).astype(np.float64)
        sums[start:start + size] = signs @ units
        totals[start:start + size] = signs.sum(axis=1)
    return sums, totals


def monte_carlo_p(differences: np.ndarray, permutations: int, rng: np.random.Generator) -> np.ndarray:
    """Monte Carlo sign-flip p-values ``(b + 1) / (N + 1)`` for each column of ``(n, m)``.

    All columns share one stream of random sign vectors (over the same n queries); the
    stream depends only on ``n`` and ``permutations``.  Sums are in integer units, with the
    rounding tolerance of the module docstring.
    """
    units = _units_matrix(differences)
    sums, _ = sign_flip_sums(units, permutations, rng)
    return _monte_carlo_from_sums(units, sums, permutations)


def _units_matrix(differences) -> np.ndarray:
    d = np.atleast_2d(np.asarray(differences, dtype=np.float64))
    if d.ndim != 2:
        raise ValueError("differences must be (queries, columns)")
    return quantize(d)


def _monte_carlo_from_sums(units: np.ndarray, sums: np.ndarray, permutations: int) -> np.ndarray:
    observed = np.abs(units.sum(axis=0))
    threshold = observed - tolerance_units(np.count_nonzero(units, axis=0))
    extreme = np.count_nonzero(np.abs(sums) >= threshold, axis=0)
    return (extreme + 1) / (permutations + 1)


def _check_permutations(permutations) -> int:
    if isinstance(permutations, bool) or not isinstance(permutations, (int, np.integer)) \
            or permutations < 100:
        raise ValueError(f"permutations must be an integer >= 100, got {permutations!r}")
    return int(permutations)


def tests_from_differences(differences: np.ndarray, *, permutations: int = 10000,
                           rng: np.random.Generator,
                           exact_max: int = EXACT_MAX_DISCORDANT) -> list[PairedTest]:
    """One test per column of per-query differences ``(n, m)`` (arm - control).

    Columns with at most ``exact_max`` discordant queries are enumerated exactly; the rest
    share one Monte Carlo stream of sign vectors drawn from ``rng``.
    """
    return sign_flip_tests(differences, permutations=permutations, rng=rng,
                           exact_max=exact_max, nulls=False)[0]


def sign_flip_tests(differences: np.ndarray, *, permutations: int = 10000,
                    rng: np.random.Generator, exact_max: int = EXACT_MAX_DISCORDANT,
                    nulls: bool = True) -> tuple[list[PairedTest], list[SignFlipNull]]:
    """:func:`tests_from_differences`, and for each column the null distribution it used,
    able to test any shift ``H0: delta = d`` (:mod:`harness.stats.inversion`; an empty
    list with ``nulls=False``)."""
    want_nulls = nulls
    diffs = np.asarray(differences, dtype=np.float64)
    if diffs.ndim != 2 or diffs.shape[0] == 0:
        raise ValueError(f"differences must be a non-empty (queries, columns) array, got {diffs.shape}")
    if not np.all(np.isfinite(diffs)):
        raise ValueError("per-query values must be finite")
    permutations = _check_permutations(permutations)
    units = quantize(diffs)  # a difference under half a unit is a tie, as when stored
    discordant = np.count_nonzero(units, axis=0)
    mc_cols = [j for j in range(diffs.shape[1]) if discordant[j] > exact_max]
    mc_p: dict[int, float] = {}
    mc_null: dict[int, SignFlipNull] = {}
    if mc_cols:
        sums, totals = sign_flip_sums(units[:, mc_cols], permutations, rng)
        ps = _monte_carlo_from_sums(units[:, mc_cols], sums, permutations)
        for i, j in enumerate(mc_cols):
            mc_p[j] = float(ps[i])
            if want_nulls:
                mc_null[j] = monte_carlo_null(units[:, j], sums[:, i], totals)
    out: list[PairedTest] = []
    found: list[SignFlipNull] = []
    for j in range(diffs.shape[1]):
        d = diffs[:, j]
        k = int(discordant[j])
        if j in mc_p:
            p, method, perms = mc_p[j], "monte-carlo", permutations
            floor = max(p_floor(k), 1.0 / (permutations + 1))
            if want_nulls:
                found.append(mc_null[j])
        else:
            p, method, perms = exact_p(d), "exact", None
            floor = p_floor(k)
            if want_nulls:
                found.append(exact_null(units[:, j]))
        out.append(PairedTest(n=int(d.size), discordant=k,
                              improved=int(np.count_nonzero(units[:, j] > 0)),
                              worsened=int(np.count_nonzero(units[:, j] < 0)), delta=float(d.mean()),
                              p=p, method=method, permutations=perms, p_floor=floor))
    return out, found


def paired_tests(control: Sequence[float], arms: np.ndarray, *, permutations: int = 10000,
                 rng: np.random.Generator, exact_max: int = EXACT_MAX_DISCORDANT) -> list[PairedTest]:
    """Test each row of ``arms`` (``(m, n)``) against ``control`` (``(n,)``) on paired queries."""
    ctl = np.asarray(control, dtype=np.float64)
    arm = np.atleast_2d(np.asarray(arms, dtype=np.float64))
    if ctl.ndim != 1 or arm.shape[1] != ctl.size:
        raise ValueError(f"{arm.shape[1]} arm values per row but {ctl.size} control values")
    return tests_from_differences((arm - ctl[None, :]).T, permutations=permutations, rng=rng,
                                  exact_max=exact_max)


# --------------------------------------------------------------------------- comparisons.json


@dataclass(frozen=True)
class RunValues:
    """One run's claim and per-query values, as a comparison reads them
    (:func:`harness.evaluation.runs.load_run_values` reads one from a results directory).
    ``claim_source`` and ``values_source`` name the files, for error messages."""

    name: str
    run_id: str
    index: PerQueryIndex
    metrics: dict
    claim_source: str
    values_source: str


def provenance_differences(control: Mapping, arm: Mapping) -> list[str]:
    """Why two runs' per-query values are not two measurements of the same thing; empty
    when they are comparable.

    The notes :func:`harness.evaluation.rows.comparability_notes` gives ``harness compare``: metric
    engine, relevance policy, each shared corpus's version, checksum and tier
    (:func:`harness.evaluation.rows.provenance_notes`), retrieval granularity, scope and stage, and
    the corpora sharing the index.  The arms' own knobs (mode, legs, fusion, size) may differ:
    they are what a comparison is about.
    """
    return [note[2:] if note.startswith("- ") else note
            for note in comparability_notes(control, arm)]


def refuse_incomparable(control: Mapping, arm: Mapping, *, control_name: str,
                        control_source: str, arm_name: str, arm_source: str) -> None:
    """Raise ``ValueError`` when two claims (metrics.json, or what a run would record) are not
    two measurements of the same thing (:func:`provenance_differences`).  ``harness
    intervals``, ``harness gate`` and ``harness bench --gate`` refuse with this one message."""
    differences = provenance_differences(control, arm)
    if differences:
        raise ValueError(
            f"{arm_source}: arm {arm_name!r} and control {control_name!r} "
            f"({control_source}) measured different things: "
            f"{'; '.join(differences)}; a paired test between them compares the measurements, "
            f"not the arms")


def _check_comparable(control: RunValues, arm: RunValues) -> None:
    if arm.run_id == control.run_id:
        raise ValueError(f"{arm.claim_source}: arm {arm.name!r} is the control run itself "
                         f"(run id {arm.run_id[:12]})")
    refuse_incomparable(control.metrics, arm.metrics, control_name=control.name,
                        control_source=control.claim_source, arm_name=arm.name,
                        arm_source=arm.claim_source)


def _check_paired(control: RunValues, arm: RunValues) -> None:
    """The arm must have scored exactly the control's queries, in the same classes."""
    for corpus in sorted(set(control.index.corpora) | set(arm.index.corpora)):
        ctl_keys = set(control.index.keys(corpus, "all")) if corpus in control.index.corpora else set()
        arm_keys = set(arm.index.keys(corpus, "all")) if corpus in arm.index.corpora else set()
        if ctl_keys != arm_keys:
            only_ctl, only_arm = sorted(ctl_keys - arm_keys), sorted(arm_keys - ctl_keys)
            raise ValueError(
                f"{arm.values_source}: arm {arm.name!r} did not score the control's queries on "
                f"corpus {corpus!r}: {len(only_ctl)} only in the control {[q for _, q in only_ctl[:3]]}, "
                f"{len(only_arm)} only in the arm {[q for _, q in only_arm[:3]]}; a delta over different "
                f"query sets is not paired")
        for key in sorted(ctl_keys):
            if control.index.query_class(key) != arm.index.query_class(key):
                raise ValueError(
                    f"{arm.values_source}: query {key[1]!r} of corpus {key[0]!r} has class "
                    f"{arm.index.query_class(key)!r} in arm {arm.name!r} but "
                    f"{control.index.query_class(key)!r} in the control")


def compare_runs(control: RunValues, arms: Sequence[RunValues],
                 measures: Iterable[str] | None = None, *,
                 seed: int = 0, permutations: int = 10000, alpha: float = 0.05,
                 confidence: float = 0.95, resamples: int = 10000, interval_method: str = "bca",
                 exact_max: int = EXACT_MAX_DISCORDANT, progress: bool | None = None) -> dict:
    """The ``comparisons.json`` document: every arm against the control, paired by
    ``(corpus, query_id)``, per corpus x class, per corpus ``all`` and pooled ``all``.

    Each row: control and arm means, the delta with the interval of its own test at the
    Holm level of its verdict (``delta_lower``, ``delta_upper``, ``delta_confidence``:
    :mod:`harness.stats.inversion`) and its unadjusted paired-bootstrap interval
    (``unadjusted_lower``, ``unadjusted_upper`` at ``confidence``), discordant /
    improved / worsened counts, the test's method, p, Holm-adjusted p, the raw and Holm
    floors, the family size and the verdict.  The Holm family is ``arm_dirs``:
    pass every arm compared with this control at once (a family of one corrects nothing,
    and the document says so).  ``measures`` defaults to every measure the control
    recorded.  Refuses an arm that scored other queries or classes, or whose provenance
    differs from the control's (:func:`provenance_differences`).
    """
    from tqdm import tqdm

    seed = check_seed(seed)
    permutations = _check_permutations(permutations)
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if interval_method not in METHODS:
        raise ValueError(f"unknown bootstrap method {interval_method!r}; known: {sorted(METHODS)}")
    if not arms:
        raise ValueError("compare_runs needs at least one arm")
    names = [a.name for a in arms]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"arms must have distinct names (metrics.json control_name); repeated: {dupes}")
    for arm in arms:
        _check_comparable(control, arm)
        _check_paired(control, arm)
    measures = list(control.index.measures() if measures is None else measures)
    for m in measures:
        if m not in control.index.measures():
            raise ValueError(f"{control.values_source}: no per-query values for measure {m!r}; "
                             f"recorded: {list(control.index.measures())}")
    order = sorted(range(len(arms)), key=lambda i: arms[i].name)
    arms = [arms[i] for i in order]

    rows = []
    groups = control.index.groups()
    for corpus, cls in tqdm(groups, desc="comparisons", unit="slice", file=sys.stderr,
                            disable=None if progress is None else not progress):
        keys = control.index.keys(corpus, cls)
        tier = most_restrictive_tier([control.index.tier(keys)] + [a.index.tier(keys) for a in arms])
        ctl_cols = {m: control.index.values(keys, m) for m in measures}
        arm_cols = {(a.name, m): a.index.values(keys, m) for a in arms for m in measures}
        cols = [(a.name, m) for m in measures for a in arms]
        diffs = np.vstack([arm_cols[c] - ctl_cols[c[1]] for c in cols])
        col_tests, col_nulls = sign_flip_tests(
            diffs.T, permutations=permutations, exact_max=exact_max,
            rng=derive_rng(seed, "randomization", corpus, cls))
        tests, nulls = dict(zip(cols, col_tests)), dict(zip(cols, col_nulls))
        n = len(keys)
        sums = resample_sums(diffs, resamples, derive_rng(seed, "paired-delta", corpus, cls)) \
            if n > 1 else None
        unadjusted = {}
        for i, c in enumerate(cols):
            d = diffs[i]
            est = float(d.mean())
            if n < 2 or np.all(d == d[0]):
                unadjusted[c] = (est, est)
                continue
            lo, hi = interval_bounds(interval_method, sums[i] / n, est, mean_jackknife(d), confidence)
            check_contains(est, lo, hi, f"delta {c[0]} vs {control.name}, {corpus}/{cls}/{c[1]}")
            unadjusted[c] = (lo, hi)
        for m in measures:
            family = holm_family([tests[(a.name, m)] for a in arms],
                                 [nulls[(a.name, m)] for a in arms], alpha, delta_range(m))
            for a, decided in zip(arms, family):
                t = tests[(a.name, m)]
                rows.append({
                    "corpus": corpus, "tier": tier, "query_class": cls, "measure": m, "arm": a.name,
                    "control_mean": float(ctl_cols[m].mean()),
                    "arm_mean": float(arm_cols[(a.name, m)].mean()),
                    "unadjusted_lower": unadjusted[(a.name, m)][0],
                    "unadjusted_upper": unadjusted[(a.name, m)][1],
                    **t.to_dict(), **decided, "family_size": len(arms),
                })
    rows.sort(key=lambda r: (r["corpus"], r["query_class"], r["measure"], r["arm"]))
    return {
        "kind": ComparisonsClaim.KIND,
        "schema_version": ComparisonsClaim.SCHEMA_VERSION,
        "control": {"name": control.name, "run_id": control.run_id},
        "arms": [{"name": a.name, "run_id": a.run_id} for a in arms],
        "family_size": len(arms),
        "family_note": family_note(len(arms)),
        "measures": sorted(measures),
        "test": TEST_NAME,
        "exact_max_discordant": exact_max,
        "correction": CORRECTION,
        "alpha": alpha,
        "seed": seed,
        "permutations": permutations,
        "confidence": confidence,
        "resamples": resamples,
        "interval_method": interval_method,
        "delta_interval": DELTA_INTERVAL,
        "stream": STREAM_RULE + "; labels 'randomization' / 'paired-delta', corpus, query_class",
        #: the document as a whole is as restrictive as its most restrictive row
        "tier": most_restrictive_tier([r["tier"] for r in rows]) if rows else "B",
        "rows": rows,
    }


def holm_family(tests: Sequence[PairedTest], nulls: Sequence[SignFlipNull], alpha: float,
                delta_range: tuple[float, float]) -> list[dict]:
    """The Holm decisions of one family (one measure in one corpus x class slice) and each
    member's delta interval at the level that decided it: ``p_holm``, ``p_holm_floor``,
    ``verdict``, ``holm_divisor``, ``delta_confidence``, ``delta_lower``, ``delta_upper``
    (:mod:`harness.stats.inversion`)."""
    raw = [t.p for t in tests]
    adjusted = holm(raw)
    floors = holm_floors([t.p_floor for t in tests])
    divisors = holm_divisors(raw, alpha)
    out = []
    for t, null, p_adj, floor, divisor in zip(tests, nulls, adjusted, floors, divisors):
        lo, hi = inverted_interval(null, t.p, divisor, alpha, delta_range)
        out.append({"p_holm": p_adj, "p_holm_floor": floor,
                    "verdict": verdict(p_adj, floor, alpha), "holm_divisor": divisor,
                    "delta_confidence": 1.0 - alpha / divisor,
                    "delta_lower": lo, "delta_upper": hi})
    return out


def family_note(family_size: int) -> str:
    """What the Holm family of a comparisons document is (and is not)."""
    if family_size == 1:
        return ("a family of one arm: the Holm-adjusted p equals the raw p; arms compared with "
                "this control one at a time were not corrected for each other")
    return (f"Holm across the {family_size} arms of this document, per corpus x class slice and "
            "measure")


def minimum_discordant(alpha: float, family_size: int = 1) -> int:
    """Fewest discordant queries whose floor can reach ``alpha`` in a family of
    ``family_size`` arms sharing that floor: ``m 2^(1-k) <= alpha``, i.e.
    ``ceil(1 + log2(m/alpha))`` (6 for one arm at 0.05, 8 for four)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if isinstance(family_size, bool) or not isinstance(family_size, int) or family_size < 1:
        raise ValueError(f"family_size must be a positive integer, got {family_size!r}")
    k = max(1, math.ceil(1 + math.log2(family_size / alpha) - 1e-12))
    while family_size * p_floor(k) > alpha:
        k += 1
    return k
