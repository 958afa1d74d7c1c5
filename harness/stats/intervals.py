"""Intervals for metric rows: bootstrap over queries, paired deltas and ratios, exact binomial.

* **Bootstrap over queries** (Efron & Tibshirani 1993): resample the row's queries with
  replacement; the interval is read off the distribution of the resampled mean.
  ``percentile`` takes its alpha/2 and 1-alpha/2 quantiles; ``bca`` (bias-corrected and
  accelerated, Efron 1987, JASA 82:171-185) shifts those quantiles by the bias
  ``z0 = Phi^-1(share of resamples below the estimate, ties counted half)`` and the
  acceleration ``a = sum(d^3) / (6 (sum d^2)^1.5)`` with ``d`` the jackknife deviations,
  which keeps coverage near nominal on skewed per-query distributions.
* **Paired delta**: the bootstrap of per-query differences ``candidate - control``.
* **Paired ratio** ``mean(numerator) / mean(denominator)``: each resample draws query indices
  once and scores numerator and denominator on the same ones.  Resampling only the numerator
  (or the two separately) builds an interval for a different quantity than the estimate; the
  point estimate must lie inside its own interval, and :func:`check_contains` raises when it
  does not rather than widening anything.
* **Clopper-Pearson** (1934, Biometrika 26:404-413) for measures whose per-query value is 0/1
  (``Measure.binary_valued``, and the ``file:`` forms of those measures): exact,
  ``[B(a/2; k, n-k+1), B(1-a/2; k+1, n-k)]``; at 10/10 the lower bound is
  ``(a/2)^(1/n) = 0.6915``.  This is the product's one implementation: certificates and the
  power audit call :func:`clopper_pearson` too.

Everything is vectorised numpy and seeded (:mod:`harness.core.seeding`); the seed and the
resample count are recorded with every interval.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from statistics import NormalDist
from typing import Iterable, Mapping, Sequence

import numpy as np

from harness.core.measures import FILE_PREFIX, MEASURES
from harness.claims.metrics import run_id
from harness.claims import IntervalsClaim
from harness.stats.perquery import PerQueryIndex
from harness.core.seeding import STREAM_RULE, check_seed, derive_rng

log = logging.getLogger(__name__)

#: the bootstrap methods for non-binary measures
METHODS: tuple[str, ...] = ("bca", "percentile")
CLOPPER_PEARSON = "clopper-pearson"
#: resampled indices held in memory at once (per block of resamples)
BLOCK_ELEMENTS = 1 << 20
#: absolute slack when checking that an estimate lies in its interval (float summation order
#: differs between the estimate and the resamples; this is a comparison, never a widening)
CONTAIN_TOLERANCE = 1e-9
#: a metrics.json mean and the mean of its per-query rows must agree this closely
#: (metrics.json stores 10 decimals)
MEAN_TOLERANCE = 1e-8

_NORMAL = NormalDist()


class IntervalError(ValueError):
    """An interval that cannot be a claim (its estimate lies outside it, or it is undefined)."""


@dataclass(frozen=True)
class Interval:
    estimate: float
    lower: float
    upper: float
    method: str
    confidence: float
    n: int
    seed: int | None = None
    resamples: int | None = None
    #: every query had the same value: no resampling can move the mean
    degenerate: bool = False

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def to_dict(self) -> dict:
        return {"estimate": self.estimate, "lower": self.lower, "upper": self.upper,
                "method": self.method, "confidence": self.confidence, "n": self.n,
                "seed": self.seed, "resamples": self.resamples, "degenerate": self.degenerate}


# --------------------------------------------------------------------------- checks


def check_contains(estimate: float, lower: float, upper: float, what: str = "interval") -> None:
    """Raise :class:`IntervalError` unless ``lower <= estimate <= upper`` (up to float slack)."""
    if not (lower - CONTAIN_TOLERANCE <= estimate <= upper + CONTAIN_TOLERANCE):
        raise IntervalError(
            f"{what}: the point estimate {estimate:.6g} lies outside its own interval "
            f"[{lower:.6g}, {upper:.6g}]; the interval was computed for a different quantity")


def _check_confidence(confidence: float) -> float:
    if not (isinstance(confidence, (int, float)) and 0.0 < confidence < 1.0):
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence!r}")
    return float(confidence)


def _check_resamples(resamples: int) -> int:
    if isinstance(resamples, bool) or not isinstance(resamples, (int, np.integer)) or resamples < 100:
        raise ValueError(f"resamples must be an integer >= 100, got {resamples!r}")
    return int(resamples)


def _as_vector(values, what: str) -> np.ndarray:
    arr = np.asarray(values, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{what}: expected a non-empty 1-d sequence of per-query values")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what}: per-query values must be finite")
    return arr


# --------------------------------------------------------------------------- resampling


def resample_sums(columns: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Sums of each column over ``resamples`` bootstrap draws of the rows (query indices).

    ``columns`` is ``(k, n)``: k series over the same n queries.  One draw of n indices is
    shared by all k series (paired), and the sequence of random calls depends only on
    ``n`` and ``resamples``, so adding a series never changes another's resamples.
    Returns ``(k, resamples)``.
    """
    columns = np.atleast_2d(np.asarray(columns, dtype=np.float64))
    k, n = columns.shape
    dtype = np.uint16 if n <= np.iinfo(np.uint16).max + 1 else np.uint32
    out = np.empty((k, resamples), dtype=np.float64)
    block = max(1, BLOCK_ELEMENTS // n)
    for start in range(0, resamples, block):
        size = min(block, resamples - start)
        idx = rng.integers(0, n, size=(size, n), dtype=dtype)
        for j in range(k):
            out[j, start:start + size] = columns[j][idx].sum(axis=1)
    return out


def percentile_bounds(replicates: np.ndarray, confidence: float) -> tuple[float, float]:
    """The alpha/2 and 1-alpha/2 quantiles of the bootstrap replicates."""
    alpha = 1.0 - confidence
    lo, hi = np.quantile(replicates, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


def bca_bounds(replicates: np.ndarray, estimate: float, jackknife: np.ndarray,
               confidence: float) -> tuple[float, float]:
    """BCa bounds (Efron 1987): percentile levels corrected for bias ``z0`` and acceleration ``a``."""
    b = replicates.size
    tol = 1e-12 * max(1.0, abs(estimate))
    below = np.count_nonzero(replicates < estimate - tol)
    tied = np.count_nonzero(np.abs(replicates - estimate) <= tol)
    share = (below + 0.5 * tied) / b
    share = min(max(share, 0.5 / b), 1.0 - 0.5 / b)
    z0 = _NORMAL.inv_cdf(share)
    dev = jackknife.mean() - jackknife
    spread = float(np.sum(dev ** 2))
    accel = float(np.sum(dev ** 3)) / (6.0 * spread ** 1.5) if spread > 0 else 0.0
    alpha = 1.0 - confidence
    levels = []
    for z in (_NORMAL.inv_cdf(alpha / 2), _NORMAL.inv_cdf(1 - alpha / 2)):
        w = z0 + z
        denom = 1.0 - accel * w
        if denom <= 0:
            raise IntervalError(f"BCa is undefined here (acceleration {accel:.3g} too large for "
                                f"z0 {z0:.3g}); use the percentile method")
        levels.append(_NORMAL.cdf(z0 + w / denom))
    lo, hi = np.quantile(replicates, levels)
    return float(lo), float(hi)


def interval_bounds(method: str, replicates, estimate, jackknife, confidence):
    """Bounds from bootstrap ``replicates`` by ``method`` (``bca`` needs the jackknife values)."""
    if method == "bca":
        return bca_bounds(replicates, estimate, jackknife, confidence)
    if method == "percentile":
        return percentile_bounds(replicates, confidence)
    raise ValueError(f"unknown bootstrap method {method!r}; known: {sorted(METHODS)}")


def mean_jackknife(values: np.ndarray) -> np.ndarray:
    """Leave-one-out means, in closed form."""
    n = values.size
    return (values.sum() - values) / (n - 1)


def _rng(seed: int, rng: np.random.Generator | None, *labels: str) -> np.random.Generator:
    return rng if rng is not None else derive_rng(seed, *labels)


def mean_interval_from_sums(values, sums, method, confidence, seed, resamples, what) -> Interval:
    """The interval of ``mean(values)`` from resampled ``sums`` (:func:`resample_sums`), checked
    to contain its estimate; a constant (or single) sample is degenerate and needs no sums."""
    n = values.size
    estimate = float(values.mean())
    if n < 2 or np.all(values == values[0]):
        return Interval(estimate, estimate, estimate, method, confidence, n, seed, resamples, True)
    lo, hi = interval_bounds(method, sums / n, estimate, mean_jackknife(values), confidence)
    check_contains(estimate, lo, hi, what)
    return Interval(estimate, lo, hi, method, confidence, n, seed, resamples)


# --------------------------------------------------------------------------- public intervals


def bootstrap_mean_interval(values: Sequence[float], *, method: str = "bca", confidence: float = 0.95,
                            resamples: int = 10000, seed: int = 0,
                            rng: np.random.Generator | None = None) -> Interval:
    """Bootstrap interval for the mean of per-query ``values`` (percentile or BCa)."""
    values = _as_vector(values, "bootstrap")
    confidence = _check_confidence(confidence)
    resamples = _check_resamples(resamples)
    seed = check_seed(seed)
    if method not in METHODS:
        raise ValueError(f"unknown bootstrap method {method!r}; known: {sorted(METHODS)}")
    sums = resample_sums(values[None, :], resamples, _rng(seed, rng, "bootstrap"))[0]
    return mean_interval_from_sums(values, sums, method, confidence, seed, resamples, "bootstrap mean")


def paired_ratio_interval(numerator: Sequence[float], denominator: Sequence[float], *,
                          method: str = "bca", confidence: float = 0.95, resamples: int = 10000,
                          seed: int = 0, rng: np.random.Generator | None = None) -> Interval:
    """Interval for ``mean(numerator) / mean(denominator)`` by the paired ratio bootstrap.

    Each draw resamples query indices once and sums both series over the same indices, so
    the replicates estimate the same quantity as the point estimate.  A resample whose
    denominator sums to zero makes the ratio undefined and raises.
    """
    num = _as_vector(numerator, "paired ratio: numerator")
    den = _as_vector(denominator, "paired ratio: denominator")
    if num.size != den.size:
        raise ValueError(f"paired ratio: {num.size} numerator values but {den.size} denominator values")
    confidence = _check_confidence(confidence)
    resamples = _check_resamples(resamples)
    seed = check_seed(seed)
    if method not in METHODS:
        raise ValueError(f"unknown bootstrap method {method!r}; known: {sorted(METHODS)}")
    if den.sum() <= 0:
        raise IntervalError("paired ratio: the denominator's mean is not positive; the ratio is undefined")
    n = num.size
    estimate = float(num.sum() / den.sum())
    if n < 2 or (np.all(num == num[0]) and np.all(den == den[0])):
        return Interval(estimate, estimate, estimate, method, confidence, n, seed, resamples, True)
    sums = resample_sums(np.vstack([num, den]), resamples, _rng(seed, rng, "paired-ratio"))
    zero = int(np.count_nonzero(sums[1] <= 0))
    if zero:
        raise IntervalError(f"paired ratio: {zero} of {resamples} resamples have a zero denominator; "
                            "the ratio is too unstable for an interval on these queries")
    replicates = sums[0] / sums[1]
    jackknife = (num.sum() - num) / (den.sum() - den) if np.all(den.sum() - den > 0) else None
    if jackknife is None and method == "bca":
        raise IntervalError("paired ratio: a leave-one-out denominator is zero; BCa's acceleration "
                            "is undefined (use the percentile method)")
    lo, hi = interval_bounds(method, replicates, estimate, jackknife, confidence)
    check_contains(estimate, lo, hi, "paired ratio")
    return Interval(estimate, lo, hi, method, confidence, n, seed, resamples)


def clopper_pearson(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval (Clopper & Pearson 1934) for ``successes`` of ``n``."""
    from scipy.stats import beta

    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if isinstance(successes, bool) or not isinstance(successes, (int, np.integer)) \
            or not 0 <= successes <= n:
        raise ValueError(f"successes must be an integer in [0, {n}], got {successes!r}")
    alpha = 1.0 - _check_confidence(confidence)
    lower = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, n - successes + 1))
    upper = 1.0 if successes == n else float(beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return lower, upper


def binary_interval(values: Sequence[float], confidence: float = 0.95, what: str = "binary") -> Interval:
    """Clopper-Pearson interval for per-query values that are all 0 or 1."""
    arr = _as_vector(values, what)
    if not np.all((arr == 0.0) | (arr == 1.0)):
        bad = arr[(arr != 0.0) & (arr != 1.0)][0]
        raise ValueError(f"{what}: a binary-valued measure has a per-query value {bad!r} (expected 0 or 1)")
    k, n = int(arr.sum()), int(arr.size)
    lo, hi = clopper_pearson(k, n, confidence)
    estimate = k / n
    check_contains(estimate, lo, hi, what)
    return Interval(estimate, lo, hi, CLOPPER_PEARSON, confidence, n, None, None, False)


def is_binary_measure(measure: str) -> bool:
    """True when the measure's per-query value is 0 or 1 (``Measure.binary_valued``).

    A file-level measure (``file:Success@5``) is its base measure computed over files, so
    it is binary exactly when its base is.
    """
    base = measure[len(FILE_PREFIX):] if measure.startswith(FILE_PREFIX) else measure
    m = MEASURES.get(base)
    return bool(m and m.binary_valued)


# --------------------------------------------------------------------------- intervals.json


def _row_measures(row: Mapping, only: Iterable[str] | None) -> list[str]:
    names = sorted(row["metrics"])
    if only is not None:
        wanted = set(only)
        names = [m for m in names if m in wanted]
    return names


def row_intervals(metrics_doc: Mapping, per_query_rows: Iterable[Mapping], *, seed: int = 0,
                  resamples: int = 10000, confidence: float = 0.95, method: str = "bca",
                  measures: Iterable[str] | None = None, source: str = "per_query.jsonl") -> dict:
    """The ``intervals.json`` document of one results directory.

    One entry per metric row x measure (pooled ``a+b`` rows included): the row's estimate
    (checked against its per-query values), lower and upper bounds, method
    (``clopper-pearson`` for binary measures, ``method`` otherwise), n, seed and resamples.
    The bootstrap stream of a row depends only on ``seed`` and ``(corpus, class)``; all
    measures of a row share its resamples.  Deterministic: identical input gives an
    identical document.
    """
    seed = check_seed(seed)
    confidence = _check_confidence(confidence)
    resamples = _check_resamples(resamples)
    if method not in METHODS:
        raise ValueError(f"unknown bootstrap method {method!r}; known: {sorted(METHODS)}")
    index = PerQueryIndex(per_query_rows, source=source)
    out_rows = []
    for row in sorted(metrics_doc["rows"], key=lambda r: (r["corpus"], r["query_class"])):
        corpus, cls = str(row["corpus"]), str(row["query_class"])
        keys = index.keys(corpus, cls)
        where = f"row ({corpus}, {cls})"
        if len(keys) != row["n"]:
            raise ValueError(f"{source}: {where} has {len(keys)} per-query entries but metrics.json "
                             f"says n = {row['n']}; the two files are not from the same run")
        names = _row_measures(row, measures)
        continuous = [m for m in names if not is_binary_measure(m)]
        columns = {m: index.values(keys, m) for m in names}
        for m in names:
            mean = float(columns[m].mean())
            if abs(mean - float(row["metrics"][m])) > MEAN_TOLERANCE:
                raise ValueError(f"{source}: {where}, measure {m}: per-query mean {mean:.10f} differs "
                                 f"from metrics.json's {float(row['metrics'][m]):.10f}")
        sums = {}
        if continuous and len(keys) > 1:
            block = resample_sums(np.vstack([columns[m] for m in continuous]), resamples,
                                  derive_rng(seed, "bootstrap", corpus, cls))
            sums = dict(zip(continuous, block))
        for m in names:
            what = f"{where}, measure {m}"
            if m in continuous:
                iv = mean_interval_from_sums(columns[m], sums.get(m), method, confidence, seed,
                                         resamples, what)
            else:
                iv = binary_interval(columns[m], confidence, what)
            out_rows.append({"corpus": corpus, "tier": row["tier"], "query_class": cls, "measure": m,
                             **iv.to_dict()})
    out_rows.sort(key=lambda r: (r["corpus"], r["query_class"], r["measure"]))
    return {
        "kind": IntervalsClaim.KIND,
        "schema_version": IntervalsClaim.SCHEMA_VERSION,
        "run_id": run_id(metrics_doc),
        "control_name": metrics_doc.get("control_name"),
        "confidence": confidence,
        "method": method,
        "binary_method": CLOPPER_PEARSON,
        "seed": seed,
        "resamples": resamples,
        "stream": STREAM_RULE + "; labels 'bootstrap', corpus, query_class",
        "rows": out_rows,
    }
