"""HTTP requests whose every resource the other side controls is bounded.

One pooled client (``httpcore``) for ``--backend http`` and the OpenSearch node:

* **a deadline per request**: the connection, the request and every read of the answer must
  end within ``timeout`` seconds of the send, together.  A read waits at most ``timeout``
  and never past the deadline, so a server dripping one byte a second is cut off at the
  deadline (a per-read timeout alone would wait for ever);
* **a byte cap per answer** (``max_bytes``): the body is streamed and the request stopped
  when it passes the cap, whether its length was declared, chunked or never-ending;
* no ``Accept-Encoding``: the bytes counted are the bytes kept (no decompression bomb).

Failures are :class:`HttpTimeout`, :class:`HttpUnreachable` (refused, reset, not HTTP) and
:class:`BodyTooLarge`; the caller decides what each means.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Mapping

import httpcore

_local = threading.local()


class HttpTimeout(Exception):
    """No complete answer within the deadline."""


class HttpUnreachable(Exception):
    """The connection was refused or broken, or the answer was not HTTP."""


class BodyTooLarge(Exception):
    """The answer's body passed the byte cap; it was not read further."""

    def __init__(self, limit: int):
        super().__init__(f"the answer is larger than {limit} bytes")
        self.limit = limit


def _bound(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` shortened to what is left of this thread's deadline."""
    end = getattr(_local, "end", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise error("the deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _bound(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _bound(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None):
        return _DeadlineStream(self._inner.start_tls(
            ssl_context, server_hostname, _bound(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """The standard socket backend, every wait cut to the calling thread's deadline."""

    def __init__(self):
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _DeadlineStream(self._inner.connect_tcp(
            host, port, _bound(timeout, httpcore.ConnectTimeout), local_address,
            socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]  # names lower-cased
    body: bytes

    def text(self, limit: int = 120) -> str:
        """The start of the body as text, for a message."""
        return self.body[:limit].decode("utf-8", "replace")


class BoundedClient:
    """A pool of ``connections`` keep-alive connections; thread-safe."""

    def __init__(self, *, timeout: float, max_bytes: int,
                 connections: int = 10, headers: Mapping[str, str] | None = None):
        self.timeout = float(timeout)
        self.max_bytes = int(max_bytes)
        self.headers = dict(headers or {})
        self._pool = httpcore.ConnectionPool(max_connections=connections,
                                             max_keepalive_connections=connections,
                                             network_backend=_DeadlineBackend())

    def request(self, method: str, url: str, *, content: bytes | None = None,
                headers: Mapping[str, str] | None = None, timeout: float | None = None,
                max_bytes: int | None = None) -> Answer:
        timeout = self.timeout if timeout is None else float(timeout)
        limit = self.max_bytes if max_bytes is None else int(max_bytes)
        sent = {**self.headers, **(headers or {})}
        waits = {"connect": timeout, "read": timeout, "write": timeout, "pool": timeout}
        _local.end = time.monotonic() + timeout
        try:
            with self._pool.stream(method, url, headers=list(sent.items()), content=content,
                                   extensions={"timeout": waits}) as response:
                found = {k.decode("latin-1").lower(): v.decode("latin-1")
                         for k, v in response.headers}
                declared = found.get("content-length", "")
                if declared.isdigit() and int(declared) > limit:
                    raise BodyTooLarge(limit)
                return Answer(response.status, found, _read(response, limit))
        except httpcore.TimeoutException:
            raise HttpTimeout(f"no complete answer within {timeout:g} s") from None
        except (httpcore.NetworkError, httpcore.ProtocolError,
                httpcore.UnsupportedProtocol) as exc:
            raise HttpUnreachable(f"{type(exc).__name__}: {exc}") from None
        finally:
            _local.end = None

    def close(self) -> None:
        self._pool.close()


def _read(response, limit: int) -> bytes:
    chunks, size = [], 0
    for chunk in response.iter_stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)
