"""The transport under the OpenSearch client: :mod:`~harness.retrieval.backends.bounded_http`.

``opensearch-py``'s own connection (urllib3) applies its timeout to each read, so a node
(or something posing as one) dripping its answer keeps a request alive for ever, and it
reads a whole body into memory however large.  :class:`BoundedConnection` sends every
request through the bounded client instead: the whole answer within the request's timeout,
at most ``max_response_bytes`` of it, and the client's own exceptions (``ConnectionTimeout``,
``ConnectionError``, ``TransportError``) so :meth:`Node.call` treats them as before.
"""

from __future__ import annotations

import time
from urllib.parse import urlencode

from opensearchpy import Connection
from opensearchpy.exceptions import ConnectionError as OsConnectionError
from opensearchpy.exceptions import ConnectionTimeout

from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.bounded_http import (
    BodyTooLarge,
    BoundedClient,
    HttpTimeout,
    HttpUnreachable,
)

class BoundedConnection(Connection):
    def __init__(self, host: str = "localhost", port: int | None = None, *,
                 max_response_bytes: int, pool_maxsize: int = 10,
                 **kwargs):
        super().__init__(host=host, port=port, **kwargs)
        self._client = BoundedClient(timeout=float(self.timeout), max_bytes=max_response_bytes,
                                     connections=pool_maxsize)

    def perform_request(self, method, url, params=None, body=None, timeout=None, ignore=(),
                        headers=None):
        url = self.url_prefix + url + (f"?{urlencode(params)}" if params else "")
        full_url = self.host + url
        sent = {**self.headers, **(headers or {})}
        start = time.time()
        try:
            answer = self._client.request(method, full_url, content=body, headers=sent,
                                          timeout=timeout or self.timeout)
        except HttpTimeout as exc:
            self.log_request_fail(method, full_url, url, body, time.time() - start, exception=exc)
            raise ConnectionTimeout("TIMEOUT", str(exc), exc) from None
        except HttpUnreachable as exc:
            self.log_request_fail(method, full_url, url, body, time.time() - start, exception=exc)
            raise OsConnectionError("N/A", str(exc), exc) from None
        except BodyTooLarge as exc:
            raise BackendError(f"OpenSearch at {self.host}: the answer to {method} {url} is "
                               f"larger than {exc.limit} bytes "
                               "(--opensearch-max-response-bytes); nothing more was read") from None
        raw = answer.body.decode("utf-8", "surrogatepass")
        duration = time.time() - start
        if not 200 <= answer.status < 300 and answer.status not in ignore:
            self.log_request_fail(method, full_url, url, body, duration, answer.status, raw)
            self._raise_error(answer.status, raw, answer.headers.get("content-type"))
        self.log_request_success(method, full_url, url, body, answer.status, raw, duration)
        return answer.status, answer.headers, raw

    def close(self) -> None:
        self._client.close()
