"""What one paired comparison could resolve, read off its own per-query differences.

For the differences ``d_i = arm_i - control_i`` of n queries, with ``sd`` their standard
deviation (``ddof = 1``) and ``delta`` their mean, at a two-sided level alpha:

* ``mde``: the minimum detectable effect at 80% power (normal approximation, Cohen 1988;
  Sakai 2016): ``(z_{1-alpha/2} + z_{0.8}) sd / sqrt(n)``;
* ``power_at_delta``: the exact power of the paired t test to detect an effect of
  ``|delta|`` with these n queries (:func:`harness.stats.power.t_test_power`): low power at
  the observed delta means a "not significant" says little;
* ``queries_needed``: the paired-t query count that would detect ``|delta|`` at 80% power
  (:func:`harness.stats.power.queries_needed_t`; the normal count above a million
  queries, where the two agree).

The sd is the observed one, so these are post-hoc descriptions of the gold set against
this delta, not a test.  Each is per comparison at ``alpha``; the Holm correction over a
family lowers the power further (the comparisons document's Holm floor says when no
outcome could be significant).  A delta below half a unit of the stored precision
(``10^-10``) is a tie: no power or count is given for it, nor for an sd below it or
``n < 2``.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from harness.stats.power import (minimum_detectable_effect, queries_needed, queries_needed_t,
                                 t_test_power)

#: power the minimum detectable effect and the queries needed are stated at
POWER = 0.8
#: above this normal-approximation count the t count is not searched (the two agree)
T_SEARCH_LIMIT = 1_000_000
#: a mean difference below this is a tie (half a unit of the stored 10 decimals)
TIE = 0.5e-10


def resolution(differences: Sequence[float], *, alpha: float = 0.05) -> dict:
    """``{n, delta, sd_delta, mde, power_at_delta, queries_needed}`` of paired differences
    (module docstring); entries that do not exist for these differences are None."""
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 1 or d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError("resolution needs a non-empty vector of finite differences")
    n = int(d.size)
    delta = float(d.mean())
    out = {"n": n, "delta": delta, "sd_delta": None, "mde": None, "power_at_delta": None,
           "queries_needed": None}
    if n < 2:
        return out
    sd = float(np.std(d, ddof=1))
    out["sd_delta"] = sd
    if not (sd >= TIE and math.isfinite(sd)):  # below the stored precision: float noise
        return out
    out["mde"] = minimum_detectable_effect(n, sd, alpha, POWER)
    if abs(delta) >= TIE:
        out["power_at_delta"] = t_test_power(n, delta, sd, alpha)
        z_count = queries_needed(delta, sd, alpha, POWER)
        out["queries_needed"] = (z_count if z_count > T_SEARCH_LIMIT
                                 else queries_needed_t(delta, sd, alpha, POWER))
    return out
