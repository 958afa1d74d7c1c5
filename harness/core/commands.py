"""The command runner every CLI shares (``python -m harness``, ``ingestion``, ``warehouse``).

A command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int``.  :func:`run_command` gives every command the same exit codes: bad
input is 2 with its located message and no traceback, Ctrl-C is 130 with one line saying
nothing half-written was kept, a closed output pipe (``... | head``) is not an error.
"""

from __future__ import annotations

import argparse
import atexit
import logging
import os
import sys
import threading
from types import ModuleType
from typing import Callable, Mapping, NoReturn

from harness.core import interrupts

#: exit codes every command shares
BAD_INPUT = 2
INTERRUPTED = 130


def command_parser(prog: str, description: str,
                   modules: Mapping[str, ModuleType]) -> argparse.ArgumentParser:
    """A parser with one sub-command per module (``HELP``, ``add_arguments``, ``run``).

    The modules are imported by path (``importlib``), so they are typed as modules: what each
    defines is checked by the CLI tests, not statically."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="log what the libraries do too (their INFO lines; the product's "
                             "own DEBUG lines); by default only the product's messages and "
                             "warnings")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in modules.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def pipe_closed() -> int:
    """The reader of stdout went away (``... | head``): not an error.  Point stdout at
    /dev/null so the interpreter's final flush cannot raise again; exit 0."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


#: the product's own loggers (``--verbose`` shows their DEBUG lines too)
PRODUCT_LOGGERS = ("harness", "ingestion", "warehouse", "dashboard")


class _ReaderFormat(logging.Formatter):
    """A message as it is; a warning or error prefixed with its level (``warning: ...``)."""

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        return f"{record.levelname.lower()}: {text}" if record.levelno >= logging.WARNING else text


def configure_logging(verbose: bool) -> None:
    """Terminal output is for a reader: by default the product's own INFO lines (as plain
    messages) and every warning, none of the libraries' INFO lines; ``--verbose`` logs INFO
    from every library and the product's own DEBUG, naming each logger."""
    root = logging.getLogger()
    if root.handlers:  # configured already (a command run inside another, or a test)
        return
    handler = logging.StreamHandler()
    if verbose:
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.setLevel(logging.INFO)
    else:
        handler.setFormatter(_ReaderFormat("%(message)s"))
        root.setLevel(logging.WARNING)
    root.addHandler(handler)
    for name in PRODUCT_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed command: bad input is exit 2 with its message, Ctrl-C is 130 and says
    nothing half-written was kept (whatever the interrupt became on its way out:
    :mod:`harness.core.interrupts`), a closed output pipe is not an error."""
    configure_logging(args.verbose)
    with interrupts.watching():
        try:
            code = int(args._run(args) or 0)
            sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
            if interrupts.take_late():  # it came while finished work was being put in place
                print("interrupted: what is reported above was completed and kept; nothing "
                      "else was started", file=sys.stderr)
                return INTERRUPTED
            return code
        except BaseException as exc:
            if isinstance(exc, SystemExit):
                raise
            if interrupts.received() or isinstance(exc, KeyboardInterrupt):
                print("interrupted: nothing half-written was kept", file=sys.stderr)
                return INTERRUPTED
            if isinstance(exc, BrokenPipeError):
                return pipe_closed()
            if isinstance(exc, (ValueError, FileNotFoundError)):
                print(f"error: {exc}", file=sys.stderr)
                return BAD_INPUT
            raise


#: what the command this process runs leaves to the process's exit (:func:`leave_to_exit`);
#: None unless :func:`process_main` runs the process
_left: list[object] | None = None


def leave_to_exit(*objects: object) -> None:
    """Let the end of the process free ``objects`` (a whole run's lists, the rendered claim
    files) instead of the interpreter, one object at a time: that costs ``harness score``
    a twentieth of its time on a 160,000-line run and frees memory the exit returns anyway.
    Only a process run by :func:`process_main` keeps them; a command called in-process (a
    test, another command) keeps nothing."""
    if _left is not None:
        _left.extend(objects)


def process_main(main: Callable[[], int]) -> NoReturn:
    """Run ``main`` as the whole process and exit with its code.

    When the command left objects to the exit (:func:`leave_to_exit`), no other thread runs
    and no profiler or tracer watches (``python -m cProfile`` writes its report after the
    script returns), the process ends as the interpreter would, less the freeing: stdout and
    stderr flushed, every ``atexit`` handler run (logging's among them), then ``os._exit``.
    A flush that fails takes the interpreter's own exit, which reports it."""
    global _left
    _left = []
    code = main()
    if (_left and threading.active_count() == 1 and sys.getprofile() is None
            and sys.gettrace() is None):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BaseException:  # noqa: BLE001 - the interpreter's exit reports it
            sys.exit(code)
        atexit._run_exitfuncs()  # what the interpreter's exit would run first
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    sys.exit(code)
