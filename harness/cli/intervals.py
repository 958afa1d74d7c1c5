"""``python -m harness intervals RESULTS_DIR [--control DIR]``: intervals (and paired tests)
written into the results directory as claim files."""

from __future__ import annotations

from pathlib import Path

HELP = ("write intervals.json (and comparisons.json against --control) into a results "
        "directory and print them")


def add_arguments(p) -> None:
    p.add_argument("results", help="results directory (metrics.json + per_query.jsonl)")
    p.add_argument("--control", default=None,
                   help="control results directory: also test this run against it (comparisons.json)")
    p.add_argument("--seed", type=int, default=0, help="seed of every random stream (default 0)")
    p.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples (default 10000)")
    p.add_argument("--permutations", type=int, default=10000,
                   help="Monte Carlo sign flips when more than 16 queries differ (default 10000)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--method", choices=("bca", "percentile"), default="bca",
                   help="bootstrap interval for non-binary measures (default bca)")
    p.add_argument("--measures", nargs="+", default=None, help="measures (default: all recorded)")


def run(args) -> int:
    from harness.results import PER_QUERY, load_metrics, load_per_query
    from harness.stats.documents import COMPARISONS_JSON, INTERVALS_JSON, write_document
    from harness.stats.intervals import row_intervals
    from harness.stats.markdown import comparisons_table, intervals_table

    results = Path(args.results)
    metrics = load_metrics(results)
    doc = row_intervals(metrics, load_per_query(results), seed=args.seed, resamples=args.resamples,
                        confidence=args.confidence, method=args.method, measures=args.measures,
                        source=str(results / PER_QUERY))
    comparisons = None
    if args.control:
        from harness.stats.randomization import compare_runs

        comparisons = compare_runs(args.control, [results], args.measures, seed=args.seed,
                                   permutations=args.permutations, alpha=args.alpha,
                                   confidence=args.confidence, resamples=args.resamples,
                                   interval_method=args.method)
    # both documents are computed before either is written: an interrupt leaves the old files
    write_document(results / INTERVALS_JSON, doc)
    if comparisons is not None:
        write_document(results / COMPARISONS_JSON, comparisons)
    print(f"# {metrics['control_name']}: intervals\n")
    print(intervals_table(doc, comparisons), end="")
    if comparisons is not None:
        print(f"\n# {metrics['control_name']} against {comparisons['control']['name']}\n")
        print(comparisons_table(comparisons), end="")
    print(f"\nwrote {results / INTERVALS_JSON}"
          + (f" and {results / COMPARISONS_JSON}" if comparisons is not None else ""))
    return 0
