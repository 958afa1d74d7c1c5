"""One connection to an OpenSearch node, with retries that are counted.

Every request goes through :meth:`Node.call`:

* **429** (the node rejected the request: a full queue, a circuit breaker) and **timeouts**
  are retried with exponential backoff (``0.25 s x 2^attempt``, at most 8 s, ``retries``
  times) and counted (:meth:`Node.counts`, recorded in runinfo.json);
* a refused or broken connection is not retried: the node is down, and the message says so;
* each attempt is answered completely within the timeout and holds at most
  ``max_response_bytes`` (:mod:`.connection`), or it is a timeout / an error;
* an answer that is not JSON (a proxy's HTML page) says the URL is probably not a node's;
* a missing index (404 ``index_not_found_exception``) says the index is gone;
* anything else is the node's own error type and reason.

Each becomes a :class:`~harness.retrieval.backends.base.BackendError` naming the URL and
what was being done, never a traceback.
"""

from __future__ import annotations

import logging
import threading
from urllib.parse import urlsplit

from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.retry import Backoff, Transient, check_timeout, retrying
from harness.retrieval.backends.system import check_max_bytes

#: the default cap on one answer of the node (``--opensearch-max-response-bytes``)
DEFAULT_MAX_RESPONSE_BYTES = 256 << 20

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 5
BACKOFF_START = 0.25
BACKOFF_CAP = 8.0
#: a force-merge of a vector index can take minutes on two cores
LONG_TIMEOUT = 3600.0


#: ``min(8, 0.25 * 2^attempt)`` seconds before retry ``attempt`` (0-based), no jitter
BACKOFF = Backoff(BACKOFF_START, BACKOFF_CAP, jitter=False)


def check_url(url: str | None) -> str:
    """``http(s)://host[:port]`` without a path, query or credentials, or ValueError."""
    if not url:
        raise ValueError("OpenSearch needs --opensearch-url URL (or $OPENSEARCH_URL)")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--opensearch-url {url!r}: expected http://HOST:PORT or https://HOST:PORT")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError(f"--opensearch-url {url!r}: give the node's root URL, without a path "
                         "or query")
    if parts.username or parts.password:
        raise ValueError("--opensearch-url: credentials in the URL are not supported (they "
                         "would be written into runinfo.json)")
    try:
        _ = parts.port  # urlsplit parses the port lazily: reading it raises ValueError if not a number
    except ValueError:
        raise ValueError(f"--opensearch-url {url!r}: the port is not a number") from None
    return url.rstrip("/")


def reason(exc) -> str:
    """The node's error type and reason, or the transport's message."""
    info = getattr(exc, "info", None)
    if isinstance(info, dict) and isinstance(info.get("error"), dict):
        err = info["error"]
        cause = (err.get("root_cause") or [{}])[0]
        kind = cause.get("type") or err.get("type")
        text = cause.get("reason") or err.get("reason")
        return f"{kind}: {text}"
    error = getattr(exc, "error", None)
    if isinstance(error, str) and error not in ("N/A", ""):
        return error
    return str(getattr(exc, "info", None) or exc)


