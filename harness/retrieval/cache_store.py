"""A keyed on-disk store shared by concurrent processes: the prepared-corpus and index caches.

An entry is named by the sha256 of its key (a JSON object of everything that made it: input
digests, parameters, code revision), so any change of any key part names another entry and
a stale entry is never read.  Entries are published whole: written beside their place under
a temporary name and renamed into it (a reader sees the old state or the new one, never a
part), and a crashed writer leaves at most a temporary file, removed by the next writer.
Building is serialised per key by an ``fcntl`` lock: a second process that misses while the
first is building waits for it and then reads its entry instead of building it again; the
lock dies with its process, so a killed writer never blocks anyone.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from harness.core import interrupts

log = logging.getLogger(__name__)

#: bump when the layout of every entry changes (it is part of every key)
STORE_FORMAT = 1
_TEMP_PREFIX = ".tmp-"


def key_digest(parts: dict) -> str:
    """sha256 of the key's canonical JSON (sorted keys, no whitespace)."""
    text = json.dumps({"store_format": STORE_FORMAT, **parts}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


#: the source tree the product runs from (``harness/`` and ``ingestion/`` lie here)
SOURCE_ROOT = Path(__file__).resolve().parents[2]


def source_files(*patterns: str) -> list[Path]:
    """Files under :data:`SOURCE_ROOT` matching the glob patterns (``ingestion/**/*.py``)."""
    found = {p for pattern in patterns for p in SOURCE_ROOT.glob(pattern) if p.is_file()}
    return sorted(found)


def source_revision(paths, root: Path = SOURCE_ROOT) -> str:
    """sha256 over the given source files (path relative to ``root`` and bytes, in sorted
    order): the code revision an entry was made by, exact even for uncommitted edits."""
    digest = hashlib.sha256()
    for path in sorted(Path(p) for p in paths):
        try:
            name = path.resolve().relative_to(root).as_posix()
        except ValueError:
            name = path.name
        digest.update(name.encode("utf-8") + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\n")
    return digest.hexdigest()


class KeyedStore:
    """Entries of one kind under ``root/kind``: ``<key>`` files or directories."""

    def __init__(self, root, kind: str):
        self.dir = Path(root) / kind
        self.dir.mkdir(parents=True, exist_ok=True)
        self._locks = self.dir / ".locks"
        self._locks.mkdir(exist_ok=True)

    def path(self, key: str) -> Path:
        return self.dir / key

    @contextmanager
    def building(self, key: str) -> Iterator[None]:
        """Hold the key's build lock (waits while another process holds it)."""
        with open(self._locks / f"{key}.lock", "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                self._sweep_temporaries(key)
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _sweep_temporaries(self, key: str) -> None:
        """Remove what a dead writer of ``key`` left (we hold its lock: nobody else writes)."""
        for stale in self.dir.glob(f"{_TEMP_PREFIX}{key}-*"):
            if stale.is_dir():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)

    def publish_bytes(self, key: str, data: bytes) -> None:
        """Write one file entry whole (temporary name, fsync, rename)."""
        fd, tmp = tempfile.mkstemp(prefix=f"{_TEMP_PREFIX}{key}-", dir=self.dir)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            with interrupts.deferred():
                os.replace(tmp, self.path(key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def publish_directory(self, key: str, fill: Callable[[Path], None]) -> None:
        """Write one directory entry whole: ``fill(tmp_dir)`` then rename into place."""
        tmp = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{key}-", dir=self.dir))
        try:
            fill(tmp)
            target = self.path(key)
            with interrupts.deferred():
                if target.exists():  # an unreadable entry being replaced
                    shutil.rmtree(target)
                os.rename(tmp, target)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise

    def discard(self, key: str, why: str) -> None:
        """Drop an entry that cannot be read (it is rebuilt); says why in the log."""
        target = self.path(key)
        log.warning("cache entry %s is unreadable (%s); rebuilding it", target, why)
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)


def get_or_build(store: KeyedStore, key: str, read: Callable[[Path], object],
                 build: Callable[[], object], write: Callable[[object], None], *,
                 on_discard: Callable[[str], None] | None = None):
    """``(value, "hit" | "miss")``: the stored entry, or one built and published under the
    key's lock.  ``read(path)`` returns None for an absent entry and raises ``ValueError``
    for an unreadable one (discarded and rebuilt; ``on_discard`` is told why)."""

    try:
        value = read(store.path(key))
    except ValueError:
        value = None  # looked at again under the lock, where it may be discarded
    if value is not None:
        return value, "hit"
    with store.building(key):
        try:
            value = read(store.path(key))  # built by another process while we waited
        except ValueError as exc:
            store.discard(key, str(exc))
            if on_discard is not None:
                on_discard(str(exc))
            value = None
        if value is not None:
            return value, "hit"
        value = build()
        write(value)
        return value, "miss"
