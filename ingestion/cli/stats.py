"""``python -m ingestion stats SOURCE``: what a corpus holds."""

from __future__ import annotations

HELP = "files, turns/documents, queries per class, words, domains, splits of KIND:PATH"


def add_arguments(p) -> None:
    p.add_argument("source", help="qmsum:PATH, beir:PATH, trec:PATH or synthetic:PATH")
    p.add_argument("--name", default=None, help="corpus name (default: derived from PATH)")
    p.add_argument("--json", action="store_true", help="canonical JSON")


def run(args) -> int:
    from harness.core.canonical import canonical_json
    from ingestion import load_corpus
    from ingestion.stats import corpus_stats

    stats = corpus_stats(load_corpus(args.source, name=args.name))
    if args.json:
        print(canonical_json(stats), end="")
        return 0
    for key in ("corpus", "kind", "licence", "tier", "files", "turns", "documents", "words",
                "queries", "queries_per_class", "domains", "splits", "timing", "sha256"):
        if key in stats:
            print(f"{key:18} {stats[key]}")
    return 0
