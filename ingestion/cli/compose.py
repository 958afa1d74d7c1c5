"""``python -m ingestion compose SOURCE``: near-duplicate structure under file-level BM25."""

from __future__ import annotations

HELP = "per domain: R@1, median gold rank, other files scoring >= 0.9 x the gold file (BM25)"


def add_arguments(p) -> None:
    p.add_argument("source", help="qmsum:PATH, beir:PATH, trec:PATH or synthetic:PATH")
    p.add_argument("--name", default=None, help="corpus name (default: derived from PATH)")
    p.add_argument("--threshold", type=float, default=0.9,
                   help="share of the gold file's score that makes another file a near-duplicate")
    p.add_argument("--json", action="store_true", help="canonical JSON")


def _fmt(value, digits=3):
    return "-" if value is None else f"{value:.{digits}f}"


def run(args) -> int:
    from harness.core.canonical import canonical_json
    from ingestion import load_corpus
    from ingestion.composition import composition

    if not 0 < args.threshold <= 1:
        raise ValueError(f"--threshold must be in (0, 1], got {args.threshold}")
    report = composition(load_corpus(args.source, name=args.name), threshold=args.threshold)
    if args.json:
        print(canonical_json(report), end="")
        return 0
    from harness.core.markdown import md_escape

    print(f"{md_escape(report['corpus'])} (tier {report['tier']}): {report['scoring']}")
    print("| group | files | queries | R@1 | median gold rank | near-duplicates (mean) | rate |")
    print("|---|---|---|---|---|---|---|")
    for name, g in report["groups"].items():
        print(f"| {md_escape(name)} | {g['files']} | {g['queries']} | {_fmt(g['r_at_1'])} | "
              f"{_fmt(g['median_gold_rank'], 1)} | {_fmt(g['mean_near_duplicates'], 1)} | "
              f"{_fmt(g['near_duplicate_rate'])} |")
    return 0
