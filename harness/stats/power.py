"""What a gold set can resolve, before anything runs: p-value floors, detectable effects,
queries needed, and audits of published numbers.

**Paired power, normal approximation** (Cohen 1988; for IR test collections Sakai 2016,
"Topic set size design", Information Retrieval Journal 19:256-283).  With ``sd`` the
standard deviation of the per-query *paired differences*, a two-sided level ``alpha`` and
power ``1 - beta``::

    n(effect)  = ((z_{1-alpha/2} + z_{1-beta}) * sd / effect)^2        (rounded up)
    MDE(n)     =  (z_{1-alpha/2} + z_{1-beta}) * sd / sqrt(n)

At alpha 0.05 and 80% power the multiplier is 1.95996 + 0.84162 = 2.80158, so an MRR@10
move of 0.02 at sd 0.30 needs (2.80158 * 0.30 / 0.02)^2 = 1,766 queries.  The t count
(:func:`queries_needed_t`) is exact: the smallest n whose two-sided paired t test reaches
the power, from the noncentral t on n-1 df with noncentrality ``effect sqrt(n) / sd``
(:func:`t_test_power`).  It is larger than the z count for small n (effect = sd: 8 by z,
10 by t).

**Floors**: a paired sign-flip test on k discordant queries can never return p below
``2^(1-k)`` (:func:`harness.stats.randomization.p_floor`); a gold set of n queries has
floor ``2^(1-n)``, and at least ``ceil(1 + log2(1/alpha))`` queries must differ before any
outcome can be significant (6 at alpha 0.05).  Compared as a Holm family of m arms, the
smallest adjusted p is ``m 2^(1-k)``, so ``ceil(1 + log2(m/alpha))`` must differ (8 for
four arms at 0.05).

**Audit** of published numbers for a 0/1 per-query metric (success counts out of n):
the exact Clopper-Pearson interval of each value, and for a candidate against a baseline
the range of discordant queries the two counts allow and the best and worst p those allow.
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation
from statistics import NormalDist
from typing import Sequence

from harness.core.canonical import Unrounded
from harness.claims import PowerClaim
from harness.stats.intervals import clopper_pearson
from harness.stats.randomization import minimum_discordant, p_floor

_NORMAL = NormalDist()

FORMULA = ("n = ceil(((z_{1-alpha/2} + z_{power}) * sd / effect)^2); "
           "MDE = (z_{1-alpha/2} + z_{power}) * sd / sqrt(n)  (paired, two-sided; Sakai 2016)")


def _check_level(alpha: float, power: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    if not 0 < power < 1:
        raise ValueError(f"power must be strictly between 0 and 1, got {power!r}")


def _check_positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return float(value)


def z_multiplier(alpha: float = 0.05, power: float = 0.8) -> float:
    """``z_{1-alpha/2} + z_{power}`` (2.80158 at the defaults)."""
    _check_level(alpha, power)
    return _NORMAL.inv_cdf(1 - alpha / 2) + _NORMAL.inv_cdf(power)


def minimum_detectable_effect(n: int, sd: float, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest paired mean difference detected with the given power on ``n`` queries."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    return z_multiplier(alpha, power) * _check_positive("sd", sd) / math.sqrt(n)


def queries_needed(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Queries needed to detect ``effect`` (normal approximation, rounded up)."""
    ratio = z_multiplier(alpha, power) * _check_positive("sd", sd) / _check_positive("effect", abs(effect))
    return max(2, math.ceil(ratio ** 2 - 1e-9))


