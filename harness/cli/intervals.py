"""``python -m harness intervals RESULTS_DIR... [--control DIR]``: intervals (and paired
tests) written into each results directory as claim files.

With ``--control``, every directory given is an arm of one Holm family: each arm directory
receives the same ``comparisons.json`` (all arms against the control, ``family_size`` and
the arm names recorded), and the control receives its own ``intervals.json`` (it need not
be given again as an arm).  Comparing arms one command at a time makes families of one, and
the document says so.
"""

from __future__ import annotations

import logging
from pathlib import Path

from harness.core.arglists import CommaList

log = logging.getLogger(__name__)

HELP = ("write intervals.json into each results directory (and, with --control, one "
        "comparisons.json whose Holm family is every directory given) and print them")


def add_arguments(p) -> None:  # defaults: harness.evaluation.family.StatsOptions (tested)
    p.add_argument("results", nargs="+",
                   help="results directories (metrics.json + per_query.jsonl); with --control, "
                        "the arms of one Holm family")
    p.add_argument("--control", default=None,
                   help="control results directory: also test every arm against it, Holm-corrected "
                        "across the arms given (comparisons.json in each arm directory)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random stream (default 0)")
    p.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples (default 10000)")
    p.add_argument("--permutations", type=int, default=10000,
                   help="Monte Carlo sign flips when more than 16 queries differ (default 10000)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--method", choices=("bca", "percentile"), default="bca",
                   help="bootstrap interval for non-binary measures (default bca)")
    p.add_argument("--measures", nargs="+", action=CommaList, default=None,
                   help="measures, space- or comma-separated (default: all recorded)")


def _distinct(paths: list[Path]) -> list[Path]:
    seen = {}
    for path in paths:
        key = path.resolve()
        if key in seen:
            raise ValueError(f"{path}: results directory given twice (also as {seen[key]})")
        seen[key] = path
    return paths


def run(args) -> int:
    from harness.claims import ComparisonsClaim, IntervalsClaim
    from harness.evaluation.family import (StatsOptions, comparisons_document,
                                           intervals_document, recorded_from_dir, write_family)
    from harness.stats.markdown import comparisons_table, intervals_table

    dirs = _distinct([Path(r) for r in args.results])
    if args.control and Path(args.control).resolve() in {d.resolve() for d in dirs}:
        raise ValueError(f"{args.control}: the control is also listed as an arm")
    options = StatsOptions(seed=args.seed, resamples=args.resamples,
                           permutations=args.permutations, confidence=args.confidence,
                           alpha=args.alpha, method=args.method,
                           measures=tuple(args.measures) if args.measures else None)
    arms = [recorded_from_dir(d) for d in dirs]
    docs = [intervals_document(arm, options) for arm in arms]
    comparisons = control = control_doc = None
    if args.control:
        control = recorded_from_dir(args.control)
        control_doc = intervals_document(control, options)
        comparisons = comparisons_document(control, arms, options)
    # every document is computed before any is written, and every target checked (the
    # control's intervals.json too): a refusal or an interrupt leaves the old files
    if control is not None:
        from harness.core.outputs import check_file, is_document

        check_file(Path(args.control) / IntervalsClaim.RESULTS_FILE,
                   recognise=is_document(IntervalsClaim.KIND), what="intervals document",
                   flag="--control")
    notes = write_family(dirs, docs, comparisons)
    if control is not None:
        write_family([Path(args.control)], [control_doc], None)
        print(f"# {control.name} (the control): intervals\n")
        print(intervals_table(control_doc, None), end="")
        print()
    for arm, doc in zip(arms, docs):
        name = arm.name
        print(f"# {name}: intervals\n")
        own = None
        if comparisons is not None:  # this arm's rows only: the table marks one arm
            own = {**comparisons, "rows": [r for r in comparisons["rows"] if r["arm"] == name]}
        print(intervals_table(doc, own), end="")
        print()
    if comparisons is not None:
        names = ", ".join(a["name"] for a in comparisons["arms"])
        print(f"# against {comparisons['control']['name']}: Holm family of "
              f"{comparisons['family_size']} ({names})\n")
        print(comparisons_table(comparisons), end="")
        print(f"\n{comparisons['family_note']}")
    for note in notes:
        log.warning("%s", note)
    written = [str(r / IntervalsClaim.RESULTS_FILE) for r in dirs]
    if control is not None:
        written.append(str(Path(args.control) / IntervalsClaim.RESULTS_FILE))
    if comparisons is not None:
        written += [str(r / ComparisonsClaim.RESULTS_FILE) for r in dirs]
    print("\nwrote " + ", ".join(written))
    return 0
