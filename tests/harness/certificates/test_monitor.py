"""The anytime-valid coverage monitor: false alarms under the promise, alarms when broken."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom

from harness.certificates.monitor import DEFAULT_MAX_BET, CoverageMonitor, _bet

ALPHA = 0.1
DELTA = 0.05


def log_wealth_paths(bad: np.ndarray, rate: float, max_bet: float = DEFAULT_MAX_BET) -> np.ndarray:
    """``log K_t`` for every stream (rows) and time (columns) of a 0/1 array, vectorised:
    many simulated streams at once (checked against :class:`CoverageMonitor` below)."""
    x = np.atleast_2d(np.asarray(bad, dtype=float))
    streams, length = x.shape
    log_wealth = np.zeros((streams, length))
    bad_so_far = np.zeros(streams)
    sq = np.full(streams, rate * (1 - rate))
    current = np.zeros(streams)
    for t in range(length):
        mean = (rate + bad_so_far) / (t + 1)
        lam = _bet(mean, sq / (t + 1), rate, max_bet)
        current = current + np.log1p(lam * (x[:, t] - rate))
        log_wealth[:, t] = current
        sq = sq + (x[:, t] - mean) ** 2
        bad_so_far = bad_so_far + x[:, t]
    return log_wealth


def first_alarm(log_wealth: np.ndarray, delta: float) -> np.ndarray:
    """1-based index of the first time ``K_t >= 1/delta`` per stream (0: never)."""
    hit = log_wealth >= math.log(1 / delta)
    first = np.argmax(hit, axis=1) + 1
    return np.where(hit.any(axis=1), first, 0)


def test_scalar_and_vectorised_wealth_agree():
    rng = np.random.default_rng(1)
    x = rng.random((3, 300)) < 0.2
    paths = log_wealth_paths(x, ALPHA)
    for s in range(3):
        monitor = CoverageMonitor(ALPHA, delta=DELTA)
        for t in range(300):
            monitor.update(bool(x[s, t]))
            assert monitor.log_wealth == pytest.approx(paths[s, t], abs=1e-9)


def test_first_bet_is_zero_and_wealth_by_hand():
    # the running mean starts at the promised rate, so the first bet is 0: K_1 = 1
    monitor = CoverageMonitor(ALPHA)
    monitor.update(True)
    assert monitor.log_wealth == 0.0
    # second bet: mean (0.1 + 1)/2 = 0.55, var (0.09 + (1 - 0.1)^2)/2 = 0.45,
    # edge 0.45 -> bet 0.45 / (0.45 + 0.2025) = 0.6897 (under the cap 0.5/0.1 = 5)
    monitor.update(True)
    bet = 0.45 / (0.45 + 0.45 ** 2)
    assert monitor.log_wealth == pytest.approx(math.log(1 + bet * 0.9))


def test_false_alarms_stay_under_delta_at_the_promised_rate():
    rng = np.random.default_rng(2)
    streams, length = 400, 2000
    misses = rng.random((streams, length)) < ALPHA        # exactly the promised rate
    alarms = first_alarm(log_wealth_paths(misses, ALPHA), DELTA)
    rate = np.mean(alarms > 0)
    # Ville: P(ever alarm) <= delta; 3 sd of a 400-stream estimate is 0.033
    assert rate <= DELTA + 0.033


def test_checking_a_fixed_n_test_after_every_query_cries_wolf():
    """The negative control: a one-sided binomial test re-run after every query."""
    rng = np.random.default_rng(2)
    streams, length = 400, 2000
    misses = rng.random((streams, length)) < ALPHA
    counts = np.cumsum(misses, axis=1)
    t = np.arange(1, length + 1)
    p = binom.sf(counts - 1, t, ALPHA)                    # P(Bin(t, alpha) >= misses so far)
    naive = np.mean((p[:, 9:] <= DELTA).any(axis=1))
    anytime = np.mean(first_alarm(log_wealth_paths(misses, ALPHA), DELTA) > 0)
    assert naive > 4 * DELTA
    assert anytime < naive / 4


def test_a_broken_promise_is_caught_quickly():
    rng = np.random.default_rng(3)
    misses = rng.random((200, 600)) < 0.35                # 35% misses against a 10% promise
    alarms = first_alarm(log_wealth_paths(misses, ALPHA), DELTA)
    assert np.all(alarms > 0)
    assert np.median(alarms) < 80


def test_over_coverage_never_alarms():
    rng = np.random.default_rng(4)
    misses = rng.random((200, 2000)) < 0.02               # far better than promised
    assert np.all(first_alarm(log_wealth_paths(misses, ALPHA), DELTA) == 0)


def test_monitor_summary_and_argument_checks():
    monitor = CoverageMonitor(ALPHA, delta=DELTA)
    for bad in [True] * 30:
        monitor.update(bad)
    summary = monitor.summary()
    assert summary["alarm"] and summary["alarm_at"] <= 30 and summary["observed_rate"] == 1.0
    assert summary["e_value"] >= 1 / DELTA
    with pytest.raises(ValueError, match="rate"):
        CoverageMonitor(0.0)
    with pytest.raises(ValueError, match="delta"):
        CoverageMonitor(ALPHA, delta=1.0)