def t_test_power(n: int, effect: float, sd: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided paired t test on ``n`` differences (noncentral t).

    ``P(|T| > t_{1-alpha/2, n-1})`` with ``T`` noncentral t on ``n - 1`` df and
    noncentrality ``|effect| sqrt(n) / sd`` (Cohen 1988, ch. 2; both rejection tails).
    """
    from scipy.stats import nct
    from scipy.stats import t as student

    if isinstance(n, bool) or not isinstance(n, int) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be strictly between 0 and 1, got {alpha!r}")
    df = n - 1
    crit = student.ppf(1 - alpha / 2, df)
    nc = _check_positive("effect", abs(effect)) * math.sqrt(n) / _check_positive("sd", sd)
    return float(nct.sf(crit, df, nc) + nct.cdf(-crit, df, nc))


def queries_needed_t(effect: float, sd: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """Exact paired-t sample size: the smallest ``n >= 2`` whose :func:`t_test_power`
    reaches ``power``.

    Power rises with ``n``, so the search doubles from the normal-approximation count until
    the power is reached, then bisects.
    """
    _check_level(alpha, power)
    sd = _check_positive("sd", sd)
    effect = _check_positive("effect", abs(effect))
    hi = queries_needed(effect, sd, alpha, power)
    lo = 1  # n = 1 has no t test: below the target by convention
    while t_test_power(hi, effect, sd, alpha) < power:
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if t_test_power(mid, effect, sd, alpha) >= power:
            hi = mid
        else:
            lo = mid
    return hi


def power_report(n: int, *, measure: str | None = None, sd: float | None = None,
                 sd_source: str | None = None, effect: float | None = None,
                 alpha: float = 0.05, power: float = 0.8, family_size: int = 1) -> dict:
    """The ``power`` document: what ``n`` queries can resolve (and what ``effect`` needs).

    ``family_size`` is the number of arms that will be compared with one control and
    Holm-corrected together: the floor that decides "can be significant" is then
    ``m 2^(1-n)`` (``smallest_attainable_p_holm``).  The detectable effect and the queries
    needed stay per comparison at ``alpha``.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the gold set must hold at least one query, got n = {n!r}")
    _check_level(alpha, power)
    k_min = minimum_discordant(alpha, family_size)  # validates family_size
    holm_floor = min(1.0, family_size * p_floor(n))
    doc = {
        "kind": PowerClaim.KIND,
        "schema_version": PowerClaim.SCHEMA_VERSION,
        "n": n,
        "measure": measure,
        "alpha": alpha,
        "power": power,
        "family_size": family_size,
        # 2^(1-n) is exact and soon below the 10 fixed decimals: written in full
        "smallest_attainable_p": Unrounded(p_floor(n)),
        "smallest_attainable_p_holm": Unrounded(holm_floor),
        "queries_that_must_differ": k_min,
        "can_be_significant": holm_floor <= alpha,
        "formula": FORMULA,
        "z_multiplier": z_multiplier(alpha, power),
        "sd": sd,
        "sd_source": sd_source,
        "minimum_detectable_effect": None,
        "effect": effect,
        "queries_needed": None,
        "queries_needed_t": None,
        "shortfall": None,
    }
    if sd is not None:
        sd = _check_positive("sd", sd)
        if n >= 2:
            doc["minimum_detectable_effect"] = minimum_detectable_effect(n, sd, alpha, power)
        if effect is not None:
            need = queries_needed(effect, sd, alpha, power)
            doc["queries_needed"] = need
            doc["queries_needed_t"] = queries_needed_t(effect, sd, alpha, power)
            doc["shortfall"] = max(0, need - n)
    elif effect is not None:
        raise ValueError("queries needed for an effect requires an sd (--sd, or a pilot run)")
    return doc


# --------------------------------------------------------------------------- audit


def successes_from_value(value, n: int) -> int:
    """The success count ``k`` of ``n`` that a published proportion stands for.

    ``value`` is the published text (``"0.70"``) or number; every ``k`` with ``k/n`` within
    half a unit of its last published digit is a candidate.  None, or more than one, is an
    error: the number cannot be (unambiguously) a count out of ``n``.
    """
    try:
        dec = Decimal(str(value).strip())
    except InvalidOperation:
        raise ValueError(f"published value {value!r} is not a number") from None
    if not dec.is_finite() or dec < 0 or dec > 1:
        raise ValueError(f"published value {value!r} must be a proportion in [0, 1]")
    places = max(0, -dec.as_tuple().exponent)
    half = Decimal(5) / Decimal(10) ** (places + 1)
    ks = [k for k in range(n + 1) if abs(Decimal(k) / Decimal(n) - dec) <= half]
    if not ks:
        raise ValueError(f"published value {value} is not k/{n} for any whole k: the audit needs a "
                         f"0/1 per-query metric (a success count out of n)")
    if len(ks) > 1:
        raise ValueError(f"published value {value} is ambiguous with n = {n}: it could be any of "
                         f"{ks[0]}..{ks[-1]} of {n}; give more decimals")
    return ks[0]


def _p_for(discordant: int, net: int) -> float:
    """Exact two-sided sign-flip p for ``discordant`` +-1 differences summing to ``net``."""
    if discordant == 0:
        return 1.0
    extreme = sum(math.comb(discordant, w) for w in range(discordant + 1)
                  if abs(2 * w - discordant) >= abs(net))
    return extreme / 2 ** discordant


def audit(n: int, values: Sequence, baseline=None, *, alpha: float = 0.05,
          confidence: float = 0.95) -> dict:
    """Audit published proportions of a 0/1 per-query metric on ``n`` queries.

    For each value: its count, exact interval and width.  For each value against the
    baseline: the discordant queries the two counts allow (``|k1-k2|`` up to
    ``min(k1+k2, 2n-k1-k2)``, same parity), the best and worst exact p over that range,
    and whether any of them can be significant.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"-n must be a positive integer, got {n!r}")
    if not values:
        raise ValueError("give at least one published value to audit")

    def entry(v):
        k = successes_from_value(v, n)
        lo, hi = clopper_pearson(k, n, confidence)
        return {"value": str(v), "successes": k, "n": n, "lower": lo, "upper": hi, "width": hi - lo}

    audited = [entry(v) for v in values]
    base = entry(baseline) if baseline is not None else None
    comparisons = []
    if base is not None:
        k2 = base["successes"]
        for e in audited:
            k1 = e["successes"]
            net = abs(k1 - k2)
            d_max = min(k1 + k2, 2 * n - k1 - k2)
            feasible = list(range(net, d_max + 1, 2))
            ps = [_p_for(d, net) for d in feasible]
            best, worst = min(ps), max(ps)
            comparisons.append({
                "value": e["value"], "baseline": base["value"],
                "discordant_min": net, "discordant_max": d_max,
                "p_best": best, "p_worst": worst,
                "verdict": "cannot be significant" if best > alpha else "could be significant",
            })
    k_min = minimum_discordant(alpha)
    return {
        "kind": PowerClaim.KIND,
        "schema_version": PowerClaim.SCHEMA_VERSION,
        "audit": True,
        "n": n,
        "alpha": alpha,
        "confidence": confidence,
        "smallest_attainable_p": Unrounded(p_floor(n)),
        "queries_that_must_differ": k_min,
        "can_be_significant": k_min <= n,
        "values": audited,
        "baseline": base,
        "comparisons": comparisons,
    }
