"""Build coverage and risk certificates from the calibration data of one or more runs.

The queries of every run are pooled, sorted by ``(corpus, query_id)`` and split by a seeded
permutation into tune / calibrate / held-out parts.  Held-out figures are computed through
the serving functions themselves (:mod:`harness.certificates.serving`), so the numbers a
certificate reports are the numbers its serving path produces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from harness.certificates.conformal import (
    GRID_EXPONENTS, Candidates, fit_coverage, quantile_index, split_indices,
)
from harness.certificates.data import CalibrationRow, CalibrationRun
from harness.claims.certificate import SCHEMA_VERSION, with_id
from harness.certificates.fingerprint import fingerprint_from_metrics, merge_fingerprints
from harness.certificates.risk import certify_risk, losses_for_context, risk_at
from harness.certificates.serving import K_MAX, set_size
from harness.core.tiers import most_restrictive_tier
from harness.stats.intervals import clopper_pearson

DEFAULT_SPLITS = (0.25, 0.35, 0.40)
CONFIDENCE = 0.95
#: held-out set size is reported per bucket of the first relevant rank
RANK_BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("1", 1, 1), ("2", 2, 2), ("3", 3, 3), ("4-10", 4, 10), (f"11-{K_MAX}", 11, K_MAX),
)
NOT_IN_LIST = f"none in top {K_MAX}"

COVERAGE_METHOD = ("split conformal prediction with adaptive sets (Romano, Sesia & Candes, "
                   "NeurIPS 2020): softmax at a tuned temperature, prefix sets, "
                   "ceil((n+1)(1-alpha)) quantile")
SIZING_ADAPTIVE = "adaptive sets at the conformal threshold"
SIZING_MAX_K = (f"maximum K: every recorded candidate, up to {K_MAX} (degenerate: the conformal "
                "quantile is +inf)")
RISK_METHOD = ("learn then test with fixed-sequence testing (Bates, Angelopoulos, Lei, Malik & "
               "Jordan, JACM 2021): exact binomial p-values, thresholds from most to least "
               "conservative")


@dataclass(frozen=True)
class Pool:
    """The pooled calibration rows of some runs with what they were calibrated on."""

    rows: tuple[CalibrationRow, ...]
    fingerprint: dict
    sources: tuple[dict, ...]
    tier: str


def pool_runs(runs: Sequence[CalibrationRun], labels: Sequence[str]) -> Pool:
    """Pool the calibration rows of some runs (``labels`` name them in errors); each query
    may be calibrated on once."""
    if not runs:
        raise ValueError("no --run given: a certificate needs at least one results directory")
    fingerprint = merge_fingerprints(
        fingerprint_from_metrics(run.metrics, stage=run.stage) for run in runs)
    rows: dict[tuple[str, str], CalibrationRow] = {}
    for d, run in zip(labels, runs):
        for row in run.rows:
            key = (row.corpus, row.query_id)
            if key in rows:
                raise ValueError(f"{d}: query {row.query_id!r} of corpus {row.corpus!r} is already "
                                 "in another run: each query may be calibrated on once")
            rows[key] = row
    ordered = tuple(rows[key] for key in sorted(rows))
    sources = tuple(sorted(({"run_id": r.run_id, "calibration_sha256": r.calibration_sha256}
                            for r in runs), key=lambda s: (s["run_id"], s["calibration_sha256"])))
    return Pool(ordered, fingerprint, sources, most_restrictive_tier(r.tier for r in ordered))


def _split(pool: Pool, fractions, seed: int):
    tune, cal, held = split_indices(len(pool.rows), fractions, seed)

    def pick(index):
        return [pool.rows[i] for i in index]

    splits = {"fractions": [float(f) for f in fractions], "tune": len(tune),
              "calibrate": len(cal), "heldout": len(held), "method": "seeded permutation "
              "(numpy default_rng) of the queries sorted by (corpus, query_id)"}
    return pick(tune), pick(cal), pick(held), splits


def _rate(k: int, n: int):
    return k / n if n else None


def exact_interval(successes: int, n: int) -> list[float] | None:
    """The Clopper-Pearson interval at :data:`CONFIDENCE` as a JSON pair, ``None`` when
    ``n == 0``; computed by :func:`harness.stats.intervals.clopper_pearson`."""
    return None if n == 0 else list(clopper_pearson(int(successes), n, CONFIDENCE))


def _mean(values):
    return float(np.mean(values)) if len(values) else None


def _heldout_coverage(rows, cert, fixed_k):
    sizes = [set_size(r.scores, cert) for r in rows]  # every certificate is servable
    ranks = [r.rank_in_list or 0 for r in rows]
    hits = None if sizes is None else [0 < k <= s for k, s in zip(ranks, sizes)]
    n = len(rows)
    fixed_hits = None if fixed_k is None else sum(
        1 for r in rows if r.first_relevant_rank is not None and r.first_relevant_rank <= fixed_k)
    out = {
        "n": n,
        "coverage": None if hits is None else _rate(sum(hits), n),
        "coverage_interval": None if hits is None else exact_interval(sum(hits), n),
        "mean_set_size": None if sizes is None else _mean(sizes),
        "fixed_k_coverage": None if fixed_hits is None else _rate(fixed_hits, n),
        "fixed_k_coverage_interval": None if fixed_hits is None
        else exact_interval(fixed_hits, n),
        "interval": f"Clopper-Pearson exact, {CONFIDENCE:.0%}",
        "set_size_saving": None if sizes is None or not fixed_k
        else 1 - float(np.mean(sizes)) / fixed_k,
    }
    buckets = [(label, [i for i, k in enumerate(ranks) if lo <= k <= hi])
               for label, lo, hi in RANK_BUCKETS]
    buckets.append((NOT_IN_LIST, [i for i, k in enumerate(ranks) if k == 0]))
    out["by_first_relevant_rank"] = [
        {"bucket": label, "n": len(idx),
         "mean_set_size": None if sizes is None else _mean([sizes[i] for i in idx]),
         "coverage": None if hits is None else _rate(sum(hits[i] for i in idx), len(idx))}
        for label, idx in buckets
    ]
    classes = sorted({r.query_class for r in rows}, key=lambda c: (c is None, c or ""))
    out["by_query_class"] = []
    for cls in classes:
        idx = [i for i, r in enumerate(rows) if r.query_class == cls]
        out["by_query_class"].append({
            "query_class": cls, "n": len(idx),
            "mean_set_size": None if sizes is None else _mean([sizes[i] for i in idx]),
            "coverage": None if hits is None else _rate(sum(hits[i] for i in idx), len(idx)),
        })
    return out


def _coverage_reason(fit, alpha, heldout) -> tuple[str, str]:
    n, k = fit.calibration_n, fit.quantile_index
    promise = f"P(a relevant passage is in the set) >= {1 - alpha:g}"
    if fit.degenerate:
        served = (f"; sized at the maximum K instead (every recorded candidate, up to {K_MAX}): "
                  f"held-out coverage {heldout['coverage']:.3f} "
                  f"{_interval(heldout['coverage_interval'])} with {heldout['mean_set_size']:.2f} "
                  "passages on average")
        if k > n:
            need = math.ceil((1 - alpha) / alpha - 1e-12)
            return "degenerate", (f"{promise} cannot be certified with adaptive sets: "
                                  f"ceil((n+1)(1-alpha)) = {k} exceeds the {n} calibration "
                                  f"queries; alpha = {alpha:g} needs at least {need}{served}")
        return "degenerate", (
            f"{promise} cannot be certified with adaptive sets: {fit.calibration_misses} of {n} "
            f"calibration queries have no relevant candidate in their top {K_MAX}, more than the "
            f"{n - k} misses alpha = {alpha:g} allows (a deeper candidate list or a better first "
            f"stage can help){served}")
    reason = (f"{promise} certified on {n} calibration queries; held-out coverage "
              f"{heldout['coverage']:.3f} {_interval(heldout['coverage_interval'])} with "
              f"{heldout['mean_set_size']:.2f} passages on average")
    if fit.fixed_k is not None:
        reason += f" against fixed K = {fit.fixed_k}"
    interval = heldout["coverage_interval"]
    if interval is not None and interval[1] < 1 - alpha:
        reason += ("; WARNING: held-out coverage is below the promise beyond its interval, "
                   "so calibration and held-out queries may not be exchangeable")
    return "valid", reason


def _interval(bounds) -> str:
    return "[n/a]" if bounds is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"


def build_coverage_certificate(pool: Pool, *, alpha: float, seed: int,
                               fractions: Sequence[float] = DEFAULT_SPLITS) -> dict:
    """The coverage certificate (kind ``certificate``, type ``coverage``) of a pool."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    tune, cal, held, splits = _split(pool, fractions, seed)
    fit = fit_coverage(Candidates.from_rows(tune), Candidates.from_rows(cal), alpha)
    # every draw issues a servable certificate, a degenerate one at the maximum K: issuing
    # only the finite quantiles would cover less than promised conditional on issuance
    cert = {"kind": "certificate", "type": "coverage", "threshold": fit.threshold,
            "temperature": fit.temperature, "k_max": K_MAX,
            "sizing": SIZING_MAX_K if fit.degenerate else SIZING_ADAPTIVE}
    heldout = _heldout_coverage(held, cert, fit.fixed_k)
    status, reason = _coverage_reason(fit, alpha, heldout)
    cert.update({
        "schema_version": SCHEMA_VERSION, "status": status, "reason": reason,
        "method": COVERAGE_METHOD, "alpha": alpha, "stage": pool.fingerprint["stage"],
        "tuning": {
            "split": "tune", "objective": "mean set size on the tune split at its own "
                                          "conformal threshold (first minimum wins)",
            "grid": list(fit.grid), "grid_exponents": list(GRID_EXPONENTS),
            "mean_set_size": [None if not math.isfinite(s) else s for s in fit.tune_mean_sizes],
        },
        "calibration": {
            "n": fit.calibration_n, "quantile_index": fit.quantile_index,
            "misses": fit.calibration_misses,
            "raw_threshold": fit.raw_threshold if math.isfinite(fit.raw_threshold) else None,
            "threshold_rounding": "up to 10 decimals (a larger threshold only widens sets)",
        },
        "fixed_k": {"k": fit.fixed_k, "quantile_index": quantile_index(fit.calibration_n, alpha),
                    "method": "the same conformal quantile over first-relevant ranks"},
        "heldout": heldout, "seed": seed, "splits": splits,
        "fingerprint": pool.fingerprint, "tier": pool.tier, "sources": list(pool.sources),
    })
    return with_id(cert)


