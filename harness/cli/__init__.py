"""``python -m harness COMMAND``: one module per command, registered here by module path.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int`` (the exit code).  Modules are imported only when their command runs,
so ``python -m harness score`` never loads a model or a database driver.
"""

from __future__ import annotations

import argparse
import importlib
import sys

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
    "submit": "harness.cli.submit",
    "embed": "harness.cli.embed",
    "pool": "harness.cli.pool",
    "label": "harness.cli.label",
    "qrels": "harness.cli.qrels",
}


def _available(only: str | None = None) -> dict[str, object]:
    """The command modules that import here (all, or just ``only``'s)."""
    found = {}
    for name, path in COMMANDS.items():
        if only is not None and name != only:
            continue
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


def corpus_name_of(args) -> tuple[str, bool]:
    """``(name, from_stem)``: ``--corpus-name``, else the ``--qrels`` file's stem, checked as
    the source registry compares names (:func:`harness.core.sources.check_corpus_name`):
    an invisible or look-alike name is refused, naming where it came from."""
    from pathlib import Path

    from harness.core.sources import check_corpus_name

    if args.corpus_name is not None:
        return check_corpus_name(args.corpus_name, "--corpus-name"), False
    name = Path(args.qrels).stem
    return check_corpus_name(name, f"corpus name (the stem of --qrels {args.qrels}; "
                                   "set one with --corpus-name)"), True


def build_parser(modules) -> argparse.ArgumentParser:
    return command_parser("python -m harness",
                          "Retrieval evaluation whose numbers are checkable claims.", modules)


def _named_command(argv: list[str]) -> str | None:
    """The command ``argv`` names when it names one (the first word that is not an option)."""
    words = [word for word in argv if not word.startswith("-")]
    return words[0] if words and words[0] in COMMANDS else None


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    return run_command(build_parser(_available(_named_command(argv))).parse_args(argv))
