"""``python -m harness intervals RESULTS_DIR... [--control DIR]``: intervals (and paired
tests) written into each results directory as claim files.

With ``--control``, every directory given is an arm of one Holm family: each arm directory
receives the same ``comparisons.json`` (all arms against the control, ``family_size`` and
the arm names recorded).  Comparing arms one command at a time makes families of one, and
the document says so.
"""

from __future__ import annotations

import logging
from pathlib import Path

log = logging.getLogger(__name__)

HELP = ("write intervals.json into each results directory (and, with --control, one "
        "comparisons.json whose Holm family is every directory given) and print them")


def add_arguments(p) -> None:
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
    p.add_argument("--measures", nargs="+", default=None, help="measures (default: all recorded)")


def _distinct(paths: list[Path]) -> list[Path]:
    seen = {}
    for path in paths:
        key = path.resolve()
        if key in seen:
            raise ValueError(f"{path}: results directory given twice (also as {seen[key]})")
        seen[key] = path
    return paths


def _replaced_family(path: Path, comparisons: dict) -> str | None:
    """A note when ``path`` holds a comparisons document against the same control whose
    family differs from the new one (it is replaced; the warehouse keeps what it stored)."""
    import json

    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(old, dict) or not isinstance(old.get("control"), dict) \
            or old["control"].get("run_id") != comparisons["control"]["run_id"]:
        return None
    before = sorted(a.get("name") for a in old.get("arms") or [] if isinstance(a, dict))
    after = sorted(a["name"] for a in comparisons["arms"])
    if before == after:
        return None
    return f"{path}: replaces a family of {len(before)} ({before}) with {len(after)} ({after})"


def run(args) -> int:
    from harness.claims.metrics import PER_QUERY
    from harness.evaluation.results import load_metrics, load_per_query
    from harness.claims import ComparisonsClaim, IntervalsClaim, write_claim
    from harness.stats.intervals import row_intervals
    from harness.stats.markdown import comparisons_table, intervals_table

    dirs = _distinct([Path(r) for r in args.results])
    if args.control and Path(args.control).resolve() in {d.resolve() for d in dirs}:
        raise ValueError(f"{args.control}: the control is also listed as an arm")
    runs = []
    for results in dirs:
        metrics = load_metrics(results)
        doc = row_intervals(metrics, load_per_query(results), seed=args.seed,
                            resamples=args.resamples, confidence=args.confidence,
                            method=args.method, measures=args.measures,
                            source=str(results / PER_QUERY))
        runs.append((results, metrics, doc))
    comparisons = None
    if args.control:
        from harness.evaluation.runs import compare_runs

        comparisons = compare_runs(args.control, dirs, args.measures, seed=args.seed,
                                   permutations=args.permutations, alpha=args.alpha,
                                   confidence=args.confidence, resamples=args.resamples,
                                   interval_method=args.method)
    # every target is checked and every document computed before any is written: a refusal
    # or an interrupt leaves the old files
    from harness.core.outputs import check_file, is_document

    for results, _, _ in runs:
        check_file(results / IntervalsClaim.RESULTS_FILE, recognise=is_document(IntervalsClaim.KIND),
                   what="intervals document", flag="results directory")
        if comparisons is not None:
            check_file(results / ComparisonsClaim.RESULTS_FILE,
                       recognise=is_document(ComparisonsClaim.KIND),
                       what="comparisons document", flag="results directory")
    notes = []
    for results, _, doc in runs:
        write_claim(results / IntervalsClaim.RESULTS_FILE, doc)
        if comparisons is not None:
            note = _replaced_family(results / ComparisonsClaim.RESULTS_FILE, comparisons)
            if note:
                notes.append(note)
            write_claim(results / ComparisonsClaim.RESULTS_FILE, comparisons)
    for results, metrics, doc in runs:
        name = metrics["control_name"]
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
    written = [str(r / IntervalsClaim.RESULTS_FILE) for r, _, _ in runs]
    if comparisons is not None:
        written += [str(r / ComparisonsClaim.RESULTS_FILE) for r, _, _ in runs]
    print("\nwrote " + ", ".join(written))
    return 0
