"""Ctrl-C (SIGINT) for the commands: noticed wherever it lands, deferred where it must wait.

:func:`watching` installs one handler for the length of a command.  It raises
``KeyboardInterrupt`` as Python's own does, and records that the interrupt came, so whatever a
library makes of it (DuckDB turns it into ``RuntimeError('Query interrupted')``; a helper
may wrap it in its own error) is still recognised by the runner as an interrupt
(:func:`received`): exit 130 and one line, never a traceback.

:func:`deferred` holds the interrupt back for a block that must not be cut in two (a COMMIT,
the renames that put finished files in place): it is raised when the block ends, or, with
``reraise=False``, left for the caller to find with :func:`take_late` (the work finished; the
command stops after saying so).  Signals can only be handled in the main thread; elsewhere both
are no-ops.
"""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Any, Iterator

_state = {"received": False, "late": False}


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    _state["received"] = True
    raise KeyboardInterrupt


def received() -> bool:
    """Whether SIGINT arrived since the current :func:`watching` began."""
    return _state["received"]


def take_late() -> bool:
    """Whether an interrupt was held back by a ``deferred(reraise=False)`` block whose work
    then finished; clears it."""
    late, _state["late"] = _state["late"], False
    return late


@contextmanager
def watching() -> Iterator[None]:
    """Record and raise SIGINT for the length of the block (a command's run)."""
    if not _main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _on_sigint)
    _state["received"] = _state["late"] = False
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _deliver(previous: Any) -> None:
    """What the handler in force before :func:`deferred` would have done with the signal."""
    if previous is signal.SIG_IGN:
        return
    if callable(previous):  # the default handler and the watch raise; an outer deferral holds
        previous(signal.SIGINT, None)
        return
    raise KeyboardInterrupt  # SIG_DFL (or None: not set from Python) would end the process


@contextmanager
def deferred(reraise: bool = True) -> Iterator[None]:
    """Hold SIGINT back until the block ends.

    On exit, a held interrupt is delivered to the handler that was in force before (raising
    ``KeyboardInterrupt`` for the default one) when ``reraise``; otherwise it is recorded
    for :func:`take_late` and the block's work stands.  Nested blocks hand a held interrupt
    to the enclosing one.
    """
    if not _main_thread():
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        _state["received"] = True
        held.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        if reraise:
            _deliver(previous)
        else:
            _state["late"] = True
