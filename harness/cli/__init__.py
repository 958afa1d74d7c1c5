"""``python -m harness COMMAND``: one module per command, registered here by module path.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int`` (the exit code).  Modules are imported only when their command runs,
so ``python -m harness score`` never loads a model or a database driver.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

COMMANDS: dict[str, str] = {
    "score": "harness.cli.score",
    "compare": "harness.cli.compare",
    "bench": "harness.cli.bench",
    "power": "harness.cli.power",
    "gate": "harness.cli.gate",
    "agreement": "harness.cli.agreement",
    "intervals": "harness.cli.intervals",
    "calibrate": "harness.cli.calibrate",
    "certificate": "harness.cli.certificate",
    "drift": "harness.cli.drift",
    "ppi": "harness.cli.ppi",
    "migrate": "harness.cli.migrate",
    "answer": "harness.cli.answer",
    "demo": "harness.cli.demo",
}


def _available() -> dict[str, object]:
    found = {}
    for name, path in COMMANDS.items():
        try:
            found[name] = importlib.import_module(path)
        except ModuleNotFoundError as exc:
            if exc.name != path:
                raise
    return found


def command_parser(prog: str, description: str, modules) -> argparse.ArgumentParser:
    """A parser with one sub-command per module (``HELP``, ``add_arguments``, ``run``)."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, module in modules.items():
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def add_licence_arguments(parser, *, when: str = "", tier_note: str = "") -> None:
    """``--licence`` and ``--tier`` for a corpus named on the command line: the tier follows
    from the licence (``ingestion.registry.declared_tier``) and ``--tier`` may only make it
    more restrictive.  ``when`` prefixes the help (e.g. "with --qrels: ")."""
    parser.add_argument("--licence", default="unknown",
                        help=f"{when}licence of the corpus (SPDX id, e.g. MIT, CC-BY-4.0); the "
                             "tier follows from it: A only for a publishable licence (default "
                             "unknown: tier B)")
    parser.add_argument("--tier", choices=("A", "B", "C"), default=None,
                        help=f"{when}licence tier (default: derived from --licence); may only "
                             "make it more restrictive: A is refused unless --licence is "
                             f"publishable{tier_note}")


def build_parser(modules) -> argparse.ArgumentParser:
    return command_parser("python -m harness",
                          "Retrieval evaluation whose numbers are checkable claims.", modules)


def pipe_closed() -> int:
    """The reader of stdout went away (``... | head``): not an error.  Point stdout at
    /dev/null so the interpreter's final flush cannot raise again; exit 0."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 0


def run_command(args) -> int:
    """Run a parsed command: bad input is exit 2 with its message, Ctrl-C is 130 and says
    nothing half-written was kept, a closed output pipe is not an error."""
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # a closed pipe surfaces here, not at interpreter exit
        return code
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return pipe_closed()
    except KeyboardInterrupt:
        print("interrupted: nothing half-written was kept", file=sys.stderr)
        return 130


def main(argv=None) -> int:
    return run_command(build_parser(_available()).parse_args(argv))
