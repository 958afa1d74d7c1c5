"""A model derived from packaged weights, built once per machine.

The distilled static model (``minilm-static-256``) takes minutes to build on two cores, so
it lives in one per-user folder (``harness.core.settings.models_dir``: ``$HARNESS_MODELS``,
else ``~/.cache/retrieval-eval/models``) under a name keyed by everything it is built from,
not in each run's cache folder.  :func:`build_once` is safe when two processes build the same
model at once: an exclusive lock file beside the target serialises them, the second finds
the model complete when it gets the lock, and a build is written into a temporary sibling
and renamed into place only when complete (an interrupted build leaves nothing).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

#: the file whose presence marks a complete model directory
COMPLETE = "model.safetensors"


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if missing) for the block."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def is_complete(target: Path) -> bool:
    return (Path(target) / COMPLETE).is_file()


def build_once(target: Path, build: Callable[[Path], None], what: str) -> tuple[Path, bool]:
    """``(target, built)``: ``target`` complete, built by ``build(tmp_dir)`` unless it already
    was (``built`` False).  ``what`` names the model in the one line printed before a build."""
    target = Path(target)
    if is_complete(target):
        return target, False
    with exclusive(target.with_name(f".{target.name}.lock")):
        if is_complete(target):  # another process built it while this one waited
            return target, False
        print(f"building {what} once for this machine (a few minutes on two cores; kept in "
              f"{target.parent})", file=sys.stderr, flush=True)
        tmp = target.with_name(f".{target.name}.tmp-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            build(tmp)
            if not is_complete(tmp):
                raise RuntimeError(f"building {what} wrote no {COMPLETE} into {tmp}")
            if target.exists():  # an incomplete leftover (no lock held it): replace it
                shutil.rmtree(target)
            os.replace(tmp, target)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return target, True
