"""``python -m ingestion synth``: write the deterministic synthetic meeting corpus."""

from __future__ import annotations

HELP = "generate the synthetic meeting corpus (no model; byte-identical for one seed)"


def add_arguments(p) -> None:
    from ingestion.synthetic import DEFAULT_MEETINGS, DEFAULT_SEED

    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    p.add_argument("--meetings", type=int, default=DEFAULT_MEETINGS,
                   help=f"meetings to generate (default {DEFAULT_MEETINGS})")
    p.add_argument("--out", required=True, help="output directory (new, empty, or an earlier corpus)")
    p.add_argument("--budget", type=int, default=None,
                   help="keep only N meetings, selected by gold closure (dropped queries counted)")


def run(args) -> int:
    import json

    from ingestion.synthetic import generate, spec

    out = generate(args.seed, args.meetings, args.out, budget=args.budget)
    manifest = json.loads((out / spec.MANIFEST).read_text(encoding="utf-8"))
    counts, report = manifest["counts"], manifest["report"]
    print(f"wrote {out}: {counts['files']} meetings, {counts['turns']} turns, "
          f"{counts['queries']} queries {counts['queries_per_class']} (seed {args.seed})")
    if manifest.get("selection"):
        sel = manifest["selection"]
        print(f"budget {sel['budget']}: kept {sel['queries_kept']} queries, dropped "
              f"{sel['queries_dropped']} {sel['queries_dropped_by_class']}")
    print(f"own BM25 R@1 {report['bm25_r_at_1']:.3f} over {report['rank_queries']} rank queries; "
          f"near-duplicate rate {report['near_duplicate_rate']:.3f} "
          f"(mean {report['mean_near_duplicates']:.2f} other files >= 90% of the gold score)")
    return 0
