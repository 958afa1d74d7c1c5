"""``python -m harness compare CONTROL CANDIDATE``: the per-corpus, per-class delta table."""

from __future__ import annotations

from harness.core.arglists import CommaList
from harness.core.measures import COMPARE_MEASURES
from harness.evaluation.rows import compare_table
from harness.evaluation.results import load_metrics

HELP = "print the per-corpus, per-class delta table of a candidate against a control"


def add_arguments(p) -> None:
    p.add_argument("control", help="CONTROL/metrics.json (or its directory)")
    p.add_argument("candidate", help="CANDIDATE/metrics.json (or its directory)")
    p.add_argument("--measures", nargs="+", action=CommaList, default=list(COMPARE_MEASURES),
                   help="measures to compare, space- or comma-separated (default: "
                        f"{' '.join(COMPARE_MEASURES)})")


def run(args) -> int:
    control = load_metrics(args.control)
    candidate = load_metrics(args.candidate)
    print(f"control: {control['control_name']}   candidate: {candidate['control_name']}\n")
    print(compare_table(control, candidate, args.measures), end="")
    return 0
