"""``--backend http``: a deployed retrieval system behind an HTTP endpoint.

Each query is one request rendered from ``--url-template`` (placeholders ``{query}``
URL-encoded, ``{query_id}`` URL-encoded, ``{k}``) and, for POST, ``--body-template`` (JSON
text; ``{query}`` and ``{query_id}`` are inserted JSON-escaped, so put them inside quotes;
``{k}`` as a bare number).  Requests go through one pooled client
(:mod:`~harness.retrieval.backends.bounded_http`) with ``--http-concurrency`` connections:
each attempt is answered completely within ``--http-timeout`` seconds or it is a timeout,
and an answer over ``--max-response-bytes`` fails the run.  Header values given as
``env:VAR`` and ``{env:VAR}`` template placeholders are read from the environment when the
backend is built and never written anywhere: ``system_under_test`` keeps the header names
only, and every message is cleared of them.
"""

from __future__ import annotations

from typing import Sequence

from harness.retrieval.backends.base import SearchQuery
from harness.retrieval.backends.bounded_http import (
    BodyTooLarge,
    BoundedClient,
    HttpTimeout,
    HttpUnreachable,
)
from harness.retrieval.backends.fieldmap import ResponseError, decode_json
from harness.retrieval.backends.retry import Transient, parse_retry_after
from harness.retrieval.backends.system import SystemBackend
from harness.retrieval.backends.templates import (
    literal_secrets,
    redact_body,
    redact_url,
    render_body,
    render_url,
    resolve_env,
    resolve_header,
)


class HttpBackend(SystemBackend):
    name = "http"
    kind = "http"

    def __init__(self, *, url_template: str, method: str = "GET",
                 body_template: str | None = None,
                 headers: Sequence[tuple[str, str]] = (), **kwargs):
        super().__init__(**kwargs)
        self.url_template = url_template
        self.method = method
        self.body_template = body_template
        self.header_names = tuple(sorted(n for n, _ in headers))
        resolved = {name: resolve_header(value, f"--header {name}") for name, value in headers}
        self._env = resolve_env(url_template, body_template)
        # every header value given (of 6 characters or more: shorter ones would blank out
        # unrelated text) counts as a secret in messages: a literal Authorization value is
        # as secret as an env: one; only header names are recorded
        self.secrets = (*self._env.values(), *literal_secrets(url_template),
                        *(resolved[n] for n, _ in headers if len(resolved[n]) >= 6))
        if body_template is not None:
            resolved.setdefault("Content-Type", "application/json")
        resolved.setdefault("Accept", "application/json")
        self._client = BoundedClient(timeout=self.policy.timeout, max_bytes=self.max_bytes,
                                     connections=self.concurrency, headers=resolved)

    def fetch(self, query: SearchQuery, k: int):
        url = render_url(self.url_template, query, k, self._env)
        content = None if self.body_template is None else render_body(
            self.body_template, query, k, self._env)
        try:
            answer = self._client.request(self.method, url, content=content)
        except HttpTimeout as exc:
            raise Transient("timeout", str(exc)) from None
        except HttpUnreachable as exc:
            raise Transient("connection error", f"connection error ({exc})") from None
        except BodyTooLarge as exc:
            raise ResponseError(f"query {query.query_id}: {exc} (--max-response-bytes); "
                                "nothing more was read") from None
        status = answer.status
        if status == 429 or status >= 500:
            raise Transient(status, f"HTTP {status}",
                            parse_retry_after(answer.headers.get("retry-after")))
        if status != 200:
            raise ResponseError(f"query {query.query_id}: HTTP {status} from the system "
                                f"({answer.text()!r})")
        return decode_json(answer.body, query.query_id, "the response"), status

    def target(self) -> dict:
        return {"url_template": redact_url(self.url_template), "method": self.method,
                "body_template": redact_body(self.body_template), "headers": list(self.header_names)}

    def close(self) -> None:
        self._client.close()
