"""``python -m harness demo``: score the bundled example run and print its table."""

from __future__ import annotations

import tempfile
from pathlib import Path

HELP = "score the bundled toy example (examples/toy) and print its table"

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "toy"


def add_arguments(p) -> None:
    p.add_argument("--out", default=None, help="results directory (default: a temporary one)")


def run(args) -> int:
    from harness.cli import main

    out = args.out or str(Path(tempfile.mkdtemp(prefix="harness-demo-")) / "toy")
    return main(["score", "--qrels", str(EXAMPLE / "qrels.txt"), "--run", str(EXAMPLE / "run.txt"),
                 "--query-classes", str(EXAMPLE / "classes.tsv"), "--corpus-name", "toy",
                 "--tier", "A", "--licence", "CC0-1.0", "--out", out, "--no-warehouse"])
