"""sha256 of source files, remembered between runs by their status.

Keying a prepared corpus hashes every file under its path (full QMSum: 697 files, about
90 MB, a tenth of a second each run).  The digests are kept in one JSON file beside the
cache's entries, each with the file's device, inode, size, modification and status-change
times (ns).  A file whose status differs in any of them is read again.  The status-change
time cannot be set back from user space: every write, rename, ``chmod`` or ``touch``
moves it, and a replaced file has another inode, so a remembered digest is only served
for a file that nobody has changed since it was hashed.  A digest taken less than
:data:`SETTLE_NS` after the file last changed is not kept: a write in the same clock tick
as the hashing would leave the status as it was (git's "racily clean" case).

The file is replaced whole (write beside, rename), so two processes saving at once leave
one of their versions, each correct; a damaged or unreadable file is an empty memory.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path

from harness.core.atomic import write_files

logger = logging.getLogger(__name__)

FORMAT = 1
#: how long after a file's last change its digest may be remembered
SETTLE_NS = 2_000_000_000


def _status(stat: os.stat_result) -> list[int]:
    return [stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns]


def _read_sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class FileDigests:
    """sha256 of files by absolute path; ``memory`` is the JSON file (None: remember
    nothing)."""

    def __init__(self, memory: Path | None, settle_ns: int = SETTLE_NS):
        self.memory = memory
        self.settle_ns = settle_ns
        self._known: dict[str, list] = {}
        self._changed = False
        if memory is not None:
            try:
                doc = json.loads(memory.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                doc = None
            if isinstance(doc, dict) and doc.get("format") == FORMAT and isinstance(
                    doc.get("files"), dict):
                self._known = {path: entry for path, entry in doc["files"].items()
                               if isinstance(entry, list) and len(entry) == 6}

    def sha256(self, path: str, stat: os.stat_result | None = None) -> str:
        """The file's sha256 (``stat``: its ``os.stat``, when the caller has it)."""
        path = os.path.abspath(path)
        status = _status(stat if stat is not None else os.stat(path))
        known = self._known.get(path)
        if known is not None and known[:5] == status:
            return known[5]
        started = time.time_ns()
        digest = _read_sha256(path)
        after = _status(os.stat(path))
        if self.memory is not None and after == status and \
                started - max(status[3], status[4]) >= self.settle_ns:
            self._known[path] = [*status, digest]
            self._changed = True
        elif known is not None:
            del self._known[path]
            self._changed = True
        return digest

    def save(self) -> None:
        """Write what was learnt (nothing when nothing changed; a failure only forgets)."""
        if self.memory is None or not self._changed:
            return
        text = json.dumps({"format": FORMAT, "files": self._known}, sort_keys=True)
        try:
            write_files([(self.memory, text)])
        except OSError as exc:  # a memory that cannot be kept is only forgotten
            logger.info("file digests not remembered (%s): the next run reads the files again", exc)
        self._changed = False
