"""A hostile HTTP peer on 127.0.0.1 (stdlib sockets, a thread per connection): it answers
every request with what a test scripts, byte by byte if need be, so the bounds of the
harness's HTTP client are tested against a real socket.

``HostileServer(script)``: ``script(request_head: bytes)`` returns an iterable of
``bytes`` (sent as they come) or ``float`` (seconds to sleep before the next piece).
"""

from __future__ import annotations

import socket
import threading
import time


def head(status: str = "200 OK", *, content_type: str = "application/json",
         length: int | None = None, chunked: bool = False) -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Type: {content_type}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def whole(body: bytes, status: str = "200 OK", content_type: str = "application/json"):
    """A complete answer with ``body``."""
    return lambda request: [head(status, content_type=content_type, length=len(body)) + body]


def drip(every: float, total: int = 1000):
    """A declared ``total``-byte JSON-looking body sent one byte every ``every`` seconds."""
    def script(request):
        yield head(length=total)
        for _ in range(total):
            yield every
            yield b" "
    return script


def endless_chunks(piece: int = 1 << 16):
    """A chunked body that never ends (``piece`` spaces a chunk)."""
    def script(request):
        yield head(chunked=True)
        chunk = f"{piece:x}\r\n".encode() + b" " * piece + b"\r\n"
        while True:
            yield chunk
    return script


def huge(declared: int):
    """A body declared as ``declared`` bytes, zeros sent until the peer goes."""
    def script(request):
        yield head(length=declared)
        while True:
            yield b"0" * (1 << 16)
    return script


class HostileServer:
    def __init__(self, script):
        self.script = script
        self.requests: list[bytes] = []
        self.sent = 0
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.url = "http://127.0.0.1:%d" % self._sock.getsockname()[1]
        self._stop = threading.Event()

    def __enter__(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._sock.close()

    def _accept(self):
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        with conn:
            try:
                while not self._stop.is_set():
                    request = self._read_request(conn)
                    if request is None:
                        return
                    self.requests.append(request)
                    for piece in self.script(request):
                        if self._stop.is_set():
                            return
                        if isinstance(piece, float):
                            time.sleep(piece)
                        else:
                            conn.sendall(piece)
                            self.sent += len(piece)
            except OSError:
                return

    @staticmethod
    def _read_request(conn) -> bytes | None:
        data = b""
        while b"\r\n\r\n" not in data:
            more = conn.recv(65536)
            if not more:
                return None
            data += more
        top, _, rest = data.partition(b"\r\n\r\n")
        for line in top.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                need = int(line.split(b":")[1]) - len(rest)
                while need > 0:
                    more = conn.recv(need)
                    if not more:
                        break
                    rest += more
                    need -= len(more)
        return top + b"\r\n\r\n" + rest
