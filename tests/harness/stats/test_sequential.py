"""Confidence sequences under continuous monitoring, and counted query streams."""

from __future__ import annotations

import numpy as np
import pytest

from harness.stats.sequential import BettingConfidenceSequence, QueryStream


def confidence_sequence(values, alpha=0.05):
    """Lower and upper bounds after each observation of one stream (not intersected)."""
    cs = BettingConfidenceSequence(alpha)
    lows, highs = [], []
    for x in values:
        cs.update(x)
        lo, hi = cs.bounds()
        lows.append(lo[0])
        highs.append(hi[0])
    return np.array(lows), np.array(highs)

STREAMS, LENGTH, FIRST_LOOK = 800, 300, 30


def _monitor(x: np.ndarray, true_mean: float) -> tuple[float, float]:
    """Share of streams whose interval misses the truth at some look: (sequence, fixed-N)."""
    cs = BettingConfidenceSequence(0.05, batch=x.shape[0], grid_size=200)
    cs_miss = np.zeros(x.shape[0], dtype=bool)
    fixed_miss = np.zeros(x.shape[0], dtype=bool)
    csum, csq = np.cumsum(x, axis=1), np.cumsum(x * x, axis=1)
    for t in range(x.shape[1]):
        cs.update(x[:, t])
        lo, hi = cs.bounds()
        cs_miss |= (true_mean < lo) | (true_mean > hi)
        n = t + 1
        if n >= FIRST_LOOK:  # the fixed-N interval, given the benefit of starting at n = 30
            mean = csum[:, t] / n
            sd = np.sqrt(np.maximum(csq[:, t] / n - mean ** 2, 0.0) * n / (n - 1))
            half = 1.959964 * sd / np.sqrt(n)
            fixed_miss |= (true_mean < mean - half) | (true_mean > mean + half)
    return cs_miss.mean(), fixed_miss.mean()


def test_sequence_holds_under_continuous_monitoring_where_fixed_n_fails_reciprocal_rank():
    # reciprocal rank: discrete and skewed (a third of queries find nothing)
    values = np.array([1, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 0.0])
    probs = np.array([0.35, 0.15, 0.08, 0.05, 0.04, 0.33])
    rng = np.random.default_rng(12)
    x = rng.choice(values, size=(STREAMS, LENGTH), p=probs)
    cs_miss, fixed_miss = _monitor(x, float(values @ probs))
    assert cs_miss <= 0.05
    assert fixed_miss >= 0.20 and fixed_miss >= 4 * cs_miss


def test_sequence_holds_under_continuous_monitoring_where_fixed_n_fails_binary():
    rng = np.random.default_rng(13)
    x = (rng.random((STREAMS, LENGTH)) < 0.7).astype(float)  # Recall@5 with one relevant doc
    cs_miss, fixed_miss = _monitor(x, 0.7)
    assert cs_miss <= 0.05
    assert fixed_miss >= 0.20 and fixed_miss >= 4 * cs_miss


def test_sequence_narrows_and_stays_in_the_unit_interval():
    rng = np.random.default_rng(1)
    x = rng.beta(2, 5, size=400)
    lo, hi = confidence_sequence(x)
    assert np.all((0 <= lo) & (lo <= hi) & (hi <= 1))
    assert hi[-1] - lo[-1] < 0.5 * (hi[20] - lo[20])
    assert lo[-1] <= 2 / 7 <= hi[-1]


def test_running_bounds_never_widen():
    cs = BettingConfidenceSequence(0.05)
    rng = np.random.default_rng(4)
    prev = (0.0, 1.0)
    for v in rng.random(100):
        cs.update(v)
        lo, hi = (float(b[0]) for b in cs.running_bounds())
        assert lo >= prev[0] and hi <= prev[1]
        prev = (lo, hi)


def test_grid_points_include_the_requested_threshold():
    cs = BettingConfidenceSequence(0.05, grid_size=10, points=[0.853])
    assert 0.853 in cs.grid and cs.grid[0] == 0.0 and cs.grid[-1] == 1.0


def test_observations_outside_the_unit_interval_are_refused():
    cs = BettingConfidenceSequence(0.05)
    with pytest.raises(ValueError, match="outside"):
        cs.update(1.5)


def test_query_stream_counts_what_it_produced_and_stops_when_the_consumer_stops():
    calls = []

    def value_of(q):
        calls.append(q)
        return None if q == "q03" else 0.5

    stream = QueryStream([f"q{i:02d}" for i in range(10)], value_of)
    taken = []
    for q, _ in stream:
        taken.append(q)
        if len(taken) == 4:
            break
    assert taken == ["q00", "q01", "q02", "q04"]  # q03 was dropped (unjudgeable), not zeroed
    assert stream.requested == len(calls) == 5 and stream.produced == 4 and stream.skipped == ["q03"]


def test_query_stream_seeded_order_is_a_reproducible_permutation():
    ids = [f"q{i}" for i in range(50)]
    a = QueryStream(ids, lambda q: 0.0, seed=7).order
    b = QueryStream(list(reversed(ids)), lambda q: 0.0, seed=7).order
    c = QueryStream(ids, lambda q: 0.0, seed=8).order
    assert a == b and sorted(a) == sorted(ids) and a != tuple(sorted(ids)) and a != c
    with pytest.raises(ValueError, match="twice"):
        QueryStream(["q1", "q1"], lambda q: 0.0)
