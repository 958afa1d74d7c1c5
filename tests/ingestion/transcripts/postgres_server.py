"""A throwaway PostgreSQL server for the transcript-store tests (Debian's ``postgresql``).

One server per test session, shared by every conftest that asks for it (reference counted:
it stops when the last session fixture using it is torn down).  It listens on 127.0.0.1 on a
free port with its data directory, socket and log in a temp directory, trust authentication
and ``fsync=off``.  When the tests run as root, ``initdb``/``pg_ctl`` run as the
``postgres`` user (PostgreSQL refuses root) on a temp directory that user owns.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

#: where Debian's postgresql package puts its server binaries (newest version first)
DEBIAN_GLOB = "/usr/lib/postgresql/*/bin"
SUPERUSER = "postgres"


def find_binaries() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: ``$PG_BIN``, then PATH, then
    Debian's versioned directories."""
    candidates = []
    if os.environ.get("PG_BIN"):
        candidates.append(Path(os.environ["PG_BIN"]))
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).parent)
    candidates += sorted((Path(p) for p in glob.glob(DEBIAN_GLOB)),
                         key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
                         reverse=True)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def why_unavailable() -> str | None:
    """None when a server can be started here, else the reason (for pytest.skip)."""
    if find_binaries() is None:
        return ("PostgreSQL server binaries (initdb, pg_ctl) not found on PATH, in $PG_BIN or "
                f"under {DEBIAN_GLOB}; install Debian's postgresql package (.ci/run does)")
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam(SUPERUSER)
        except KeyError:
            return f"running as root and there is no {SUPERUSER!r} user to run PostgreSQL as"
        if shutil.which("runuser") is None and shutil.which("su") is None:
            return "running as root and neither runuser nor su is available"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PostgresServer:
    def __init__(self):
        self.bin = find_binaries()
        self.root = Path(tempfile.mkdtemp(prefix="transcripts-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = _free_port()
        self.as_root = os.geteuid() == 0
        self.started = False

    def _cmd(self, *args: str) -> list[str]:
        if not self.as_root:
            return list(args)
        if shutil.which("runuser"):
            return ["runuser", "-u", SUPERUSER, "--", *args]
        import shlex

        return ["su", SUPERUSER, "-c", shlex.join(args)]

    def _run(self, *args: str) -> None:
        proc = subprocess.run(self._cmd(*args), capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            tail = self.log.read_text()[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed ({proc.returncode}): "
                               f"{proc.stderr.strip()}\n{tail}")

    def start(self) -> None:
        if self.as_root:
            import pwd

            user = pwd.getpwnam(SUPERUSER)
            os.chown(self.root, user.pw_uid, user.pw_gid)
        os.chmod(self.root, 0o700)
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER,
                  "-A", "trust", "-E", "UTF8", "--no-instructions")
        options = (f"-p {self.port} -h 127.0.0.1 -k {self.root} -c fsync=off "
                   "-c full_page_writes=off -c synchronous_commit=off")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log),
                  "-o", options, "-w", "-t", "60", "start")
        self.started = True

    def stop(self) -> None:
        try:
            if self.started:
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast",
                          "-w", "stop")
                self.started = False
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """A new empty database; returns its SQLAlchemy URL."""
        import psycopg

        if not name.replace("_", "").isalnum():
            raise ValueError(f"database name {name!r}: letters, digits and _ only")
        deadline = time.monotonic() + 30
        while True:
            try:
                with psycopg.connect(host="127.0.0.1", port=self.port, user=SUPERUSER,
                                     dbname="postgres", autocommit=True) as conn:
                    conn.execute(f'CREATE DATABASE "{name}"')
                return self.url(name)
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)


_server: PostgresServer | None = None
_users = 0


def acquire() -> PostgresServer:
    global _server, _users
    if _server is None:
        server = PostgresServer()
        try:
            server.start()
        except BaseException:
            server.stop()
            raise
        _server = server
    _users += 1
    return _server


def release() -> None:
    global _server, _users
    _users -= 1
    if _users <= 0 and _server is not None:
        try:
            _server.stop()
        finally:
            _server, _users = None, 0


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server on 127.0.0.1 for the session (skips when the binaries are absent).
    Conftests that need it import this fixture; one server serves them all."""
    reason = why_unavailable()
    if reason:
        pytest.skip(reason)
    server = acquire()
    try:
        yield server
    finally:
        release()
