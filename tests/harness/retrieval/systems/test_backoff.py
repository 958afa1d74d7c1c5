"""The one retry loop (``retry.retrying``) and its backoff, shared by the system backends
and the OpenSearch client."""

from __future__ import annotations

import random

import pytest

from harness.retrieval.backends.retry import Backoff, Transient, retrying


def test_without_jitter_the_wait_doubles_to_the_cap():
    backoff = Backoff(0.25, 8.0, jitter=False)
    assert [backoff.delay(a) for a in range(8)] == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert backoff.delay(0, retry_after=3.0) == 3.0  # Retry-After is a floor


def test_retrying_retries_transients_and_reports_each_wait(monkeypatch):
    slept = []
    monkeypatch.setattr("harness.retrieval.backends.retry.time.sleep", slept.append)
    outcomes = iter([Transient(503, "HTTP 503"), Transient("timeout", "slow"), "done"])
    told = []

    def attempt():
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    result = retrying(attempt, retries=3, backoff=Backoff(0.25, 8.0, jitter=False),
                      on_retry=lambda n, exc, wait: told.append((n, exc.detail, wait)))
    assert result == "done"
    assert told == [(0, "HTTP 503", 0.25), (1, "slow", 0.5)] and slept == [0.25, 0.5]


def test_retrying_raises_the_last_transient_once_retries_are_spent(monkeypatch):
    monkeypatch.setattr("harness.retrieval.backends.retry.time.sleep", lambda s: None)
    calls = []

    def attempt():
        calls.append(1)
        raise Transient(500, f"HTTP 500 #{len(calls)}")

    with pytest.raises(Transient, match="HTTP 500 #3"):
        retrying(attempt, retries=2, backoff=Backoff(), rng=random.Random(0))
    assert len(calls) == 3


def test_other_errors_are_never_retried():
    calls = []

    def attempt():
        calls.append(1)
        raise ValueError("a wrong answer")

    with pytest.raises(ValueError):
        retrying(attempt, retries=5, backoff=Backoff())
    assert calls == [1]


def test_the_opensearch_client_retries_through_the_one_loop(monkeypatch):
    """A timeout twice, then an answer: counted, and the waits are the loop's backoff."""
    from opensearchpy.exceptions import ConnectionTimeout

    from harness.retrieval.backends.opensearch.client import BACKOFF, Node

    slept = []
    monkeypatch.setattr("harness.retrieval.backends.retry.time.sleep", slept.append)
    node = Node("http://127.0.0.1:9", retries=3)
    outcomes = iter([ConnectionTimeout("TIMEOUT", "slow", None)] * 2 + [{"ok": True}])

    def fn():
        item = next(outcomes)
        if isinstance(item, Exception):
            raise item
        return item

    assert node.call("testing", fn) == {"ok": True}
    assert slept == [BACKOFF.delay(0), BACKOFF.delay(1)] == [0.25, 0.5]
    counts = node.counts()
    assert counts["timeouts"] == 2 and counts["retries"] == 2 and counts["backoff_seconds"] == 0.75
