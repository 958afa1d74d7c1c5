"""Requests to a system under test: retries with backoff, the request budget, the query log.

A transient failure (connection error, timeout, HTTP 429 or 5xx, a child process that died)
is retried up to ``retries`` times after an exponential backoff with full jitter (a delay
drawn uniformly from ``[0, min(cap, base * 2**attempt)]``; Brooker, "Exponential Backoff
And Jitter", AWS Architecture Blog 2015).  A ``Retry-After`` the system sent is honoured
(never shortened by jitter, capped at ``RETRY_AFTER_CAP`` seconds).  A response that is
wrong (malformed, a missing field, NaN) is not transient and fails the run at once.

Every attempt is counted against the request budget before it is sent, so the counts in
``runinfo.json`` are requests that really left the harness.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Callable

from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.fieldmap import ResponseError

DEFAULT_RETRIES = 3
DEFAULT_TIMEOUT = 10.0
BASE_DELAY = 0.05
MAX_DELAY = 2.0
RETRY_AFTER_CAP = 30.0


class Transient(Exception):
    """One attempt failed in a way worth retrying; ``status`` is what the log records."""

    def __init__(self, status: str, detail: str, retry_after: float | None = None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.retry_after = retry_after


class SystemFailure(BackendError):
    """The system under test failed a query; the message names the query and what."""


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass
class QueryRecord:
    latency_ms: float
    attempts: int
    status: object

    def block(self) -> dict:
        return {"latency_ms": round(self.latency_ms, 4), "attempts": self.attempts,
                "status": self.status}


class RequestLog:
    """Thread-safe counts: requests sent, retries, the budget, and one record per query."""

    def __init__(self, budget: int | None = None):
        if budget is not None and (isinstance(budget, bool) or budget < 1):
            raise ValueError(f"--request-budget must be a positive integer, got {budget!r}")
        self.budget = budget
        self.sent = 0
        self.retries = 0
        self.retry_after_waits = 0
        self.queries: dict[str, QueryRecord] = {}
        self.repeat = 0
        self._lock = threading.Lock()

    def take(self, query_id: str) -> None:
        """Count one request about to be sent; refuse it when the budget is spent."""
        with self._lock:
            if self.budget is not None and self.sent >= self.budget:
                raise SystemFailure(f"query {query_id}: the request budget of {self.budget} "
                                    f"requests is exhausted ({self.sent} sent); raise "
                                    "--request-budget or gate the run (--gate sequential)")
            self.sent += 1

    def record(self, query_id: str, record: QueryRecord) -> None:
        with self._lock:
            key = query_id if self.repeat == 0 else f"{query_id}#{self.repeat + 1}"
            self.queries[key] = record
            self.retries += record.attempts - 1

    def stats(self) -> dict:
        with self._lock:
            return {"requests_sent": self.sent, "retries": self.retries,
                    "retry_after_waits": self.retry_after_waits, "request_budget": self.budget,
                    "queries": {q: r.block() for q, r in sorted(self.queries.items())}}


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = DEFAULT_RETRIES
    timeout: float = DEFAULT_TIMEOUT
    base_delay: float = BASE_DELAY
    max_delay: float = MAX_DELAY

    def __post_init__(self):
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"--http-retries must be a non-negative integer, got {self.retries!r}")
        if not (self.timeout > 0):
            raise ValueError(f"--http-timeout must be positive seconds, got {self.timeout!r}")

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        backoff = rng.uniform(0.0, min(self.max_delay, self.base_delay * (2 ** attempt)))
        if retry_after is not None:
            return max(backoff, min(retry_after, RETRY_AFTER_CAP))
        return backoff

    def describe(self) -> dict:
        return {"retries": self.retries, "timeout_seconds": self.timeout,
                "backoff": f"full jitter, base {self.base_delay:g} s, cap {self.max_delay:g} s; "
                           "Retry-After honoured"}


def call(query_id: str, attempt: Callable[[], tuple[object, object]], policy: RetryPolicy,
         log: RequestLog, rng: random.Random | None = None):
    """Run ``attempt()`` (returns ``(result, status)``, raises :class:`Transient`) with
    retries; record latency (first send to last answer), attempts and status; return the
    result.  Raises :class:`SystemFailure` once retries are spent."""
    rng = rng or random.Random()
    started = time.perf_counter()
    failures: list[str] = []
    for n in range(policy.retries + 1):
        log.take(query_id)
        try:
            result, status = attempt()
        except Transient as exc:
            failures.append(exc.detail)
            if n == policy.retries:
                log.record(query_id, QueryRecord((time.perf_counter() - started) * 1000.0,
                                                 n + 1, exc.status))
                raise SystemFailure(
                    f"query {query_id}: {exc.detail} (after {n + 1} attempts; earlier: "
                    f"{'; '.join(failures[:-1][-3:]) or 'none'}); raise --http-retries or "
                    "--http-timeout, or fix the system") from None
            if exc.retry_after is not None:
                with log._lock:
                    log.retry_after_waits += 1
            time.sleep(policy.delay(n, exc.retry_after, rng))
            continue
        except ResponseError as exc:
            log.record(query_id, QueryRecord((time.perf_counter() - started) * 1000.0, n + 1,
                                             "bad response"))
            raise SystemFailure(str(exc)) from None
        log.record(query_id, QueryRecord((time.perf_counter() - started) * 1000.0, n + 1,
                                         status))
        return result
    raise AssertionError("unreachable")  # pragma: no cover
