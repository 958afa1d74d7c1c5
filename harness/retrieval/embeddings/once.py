"""Build a directory once per machine, safely under concurrent processes.

:func:`build_once` takes an exclusive lock beside the target (``fcntl.flock``, released by
the kernel when a process dies), looks again once it holds the lock (another process may
have finished the build while this one waited), builds into a temporary sibling and renames
it into place only when complete (:func:`harness.core.atomic.replace_directory`).  A crash
or Ctrl-C leaves no half-built target, and two processes asking for the same target build
it once.
"""

from __future__ import annotations

import fcntl
from pathlib import Path
from typing import Callable

from harness.core.atomic import replace_directory


def build_once(target: Path, complete: Callable[[Path], bool],
               build: Callable[[Path], None]) -> bool:
    """Make ``target`` exist, building it with ``build(tmp_dir)`` unless ``complete(target)``.

    Returns True when this call built it, False when it was already there (or another
    process built it while this one waited for the lock).
    """
    target = Path(target)
    if complete(target):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    lock_path = target.with_name(f".{target.name}.lock")
    with open(lock_path, "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            if complete(target):
                return False

            def build_whole(tmp: Path) -> None:
                build(tmp)
                if not complete(tmp):
                    raise RuntimeError(f"building {target.name} left an incomplete directory")

            # (an existing target is an incomplete leftover of an older layout: replaced)
            replace_directory(target, build_whole)
            return True
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
