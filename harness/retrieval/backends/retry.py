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

import math
import random
import threading
import time
from dataclasses import dataclass
from typing import Callable, TypeVar

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


def check_timeout(value, flag: str) -> float:
    """A timeout in seconds: a finite positive number (``inf``, ``nan``, 0 and negatives are
    refused with ValueError naming ``flag``)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value <= 0:
        raise ValueError(f"{flag} must be a finite positive number of seconds, got {value!r}")
    return float(value)


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

    def count_retry_after(self) -> None:
        with self._lock:
            self.retry_after_waits += 1

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
class Backoff:
    """The wait before retry ``attempt`` (0-based): ``min(cap, base * 2**attempt)`` seconds,
    or, with ``jitter``, a delay drawn uniformly from ``[0, that]`` (full jitter; Brooker,
    "Exponential Backoff And Jitter", AWS Architecture Blog 2015).  A ``Retry-After`` is a
    floor (capped at ``RETRY_AFTER_CAP``)."""

    base: float = BASE_DELAY
    cap: float = MAX_DELAY
    jitter: bool = True

    def delay(self, attempt: int, retry_after: float | None = None,
              rng: random.Random | None = None) -> float:
        ceiling = min(self.cap, self.base * (2 ** attempt))
        wait = (rng or random).uniform(0.0, ceiling) if self.jitter else ceiling
        if retry_after is not None:
            return max(wait, min(retry_after, RETRY_AFTER_CAP))
        return wait

    def describe(self) -> str:
        return (f"{'full jitter' if self.jitter else 'exponential'}, base {self.base:g} s, "
                f"cap {self.cap:g} s")


T = TypeVar("T")


def retrying(attempt: Callable[[], T], *, retries: int, backoff: Backoff,
             rng: random.Random | None = None,
             on_retry: Callable[[int, Transient, float], None] | None = None) -> T:
    """Call ``attempt()`` until it returns; a :class:`Transient` it raises is retried after
    ``backoff.delay`` up to ``retries`` times (``on_retry(n, exc, wait)`` is told first),
    and the last one is raised again.  The one retry loop of every backend."""
    for n in range(retries + 1):
        try:
            return attempt()
        except Transient as exc:
            if n == retries:
                raise
            wait = backoff.delay(n, exc.retry_after, rng)
            if on_retry is not None:
                on_retry(n, exc, wait)
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class RetryPolicy:
    retries: int = DEFAULT_RETRIES
    timeout: float = DEFAULT_TIMEOUT
    base_delay: float = BASE_DELAY
    max_delay: float = MAX_DELAY

    def __post_init__(self):
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"--http-retries must be a non-negative integer, got {self.retries!r}")
        check_timeout(self.timeout, "--http-timeout")

    @property
    def backoff(self) -> Backoff:
        return Backoff(self.base_delay, self.max_delay)

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        return self.backoff.delay(attempt, retry_after, rng)

    def describe(self) -> dict:
        return {"retries": self.retries, "timeout_seconds": self.timeout,
                "backoff": f"{self.backoff.describe()}; Retry-After honoured"}


def call(query_id: str, attempt: Callable[[], tuple[object, object]], policy: RetryPolicy,
         log: RequestLog, rng: random.Random | None = None):
    """Run ``attempt()`` (returns ``(result, status)``, raises :class:`Transient`) with
    :func:`retrying`; record latency (first send to last answer), attempts and status; return
    the result.  Raises :class:`SystemFailure` once retries are spent."""
    started = time.perf_counter()
    failures: list[str] = []
    sent = [0]

    def once():
        log.take(query_id)
        sent[0] += 1
        try:
            return attempt()
        except Transient as exc:
            failures.append(exc.detail)
            raise

    def waited(n: int, exc: Transient, wait: float) -> None:
        if exc.retry_after is not None:
            log.count_retry_after()

    def record(status) -> None:
        log.record(query_id, QueryRecord((time.perf_counter() - started) * 1000.0, sent[0],
                                         status))

    try:
        result, status = retrying(once, retries=policy.retries, backoff=policy.backoff,
                                  rng=rng, on_retry=waited)
    except Transient as exc:
        record(exc.status)
        raise SystemFailure(
            f"query {query_id}: {exc.detail} (after {sent[0]} attempts; earlier: "
            f"{'; '.join(failures[:-1][-3:]) or 'none'}); raise --http-retries or "
            "--http-timeout, or fix the system") from None
    except ResponseError as exc:
        record("bad response")
        raise SystemFailure(str(exc)) from None
    record(status)
    return result
