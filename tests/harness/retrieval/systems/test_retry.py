"""Backoff with full jitter, Retry-After, and the request budget, on their own."""

from __future__ import annotations

import random
import threading
from email.utils import format_datetime
from datetime import datetime, timedelta, timezone

import pytest

from harness.retrieval.backends.retry import (
    RETRY_AFTER_CAP,
    RequestLog,
    RetryPolicy,
    SystemFailure,
    Transient,
    call,
    parse_retry_after,
)


def test_full_jitter_stays_under_the_doubling_cap():
    policy = RetryPolicy(base_delay=0.05, max_delay=2.0)
    rng = random.Random(1)
    for attempt, cap in ((0, 0.05), (1, 0.1), (2, 0.2), (5, 1.6), (6, 2.0), (12, 2.0)):
        delays = [policy.delay(attempt, None, rng) for _ in range(2000)]
        assert 0.0 <= min(delays) and max(delays) <= cap
        assert max(delays) > 0.9 * cap  # uniform over [0, cap]: the top is reached


def test_retry_after_is_a_floor_capped():
    policy = RetryPolicy()
    rng = random.Random(0)
    assert policy.delay(0, 1.5, rng) == 1.5
    assert policy.delay(0, 3600.0, rng) == RETRY_AFTER_CAP


def test_retry_after_reads_seconds_and_http_dates():
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after(" 0 ") == 0.0
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None
    when = format_datetime(datetime.now(timezone.utc) + timedelta(seconds=20), usegmt=True)
    assert 17.0 <= parse_retry_after(when) <= 20.0


def test_transient_failures_are_retried_and_counted():
    log = RequestLog()
    outcomes = iter([Transient(503, "HTTP 503"), Transient("timeout", "no answer"), "ok"])

    def attempt():
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return ["ranking"], 200

    policy = RetryPolicy(retries=2, base_delay=0.001, max_delay=0.001)
    assert call("q1", attempt, policy, log) == ["ranking"]
    stats = log.stats()
    assert stats["requests_sent"] == 3 and stats["retries"] == 2
    assert stats["queries"]["q1"]["attempts"] == 3 and stats["queries"]["q1"]["status"] == 200


def test_spent_retries_name_the_query_and_the_earlier_failures():
    log = RequestLog()

    def attempt():
        raise Transient(500, "HTTP 500")

    with pytest.raises(SystemFailure, match=r"query q7: HTTP 500 \(after 2 attempts; earlier: "
                                            r"HTTP 500\)"):
        call("q7", attempt, RetryPolicy(retries=1, base_delay=0.001), log)
    record = log.stats()["queries"]["q7"]
    assert record["attempts"] == 2 and record["status"] == 500 and record["latency_ms"] > 0


def test_the_budget_holds_across_threads():
    log = RequestLog(budget=50)
    taken, refused = [], []

    def worker():
        for _ in range(20):
            try:
                log.take("q")
                taken.append(1)
            except SystemFailure:
                refused.append(1)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(taken) == 50 == log.sent and len(refused) == 8 * 20 - 50


@pytest.mark.parametrize("kwargs", [{"retries": -1}, {"retries": True}, {"timeout": 0}])
def test_bad_policies_are_refused(kwargs):
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)
