"""One writer at a time: an exclusive ``fcntl`` lock on ``<warehouse>.lock``.

DuckDB refuses a second writer (and every reader) while a process holds the file for
writing, but it fails at once.  Writers therefore queue on this lock first, with a bounded
wait.  The holder writes who it is (pid, command, since) into the lock file so that a
waiting writer or a busy reader can say who is in the way.  The kernel releases the lock
when the holder dies, even by SIGKILL; the text left behind is then only a stale note and
is never trusted on its own.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import socket
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

from warehouse.errors import WarehouseBusy

log = logging.getLogger(__name__)

POLL_SECONDS = 0.05


def lock_path(db_path) -> Path:
    return Path(f"{db_path}.lock")


def describe_holder(db_path) -> str | None:
    """Who holds (or last held) the writer lock, read without taking it; None if unknown."""
    try:
        text = lock_path(db_path).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text:
        return None
    try:
        info = json.loads(text)
        return f"pid {info['pid']} ({info['command']}) on {info['host']} since {info['since']}"
    except (ValueError, KeyError, TypeError):
        return None


def _holder_note() -> str:
    command = " ".join(sys.argv) if sys.argv and sys.argv[0] else sys.executable
    return json.dumps({
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": command[:300],
        "since": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    })


class WriterLock:
    """Context manager holding the writer lock of ``db_path`` for its body.

    Waits up to ``timeout`` seconds, then raises :class:`WarehouseBusy` naming the holder.
    """

    def __init__(self, db_path, timeout: float):
        self.db_path = Path(db_path)
        self.timeout = timeout
        self._fd: int | None = None

    def __enter__(self) -> "WriterLock":
        path = lock_path(self.db_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        logged = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                    os.close(fd)
                    raise
            if time.monotonic() >= deadline:
                os.close(fd)
                holder = describe_holder(self.db_path) or "another process"
                raise WarehouseBusy(
                    f"warehouse busy: {self.db_path} is being written by {holder}; "
                    f"waited {self.timeout:g} s for the writer lock")
            if not logged:
                log.info("waiting for the writer lock of %s (held by %s)", self.db_path,
                         describe_holder(self.db_path) or "another process")
                logged = True
            time.sleep(POLL_SECONDS)
        os.ftruncate(fd, 0)
        os.pwrite(fd, (_holder_note() + "\n").encode("utf-8"), 0)
        self._fd = fd
        return self

    def __exit__(self, *exc_info) -> None:
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
