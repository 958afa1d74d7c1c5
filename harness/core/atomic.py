"""Files and directories replaced atomically: written beside their destination under a
fresh name (``.NAME.KIND-PID-TOKEN``) and renamed into place, so a reader finds the old
one or the new one, never half of either.

:func:`write_files` writes files; :func:`replace_directory` builds a directory and swaps
it in.  Every failure path, Ctrl-C included, removes what was written beside the
destination and leaves the old one as it was; the renames themselves hold Ctrl-C back
(:mod:`harness.core.interrupts`).  What a killed writer leaves beside a directory is tidied
by the next swap (:func:`recover_stale`).  Whether a destination may be replaced at all is
decided before, by :mod:`harness.core.outputs`.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path
from typing import Callable, Sequence

from harness.core import interrupts

log = logging.getLogger(__name__)


def temporary(path: Path, kind: str = "tmp") -> Path:
    """A fresh sibling name for ``path`` (``.NAME.KIND-PID-TOKEN``: the pid first, see
    :func:`recover_stale`)."""
    return path.with_name(f".{path.name}.{kind}-{os.getpid()}-{os.urandom(4).hex()}")


def _keep(path: Path) -> Path | None:
    """A second name for the file at ``path`` (a hard link, else a copy), so a failed swap
    can put it back; None when there is nothing there."""
    if not path.exists():
        return None
    backup = temporary(path, "old")
    try:
        os.link(path, backup)
    except OSError:
        shutil.copy2(path, backup)
    return backup


def write_files(targets: Sequence[tuple[Path, str | bytes]], *, reraise: bool = True) -> None:
    """Write each ``(path, data)`` beside its path, then rename them all into place with
    Ctrl-C held back, so they appear together.  Text is written as UTF-8, newlines as given.
    A failure at any point, Ctrl-C included, removes every temporary file and leaves the
    old files as they were (a rename that fails puts back the ones already renamed).  A
    Ctrl-C held back during the renames is raised once they are done, or with
    ``reraise=False`` left for the caller (:func:`harness.core.interrupts.take_late`)."""
    temps: list[tuple[Path, Path]] = []
    kept: list[tuple[Path, Path | None]] = []
    try:
        for path, data in targets:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = temporary(path)
            temps.append((tmp, path))
            if isinstance(data, bytes):
                with tmp.open("xb") as handle:
                    handle.write(data)
            else:
                with tmp.open("x", encoding="utf-8", newline="") as handle:
                    handle.write(data)
        with interrupts.deferred(reraise=reraise):
            try:
                for tmp, path in temps:
                    kept.append((path, _keep(path)))
                    os.replace(tmp, path)
            except BaseException:
                for path, backup in reversed(kept):
                    try:
                        if backup is not None:
                            os.replace(backup, path)
                        else:  # it did not exist before
                            path.unlink(missing_ok=True)
                    except OSError:  # put back what can be; the first error is the story
                        continue
                raise
    except BaseException:
        for tmp, _ in temps:
            tmp.unlink(missing_ok=True)
        raise
    finally:
        for _, backup in kept:
            if backup is not None:
                backup.unlink(missing_ok=True)


def pid_alive(pid: int) -> bool:
    """Is process ``pid`` running (this process always is)?"""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def tidy_dead(directory: str | os.PathLike[str], prefix: str) -> list[Path]:
    """Remove the ``PREFIX<pid>-...`` files and directories in ``directory`` whose writer
    has died (a name without a pid counts as dead); a live writer's are kept.  Returns
    what was removed."""
    removed = []
    for path in sorted(Path(directory).iterdir()):
        if not path.name.startswith(prefix):
            continue
        pid = path.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and pid_alive(int(pid)):
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
        removed.append(path)
    return removed


def _leftovers(out: Path, kind: str) -> list[tuple[Path, int]]:
    """``.NAME.{kind}-PID-...`` directories beside ``out``, with their writer's pid."""
    prefix = f".{out.name}.{kind}-"
    found = []
    for path in sorted(out.parent.iterdir()):
        if path.name.startswith(prefix) and path.is_dir():
            pid = path.name[len(prefix):].split("-", 1)[0]
            if pid.isdigit():
                found.append((path, int(pid)))
    return found


def recover_stale(out_dir: str | os.PathLike[str]) -> None:
    """Tidy what a killed writer left beside ``out_dir``.

    A staging directory of a dead process is removed.  An ``old`` directory of a dead
    process is the previous directory, moved aside just before the new one was renamed
    in: if the new one never arrived it is put back, otherwise it is removed.  Directories
    of live writers are left alone.
    """
    out = Path(out_dir)
    if not out.parent.is_dir():
        return
    for path, pid in _leftovers(out, "staging"):
        if not pid_alive(pid):
            log.info("removing stale staging directory %s", path)
            shutil.rmtree(path, ignore_errors=True)
    for path, pid in _leftovers(out, "old"):
        if pid_alive(pid):
            continue
        if not out.exists():
            log.warning("restoring %s from %s (its writer died mid-swap)", out, path)
            os.replace(path, out)
        else:
            shutil.rmtree(path, ignore_errors=True)


def replace_directory(out_dir: str | os.PathLike[str], build: Callable[[Path], None], *,
                      before_swap: Callable[[Path], object] | None = None) -> Path:
    """Build a directory with ``build(staging)`` beside ``out_dir`` and rename it into place.

    ``staging`` is a new, empty directory.  An existing ``out_dir`` is moved aside (after
    ``before_swap(out_dir)``, which may refuse by raising) just before the new one is
    renamed in, then removed.  An exception (or Ctrl-C) at any point leaves the previous
    directory as it was and removes the staging one; leftovers of a killed writer are
    tidied first (:func:`recover_stale`).  Returns ``out_dir`` as a path."""
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    recover_stale(out)
    staging = temporary(out, "staging")
    staging.mkdir()
    try:
        build(staging)
        old = None
        with interrupts.deferred():  # the swap is never cut in two
            if out.exists():
                if before_swap is not None:
                    before_swap(out)  # as it is now, just before it goes
                old = temporary(out, "old")
                os.replace(out, old)
            try:
                os.replace(staging, out)
            except BaseException:
                if old is not None and not out.exists():
                    os.replace(old, out)
                raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out
