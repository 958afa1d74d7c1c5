"""``python -m ingestion COMMAND``: one module per command, registered here by module path.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int`` (the exit code); heavy imports happen inside ``run``.
"""

from __future__ import annotations

import argparse
import importlib

from harness.core.commands import command_parser, run_command

COMMANDS: dict[str, str] = {
    "sources": "ingestion.cli.sources",
    "fetch": "ingestion.cli.fetch",
    "stats": "ingestion.cli.stats",
    "compose": "ingestion.cli.compose",
    "synth": "ingestion.cli.synth",
    "validate": "ingestion.cli.validate",
}


def build_parser() -> argparse.ArgumentParser:
    return command_parser(
        "python -m ingestion",
        "Corpora with traced licences: registry, fetch/verify, stats, composition, the "
        "synthetic meeting corpus.",
        {name: importlib.import_module(path) for name, path in COMMANDS.items()})


def main(argv=None) -> int:
    return run_command(build_parser().parse_args(argv))
