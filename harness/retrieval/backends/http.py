"""``--backend http``: a deployed retrieval system behind an HTTP endpoint.

Each query is one request rendered from ``--url-template`` (placeholders ``{query}``
URL-encoded, ``{query_id}`` URL-encoded, ``{k}``) and, for POST, ``--body-template`` (JSON
text; ``{query}`` and ``{query_id}`` are inserted JSON-escaped, so put them inside quotes;
``{k}`` as a bare number).  Requests go through one pooled ``httpx`` client with
``--http-concurrency`` connections.  Header values given as ``env:VAR`` are read from the
environment when the backend is built and never written anywhere: ``system_under_test``
keeps the header names only.
"""

from __future__ import annotations

from typing import Sequence

from harness.retrieval.backends.base import SearchQuery
from harness.retrieval.backends.retry import Transient
from harness.retrieval.backends.fieldmap import ResponseError
from harness.retrieval.backends.system import SystemBackend
from harness.retrieval.backends.templates import (
    redact_url,
    render_body,
    render_url,
    resolve_header,
)

class HttpBackend(SystemBackend):
    name = "http"
    kind = "http"

    def __init__(self, *, url_template: str, method: str = "GET",
                 body_template: str | None = None,
                 headers: Sequence[tuple[str, str]] = (), **kwargs):
        super().__init__(**kwargs)
        import logging

        import httpx

        # httpx logs every request at INFO: one line per query is noise, and a URL may be
        # more than the user meant to print
        for name in ("httpx", "httpcore"):
            logging.getLogger(name).setLevel(logging.WARNING)

        self.url_template = url_template
        self.method = method
        self.body_template = body_template
        self.header_names = tuple(sorted(n for n, _ in headers))
        headers = {name: resolve_header(value) for name, value in headers}
        if body_template is not None:
            headers.setdefault("Content-Type", "application/json")
        limits = httpx.Limits(max_connections=self.concurrency,
                              max_keepalive_connections=self.concurrency)
        self._client = httpx.Client(headers=headers, limits=limits,
                                    timeout=httpx.Timeout(self.policy.timeout),
                                    follow_redirects=False, trust_env=False)
        self._httpx = httpx

    def fetch(self, query: SearchQuery, k: int):
        httpx = self._httpx
        url = render_url(self.url_template, query, k)
        content = None if self.body_template is None else render_body(self.body_template,
                                                                      query, k)
        try:
            response = self._client.request(self.method, url, content=content)
        except httpx.TimeoutException:
            raise Transient("timeout", f"no answer within {self.policy.timeout:g} s") from None
        except httpx.TransportError as exc:
            raise Transient("connection error",
                            f"connection error ({type(exc).__name__}: {exc})") from None
        status = response.status_code
        if status == 429 or status >= 500:
            from harness.retrieval.backends.retry import parse_retry_after

            raise Transient(status, f"HTTP {status}",
                            parse_retry_after(response.headers.get("Retry-After")))
        if status != 200:
            raise ResponseError(f"query {query.query_id}: HTTP {status} from the system "
                                f"({response.text[:120]!r})")
        try:
            return response.json(), status
        except ValueError as exc:
            raise ResponseError(f"query {query.query_id}: the response is not JSON ({exc}; "
                                f"starts {response.text[:60]!r})") from None

    def target(self) -> dict:
        return {"url_template": redact_url(self.url_template), "method": self.method,
                "body_template": self.body_template, "headers": list(self.header_names)}

    def close(self) -> None:
        self._client.close()
