"""A real S3 API on 127.0.0.1 for tests and benchmarks: moto's server in its own process.

    from tests.servers import s3
    server = s3.start_server()          # python -m moto.server on a free port, waited for
    server.env                          # AWS_* variables a boto3 client (or a subprocess) needs
    server.create_bucket("team")
    server.stop()

:class:`Cuttable` puts a TCP forwarder in front of it whose ``cut()`` refuses and drops every
connection (the store "unreachable") until ``restore()``: moto keeps its objects in memory,
so the server itself is never stopped mid-test.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1"}
START_TIMEOUT = 60.0


def available() -> tuple[bool, str]:
    try:
        import boto3  # noqa: F401
        import moto.server  # noqa: F401
    except ImportError as exc:
        return False, f"moto[server] and boto3 are needed (requirements-test.txt): {exc}"
    return True, ""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Server:
    process: subprocess.Popen
    port: int
    log: object = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        return {**CREDENTIALS, "AWS_ENDPOINT_URL_S3": self.url}

    def client(self, url: str | None = None):
        import boto3

        return boto3.client("s3", endpoint_url=url or self.url, region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")

    def create_bucket(self, name: str) -> None:
        self.client().create_bucket(Bucket=name)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_server(timeout: float = START_TIMEOUT) -> Server:
    """``python -m moto.server`` on 127.0.0.1 and a free port, answering before it returns."""
    port = free_port()
    env = {**os.environ, **CREDENTIALS}
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                                "-p", str(port)], env=env, stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = Server(process, port)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"moto server exited with {process.returncode}")
        try:
            urllib.request.urlopen(f"{server.url}/moto-api/", timeout=1).close()
            return server
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    server.stop()
    raise RuntimeError(f"moto server did not answer on port {port} in {timeout:g} s")


@dataclass
class Cuttable:
    """A TCP forwarder 127.0.0.1:port -> target that can be cut and restored."""

    target: int
    port: int = 0
    _open: threading.Event = field(default_factory=threading.Event)
    _conns: list = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", self.port))
        self.port = self._listener.getsockname()[1]
        self._listener.listen(128)
        self._open.set()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._open.is_set():
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target), timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._conns += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    def _pipe(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data or not self._open.is_set():
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def cut(self) -> None:
        """Every new connection is closed at once; open ones are dropped."""
        self._open.clear()
        with self._lock:
            conns, self._conns = self._conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
                s.close()
            except OSError:
                pass

    def restore(self) -> None:
        self._open.set()

    def close(self) -> None:
        self.cut()
        self._listener.close()
