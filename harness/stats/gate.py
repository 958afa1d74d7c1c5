"""CI gate policies over one measure on one corpus x class slice.

=============  ===============================================================================
policy         fails when
=============  ===============================================================================
point          the mean is below the threshold
ci-lower       the interval's lower bound is below it (Clopper-Pearson for 0/1 measures, else
               BCa - the same numbers ``intervals.json`` records for the row)
regression     ``point`` fails, or the paired randomization test against a recorded control
               shows a significant drop (delta < 0 and p <= alpha)
sequential     the anytime-valid confidence sequence (:mod:`harness.stats.sequential`) does not
               decide ``pass`` (lower bound >= threshold) before the queries or the budget run
               out; queries are consumed one at a time in a seeded random order and the gate
               stops as soon as it is decided.  ``undecided`` fails: a gate that passes what it
               could not tell has stopped gating.
=============  ===============================================================================

``queries_saved`` counts queries the gate did not have to compute because it stopped: real
work (scorer calls, retrievals) when the stream computes each value on demand (qrels + run,
a bench run); over a results directory every value already exists, so it is ``None``
("not applicable") rather than a saving that never happened.

Exit codes belong to the CLI: 0 pass, 1 fail (including undecided).
"""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from typing import Callable, Hashable, Mapping

import numpy as np

from harness.claims import GateClaim
from harness.stats.intervals import (binary_interval, is_binary_measure, mean_interval_from_sums,
                                     resample_sums)
from harness.stats.randomization import tests_from_differences
from harness.core.seeding import derive_rng
from harness.stats.sequential import GRID_SIZE, BettingConfidenceSequence, QueryStream

log = logging.getLogger(__name__)

VERDICTS = ("pass", "fail", "undecided")
#: why ``queries_saved`` is ``None`` for a stream over stored values
SAVING_NOT_APPLICABLE = "not applicable: values were already computed"


@dataclass
class GateSpec:
    """What is gated, and on what."""

    measure: str
    threshold: float
    corpus: str
    query_class: str
    stream: QueryStream
    #: control values keyed like the stream's query ids (``regression`` only)
    control: Mapping[Hashable, float] | None = None
    alpha: float = 0.05
    seed: int = 0
    resamples: int = 10000
    permutations: int = 10000
    #: most queries the sequential gate may request (default: all)
    budget: int | None = None
    source: str = ""
    progress: bool | None = None


@dataclass
class GateResult:
    policy: str
    measure: str
    threshold: float
    corpus: str
    query_class: str
    verdict: str
    reason: str
    available: int
    scored: int
    dropped: int
    mean: float | None
    lower: float | None = None
    upper: float | None = None
    bound: str | None = None
    alpha: float = 0.05
    seed: int = 0
    regression: dict | None = None
    source: str = ""
    extra: dict = field(default_factory=dict)
    #: False when the stream read stored values: stopping early saved no work
    saving_applicable: bool = True

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def saved(self) -> int | None:
        """Queries not computed because the gate stopped; ``None`` when not applicable
        (the values already existed, :data:`SAVING_NOT_APPLICABLE`)."""
        return self.available - self.scored if self.saving_applicable else None

    @property
    def saved_note(self) -> str | None:
        return None if self.saving_applicable else SAVING_NOT_APPLICABLE

    def to_dict(self) -> dict:
        return {
            "kind": GateClaim.KIND, "schema_version": GateClaim.SCHEMA_VERSION, "policy": self.policy,
            "measure": self.measure, "threshold": self.threshold, "corpus": self.corpus,
            "query_class": self.query_class, "verdict": self.verdict, "passed": self.passed,
            "reason": self.reason, "queries_available": self.available,
            "queries_scored": self.scored, "queries_saved": self.saved,
            "queries_saved_note": self.saved_note,
            "queries_dropped_unjudgeable": self.dropped, "mean": self.mean, "lower": self.lower,
            "upper": self.upper, "bound": self.bound, "alpha": self.alpha, "seed": self.seed,
            "regression": self.regression, "source": self.source,
        }


def _check_threshold(spec: GateSpec) -> None:
    if not isinstance(spec.threshold, (int, float)) or not np.isfinite(spec.threshold):
        raise ValueError(f"threshold must be a finite number, got {spec.threshold!r}")
    if not 0 < spec.alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {spec.alpha!r}")


def _consume(spec: GateSpec) -> tuple[list, np.ndarray]:
    from tqdm import tqdm

    keys, values = [], []
    for key, value in tqdm(spec.stream, total=spec.stream.total, desc="scoring", unit="query",
                           file=sys.stderr, disable=None if spec.progress is None else not spec.progress):
        keys.append(key)
        values.append(value)
    if not values:
        raise ValueError(f"{spec.source}: no scorable query in {spec.corpus} / {spec.query_class}")
    return keys, np.asarray(values, dtype=np.float64)


def _result(spec: GateSpec, policy: str, verdict: str, reason: str, mean, **kw) -> GateResult:
    return GateResult(policy=policy, measure=spec.measure, threshold=float(spec.threshold),
                      corpus=spec.corpus, query_class=spec.query_class, verdict=verdict,
                      reason=reason, available=spec.stream.total, scored=spec.stream.requested,
                      dropped=len(spec.stream.skipped), mean=mean, alpha=spec.alpha,
                      seed=spec.seed, source=spec.source,
                      saving_applicable=not spec.stream.precomputed, **kw)


def _point_verdict(mean: float, threshold: float) -> tuple[str, str]:
    if mean >= threshold:
        return "pass", f"mean {mean:.4f} >= threshold {threshold:.4f}"
    return "fail", f"mean {mean:.4f} < threshold {threshold:.4f}"


