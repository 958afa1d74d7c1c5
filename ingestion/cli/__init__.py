"""``python -m ingestion COMMAND``: one module per command, registered here by module path.

Each command module defines ``HELP`` (one line), ``add_arguments(parser)`` and
``run(args) -> int`` (the exit code); heavy imports happen inside ``run``.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

COMMANDS: dict[str, str] = {
    "sources": "ingestion.cli.sources",
    "fetch": "ingestion.cli.fetch",
    "stats": "ingestion.cli.stats",
    "compose": "ingestion.cli.compose",
    "synth": "ingestion.cli.synth",
    "validate": "ingestion.cli.validate",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ingestion",
        description="Corpora with traced licences: registry, fetch/verify, stats, composition, "
                    "the synthetic meeting corpus.")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, path in COMMANDS.items():
        module = importlib.import_module(path)
        p = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
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
        from harness.cli import pipe_closed

        return pipe_closed()
    except KeyboardInterrupt:
        print("interrupted: nothing half-written was kept", file=sys.stderr)
        return 130
