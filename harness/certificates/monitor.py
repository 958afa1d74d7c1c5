"""An anytime-valid, one-sided monitor of a promised rate of bad events.

A deployed certificate promises that bad events (a miss for a coverage certificate, an
answer without a relevant passage for a risk certificate) happen at rate <= ``rate``.
The monitor watches the 0/1 stream and raises an alarm once that promise is ruled out.

It is a betting e-process (Waudby-Smith & Ramdas, "Estimating means of bounded random
variables by betting", JRSS-B 2024): wealth ``K_t = prod_i (1 + l_i (x_i - rate))`` with a
predictable bet ``l_i >= 0`` (one-sided: it only ever bets that misses are *more* frequent
than promised).  Under ``H0: E[x_t | past] <= rate`` every factor has conditional mean <= 1,
so ``K_t`` is a non-negative supermartingale and by Ville's inequality
``P(sup_t K_t >= 1/delta) <= delta``: the stream may be inspected after every query and the
alarm still errs with probability at most delta.  A fixed-n binomial test re-run after every
query has no such guarantee.  Over-coverage never alarms: it is a cost, not an incident.

The bet is the aGRAPA plug-in of that paper, truncated to ``[0, max_bet / rate]``, with the
running mean and variance started at the promised rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

DEFAULT_MAX_BET = 0.5


def _bet(mean: np.ndarray | float, var: np.ndarray | float, rate: float, max_bet: float):
    edge = mean - rate
    return np.clip(edge / (var + edge * edge), 0.0, max_bet / rate)


def _check(rate: float, max_bet: float) -> None:
    if not 0 < rate < 1:
        raise ValueError(f"the promised rate must lie in (0, 1), got {rate!r}")
    if not 0 < max_bet < 1:
        raise ValueError(f"max_bet must lie in (0, 1), got {max_bet!r}")


@dataclass
class CoverageMonitor:
    """Feed 0/1 outcomes (1 = bad event) one at a time; ``alarm`` once ``rate`` is ruled out."""

    rate: float
    delta: float = 0.05
    max_bet: float = DEFAULT_MAX_BET
    t: int = 0
    bad: int = 0
    log_wealth: float = 0.0
    alarm_at: int | None = None
    _sq: float = field(default=0.0, repr=False)

    def __post_init__(self) -> None:
        _check(self.rate, self.max_bet)
        if not 0 < self.delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {self.delta!r}")
        self._sq = self.rate * (1 - self.rate)

    @property
    def mean(self) -> float:
        return (self.rate + self.bad) / (self.t + 1)

    @property
    def e_value(self) -> float:
        return math.exp(min(self.log_wealth, 700.0))

    @property
    def alarm(self) -> bool:
        return self.alarm_at is not None

    def update(self, bad_event: bool) -> bool:
        """Record one outcome; returns whether the alarm is (now or already) raised."""
        x = 1.0 if bad_event else 0.0
        lam = float(_bet(self.mean, self._sq / (self.t + 1), self.rate, self.max_bet))
        self.log_wealth += math.log1p(lam * (x - self.rate))
        self._sq += (x - self.mean) ** 2
        self.t += 1
        self.bad += int(x)
        if self.alarm_at is None and self.log_wealth >= math.log(1 / self.delta):
            self.alarm_at = self.t
        return self.alarm

    def summary(self) -> dict:
        return {
            "promised_rate": self.rate, "delta": self.delta, "observed": self.t,
            "bad_events": self.bad,
            "observed_rate": self.bad / self.t if self.t else None,
            "e_value": self.e_value, "alarm": self.alarm, "alarm_at": self.alarm_at,
        }
