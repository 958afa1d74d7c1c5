"""``python -m harness COMMAND``: one module per command, registered here by module path.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int`` (the exit code).  Modules are imported only when their command runs,
so ``python -m harness score`` never loads a model or a database driver.
"""

from __future__ import annotations

import argparse
import importlib

from harness.core.commands import command_parser, run_command

COMMANDS: dict[str, str] = {
    "score": "harness.cli.score",
    "compare": "harness.cli.compare",
    "bench": "harness.cli.bench",
    "sweep": "harness.cli.sweep",
    "power": "harness.cli.power",
    "gate": "harness.cli.gate",
    "agreement": "harness.cli.agreement",
    "intervals": "harness.cli.intervals",
    "export-run": "harness.cli.export_run",
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


def add_licence_arguments(parser, *, when: str = "", tier_note: str = "") -> None:
    """``--licence`` and ``--tier`` for a corpus named on the command line: the tier follows
    from the licence (``harness.core.tiers.declared_tier``) and ``--tier`` may only make it
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


def main(argv=None) -> int:
    return run_command(build_parser(_available()).parse_args(argv))