def gate_point(spec: GateSpec) -> GateResult:
    _, values = _consume(spec)
    mean = float(values.mean())
    verdict, reason = _point_verdict(mean, spec.threshold)
    return _result(spec, "point", verdict, reason, mean)


def _interval(spec: GateSpec, values: np.ndarray):
    if is_binary_measure(spec.measure):
        return binary_interval(values, 1 - spec.alpha, f"gate {spec.measure}")
    sums = None
    if values.size > 1:
        sums = resample_sums(values[None, :], spec.resamples,
                             derive_rng(spec.seed, "bootstrap", spec.corpus, spec.query_class))[0]
    return mean_interval_from_sums(values, sums, "bca", 1 - spec.alpha, spec.seed, spec.resamples,
                               f"gate {spec.measure}")


def gate_ci_lower(spec: GateSpec) -> GateResult:
    _, values = _consume(spec)
    iv = _interval(spec, values)
    if iv.lower >= spec.threshold:
        verdict, reason = "pass", f"lower bound {iv.lower:.4f} >= threshold {spec.threshold:.4f}"
    else:
        verdict, reason = "fail", f"lower bound {iv.lower:.4f} < threshold {spec.threshold:.4f}"
    return _result(spec, "ci-lower", verdict, reason, iv.estimate, lower=iv.lower, upper=iv.upper,
                   bound=f"{iv.method} {1 - spec.alpha:.0%} interval")


def gate_regression(spec: GateSpec) -> GateResult:
    if spec.control is None:
        raise ValueError("the regression policy needs a recorded control (--control DIR)")
    keys, values = _consume(spec)
    missing = sorted(set(keys) ^ set(spec.control))
    if missing:
        raise ValueError(f"{spec.source}: the candidate and the control scored different queries "
                         f"({len(missing)} differ, e.g. {missing[:3]}); a regression test needs pairs")
    order = sorted(range(len(keys)), key=lambda i: keys[i])
    cand = values[order]
    ctl = np.asarray([spec.control[keys[i]] for i in order], dtype=np.float64)
    test = tests_from_differences((cand - ctl)[:, None], permutations=spec.permutations,
                                  rng=derive_rng(spec.seed, "randomization", spec.corpus,
                                                 spec.query_class))[0]
    mean = float(cand.mean())
    verdict, reason = _point_verdict(mean, spec.threshold)
    drop = test.delta < 0 and test.p <= spec.alpha
    if drop:
        verdict = "fail"
        reason += (f"; significant paired drop vs control: delta {test.delta:+.4f}, "
                   f"p = {test.p:.4g} <= {spec.alpha}")
    elif test.p_floor > spec.alpha:
        reason += (f"; paired test cannot be significant ({test.discordant} discordant queries, "
                   f"floor p = {test.p_floor:.4g})")
    else:
        reason += f"; no significant paired drop (delta {test.delta:+.4f}, p = {test.p:.4g})"
    return _result(spec, "regression", verdict, reason, mean,
                   regression={"control_mean": float(ctl.mean()), **test.to_dict(),
                               "significant_drop": bool(drop)})


def gate_sequential(spec: GateSpec) -> GateResult:
    from tqdm import tqdm

    if not 0.0 <= spec.threshold <= 1.0:
        raise ValueError(f"the sequential gate bounds a mean in [0, 1]; threshold {spec.threshold} "
                         "is outside")
    budget = spec.stream.total if spec.budget is None else min(spec.budget, spec.stream.total)
    if budget < 1:
        raise ValueError(f"budget must be at least 1 query, got {spec.budget!r}")
    cs = BettingConfidenceSequence(spec.alpha, grid_size=GRID_SIZE, points=[spec.threshold])
    verdict, reason = "undecided", ""
    total = 0.0
    bar = tqdm(total=budget, desc="sequential gate", unit="query", file=sys.stderr,
               disable=None if spec.progress is None else not spec.progress)
    try:
        for _, value in spec.stream:
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{spec.source}: {spec.measure} value {value} lies outside [0, 1]")
            cs.update(value)
            total += value
            bar.update(1)
            lower, upper = (float(b[0]) for b in cs.running_bounds())
            if lower >= spec.threshold:
                verdict = "pass"
                reason = f"anytime-valid lower bound {lower:.4f} >= threshold {spec.threshold:.4f}"
                break
            if upper <= spec.threshold:
                verdict = "fail"
                reason = f"anytime-valid upper bound {upper:.4f} <= threshold {spec.threshold:.4f}"
                break
            if spec.stream.requested >= budget:
                break
    finally:
        bar.close()
    if cs.t == 0:
        raise ValueError(f"{spec.source}: no scorable query in {spec.corpus} / {spec.query_class}")
    lower, upper = (float(b[0]) for b in cs.running_bounds())
    if verdict == "undecided":
        reason = (f"undecided after {spec.stream.requested} queries: [{lower:.4f}, {upper:.4f}] still "
                  f"contains {spec.threshold:.4f}; undecided fails")
    return _result(spec, "sequential", verdict, reason, total / cs.t, lower=lower, upper=upper,
                   bound=f"{1 - spec.alpha:.0%} betting confidence sequence")


POLICIES: dict[str, Callable[[GateSpec], GateResult]] = {
    "point": gate_point,
    "ci-lower": gate_ci_lower,
    "regression": gate_regression,
    "sequential": gate_sequential,
}


def run_gate(policy: str, spec: GateSpec) -> GateResult:
    """Apply ``policy`` (a key of :data:`POLICIES`) to ``spec``."""
    if policy not in POLICIES:
        raise ValueError(f"unknown gate policy {policy!r}; known: {sorted(POLICIES)}")
    _check_threshold(spec)
    result = POLICIES[policy](spec)
    log.debug("gate %s on %s: %s (%s)", policy, spec.measure, result.verdict, result.reason)
    return result