class Node:
    """A client for one node.  Thread-safe (the harness retrieves from a thread pool)."""

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT,
                 retries: int = DEFAULT_RETRIES, pool: int = 10,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        from opensearchpy import OpenSearch

        from harness.retrieval.backends.opensearch.connection import BoundedConnection

        logging.getLogger("opensearch").setLevel(logging.WARNING)  # one INFO line per request
        self.url = check_url(url)
        check_timeout(timeout, "--opensearch-timeout")
        check_max_bytes(max_response_bytes, "--opensearch-max-response-bytes")
        if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
            raise ValueError(f"--opensearch-retries must be a non-negative integer, got {retries!r}")
        self.timeout = float(timeout)
        self.retries = retries
        self.client = OpenSearch(hosts=[self.url], timeout=self.timeout, max_retries=0,
                                 retry_on_timeout=False, pool_maxsize=pool,
                                 connection_class=BoundedConnection,
                                 max_response_bytes=max_response_bytes)
        self._lock = threading.Lock()
        self._counts = {"rejected_429": 0, "timeouts": 0, "retries": 0,
                        "bulk_items_rejected_429": 0, "backoff_seconds": 0.0}

    # ------------------------------------------------------------------ counters

    def count(self, key: str, n: float = 1) -> None:
        with self._lock:
            self._counts[key] += n

    def counts(self) -> dict:
        with self._lock:
            out = dict(self._counts)
        out["backoff_seconds"] = round(out["backoff_seconds"], 3)
        return out

    # ------------------------------------------------------------------ requests

    def call(self, what: str, fn, *args, **kwargs):
        """``fn(*args, **kwargs)`` with the retry policy of the module docstring (the one
        retry loop, :func:`~harness.retrieval.backends.retry.retrying`)."""
        def once():
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                raise self._failure(what, exc, kwargs) from None

        def waited(n: int, exc: Transient, wait: float) -> None:
            self.count("retries")
            self.count("backoff_seconds", wait)
            log.warning("OpenSearch %s while %s (%s); retry %d/%d in %.2f s",
                        "rejected the request" if exc.status == "rejected_429" else "timed out",
                        what, exc.detail, n + 1, self.retries, wait)

        try:
            return retrying(once, retries=self.retries, backoff=BACKOFF, on_retry=waited)
        except Transient as exc:
            raise BackendError(
                f"OpenSearch at {self.url}: {what} failed {self.retries + 1} times "
                f"({'HTTP 429' if exc.status == 'rejected_429' else 'timeout'}: {exc.detail}); "
                f"gave up after {self.retries} retries with backoff") from None

    def _failure(self, what: str, exc: Exception, kwargs: dict) -> Exception:
        """What one failed attempt means: a counted :class:`Transient` (timeout, HTTP 429)
        or a :class:`BackendError` naming the URL and what was being done."""
        from opensearchpy import exceptions as ex

        if isinstance(exc, ex.ConnectionTimeout):
            self.count("timeouts")
            return Transient("timeouts", "no answer within "
                             f"{kwargs.get('request_timeout', self.timeout):g} s")
        if isinstance(exc, ex.ConnectionError):
            return BackendError(
                f"OpenSearch at {self.url} is unreachable while {what}: {reason(exc)} "
                "(is the node running, and is this its URL?)")
        if isinstance(exc, ex.TransportError):
            status = exc.status_code
            if status == 429:
                self.count("rejected_429")
                return Transient("rejected_429", reason(exc))
            if status == 404 and "index_not_found" in reason(exc):
                return BackendError(
                    f"OpenSearch at {self.url}: {what}: the index does not exist (deleted "
                    f"during the run?): {reason(exc)}")
            return BackendError(f"OpenSearch at {self.url} refused {what}: HTTP {status} "
                                f"{reason(exc)}")
        if isinstance(exc, ex.SerializationError):
            return BackendError(
                f"{self.url} answered {what} with something that is not JSON ({exc}): "
                "is this an OpenSearch node's URL?")
        if isinstance(exc, RecursionError):
            return BackendError(f"{self.url} answered {what} with JSON nested too deeply to "
                                "read: is this an OpenSearch node's URL?")
        return exc

    def server(self) -> dict:
        """``{distribution, version, lucene_version, plugins: {name: version}}``; refuses a
        server that does not answer as OpenSearch 2.x or later."""
        info = self.call("reading the server's version", self.client.info)
        version = info.get("version") if isinstance(info, dict) else None
        if not isinstance(version, dict) or version.get("distribution") != "opensearch":
            raise BackendError(f"{self.url} answers HTTP but not as OpenSearch (its root "
                               f"document names no 'opensearch' distribution): check the URL")
        number = str(version.get("number", ""))
        try:
            major = int(number.split(".")[0])
        except ValueError:
            major = 0
        if major < 2:
            raise BackendError(f"{self.url} runs OpenSearch {number!r}; this backend needs 2.x "
                               "or later (Lucene k-NN, search pipelines)")
        rows = self.call("listing the plugins", self.client.cat.plugins, format="json")
        plugins = {}
        for row in rows or []:
            plugins[row.get("component")] = row.get("version")
        return {"distribution": "opensearch", "version": number,
                "lucene_version": version.get("lucene_version"),
                "plugins": dict(sorted(plugins.items()))}

    def search(self, what: str, index: str, body: dict, **params):
        """A search; refuses to send an aggregation together with a hybrid query (reference
        000: measurement code never issues one, the 3.4 score-ranker-processor crash)."""
        if has_hybrid(body.get("query")) and (body.get("aggs") or body.get("aggregations")):
            raise ValueError("refusing to send an aggregation with a hybrid query")
        return self.call(what, self.client.search, index=index, body=body, **params)


def has_hybrid(query) -> bool:
    """True when a query body holds a ``hybrid`` clause anywhere."""
    if isinstance(query, dict):
        return "hybrid" in query or any(has_hybrid(v) for v in query.values())
    if isinstance(query, list):
        return any(has_hybrid(v) for v in query)
    return False