def _risk_side(rows, context_k):
    top = np.array([r.top_score if r.scores else -math.inf for r in rows], dtype=float)
    ranks = np.array([r.rank_in_list or 0 for r in rows], dtype=np.int64)
    return top, losses_for_context(ranks, context_k)


def _step(step, n):
    if step is None:
        return None
    return {"lambda": step.lam, "losses": step.losses, "answered": step.answered,
            "observed_risk": step.losses / n, "answer_rate": step.answered / n,
            "p_value": step.p_value}


def build_risk_certificate(pool: Pool, *, target: float, delta: float, seed: int,
                           context_k: int, fractions: Sequence[float] = DEFAULT_SPLITS) -> dict:
    """The risk certificate (kind ``certificate``, type ``risk``) of a pool.

    Nothing is tuned, so it is calibrated on the tune and calibrate splits together and
    evaluated on the same held-out split as the coverage certificate of the same seed.
    """
    if not 1 <= context_k <= K_MAX:
        raise ValueError(f"context_k must lie in 1..{K_MAX}, got {context_k!r}")
    tune, cal, held, splits = _split(pool, fractions, seed)
    calib = tune + cal
    top, losses = _risk_side(calib, context_k)
    fit = certify_risk(top, losses, target, delta)
    n = fit.n
    calibration = {
        "n": n, "split": "tune + calibrate", "tested": fit.tested,
        "certified": _step(fit.certified, n), "stopped_at": _step(fit.stopped_at, n),
        "best_observed": _step(fit.best_observed, n), "queries_needed": fit.queries_needed,
    }
    held_top, held_losses = _risk_side(held, context_k)
    heldout = {"n": len(held), "interval": f"Clopper-Pearson exact, {CONFIDENCE:.0%}"}
    if fit.lam is not None:
        lost, answered, m = risk_at(held_top, held_losses, fit.lam)
        heldout.update({
            "risk": _rate(lost, m), "risk_interval": exact_interval(lost, m),
            "answer_rate": _rate(answered, m),
            "answer_rate_interval": exact_interval(answered, m),
            "risk_among_answered": _rate(lost, answered),
        })
        status = "valid"
        reason = (f"P(risk <= {target:g}) >= {1 - delta:g} certified at lambda = {fit.lam:g} on "
                  f"{n} calibration queries (observed risk {fit.certified.losses / n:.3f}, answers "
                  f"{fit.certified.answered / n:.1%}); held-out risk {heldout['risk']:.3f} "
                  f"{_interval(heldout['risk_interval'])}, answers {heldout['answer_rate']:.1%}")
    else:
        status = "degenerate"
        best = fit.best_observed
        if best is None:
            reason = (f"only abstaining on everything can be certified: none of the {n} "
                      "calibration queries has a candidate to answer from")
        elif fit.queries_needed is None:
            reason = (f"only abstaining on everything can be certified: the walk stopped at "
                      f"lambda = {fit.stopped_at.lam:g}, whose observed risk "
                      f"{best.losses / n:.3f} is not under the {target:g} target; more data "
                      "would not help, a better scorer would")
        else:
            reason = (f"only abstaining on everything can be certified: the walk stopped at "
                      f"lambda = {fit.stopped_at.lam:g}; lambda = {best.lam:g} would answer "
                      f"{best.answered / n:.1%} at an observed risk of {best.losses / n:.3f}, "
                      f"under the {target:g} target, but proving it needs about "
                      f"{fit.queries_needed} calibration queries against the {n} available; "
                      "more data is the fix, not a looser target")
    doc = {
        "kind": "certificate", "schema_version": SCHEMA_VERSION, "type": "risk",
        "status": status, "reason": reason, "method": RISK_METHOD, "target": target,
        "delta": delta, "lambda": fit.lam, "context_k": context_k,
        "loss": f"answered (top score >= lambda) with no relevant passage in the first "
                f"{context_k} candidates",
        "stage": pool.fingerprint["stage"], "calibration": calibration, "heldout": heldout,
        "seed": seed, "splits": splits, "fingerprint": pool.fingerprint, "tier": pool.tier,
        "sources": list(pool.sources),
    }
    return with_id(doc)
