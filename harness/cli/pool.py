"""``python -m harness pool``: the (query, document) pairs to judge, from runs' top k."""

from __future__ import annotations

from pathlib import Path

from harness.core.canonical import sha256_file
from harness.core.formats import read_qrels, read_run_columns

HELP = "pool runs' top k into the (query, document) pairs to judge (TREC pooling)"


def add_arguments(p) -> None:
    p.add_argument("runs", nargs="+", metavar="RUN", help="TREC or .jsonl runs to pool")
    p.add_argument("--depth", type=int, default=10, help="pool each run's top DEPTH (default 10)")
    p.add_argument("--name", action="append", default=None, metavar="NAME",
                   help="a name per run, in order (default: each file's stem)")
    p.add_argument("--judged", default=None, metavar="QRELS",
                   help="judgements already made (qrels or a qrels version): their pairs are "
                        "skipped")
    p.add_argument("--sample-queries", type=int, default=0, metavar="N",
                   help="draw N of the pool's queries at random for hand labelling (their pairs "
                        "lead the queue; the estimate needs such a sample)")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample-queries (default 0)")
    p.add_argument("--preserve-order", action="store_true",
                   help="pool each list in file order instead of by score")
    p.add_argument("--out", required=True, help="pool file to write (JSONL)")


def judged_file(path: str) -> tuple[dict[str, dict[str, int]], str]:
    """``(judgements, sha256)`` of a qrels file or a qrels version (its digest checked)."""
    if Path(path).suffix.lower() == ".json":
        from harness.judgments.versions import read_version

        version = read_version(path)
        return version.judgements, version.digest
    return dict(read_qrels(path).judgements), sha256_file(path)


def run(args) -> int:
    from harness.core.outputs import first_line_has, write_file
    from harness.judgments.pool import build_pool

    names = args.name or [Path(r).stem for r in args.runs]
    if len(names) != len(args.runs):
        raise ValueError(f"{len(names)} --name for {len(args.runs)} runs: give one per run, in "
                         "order, or none")
    judged, source = None, None
    if args.judged:
        judged, digest = judged_file(args.judged)
        source = {"path": Path(args.judged).name, "sha256": digest}
    runs = [(name, sha256_file(path), read_run_columns(path))
            for name, path in zip(names, args.runs)]
    pool = build_pool(runs, args.depth, judged=judged, judged_source=source,
                      sample_queries=args.sample_queries, seed=args.seed,
                      preserve_order=args.preserve_order)
    write_file(args.out, pool.text(), recognise=first_line_has(b'"kind":"pool"'), what="pool file",
               inputs=[*(("RUN", r) for r in args.runs), ("--judged", args.judged)])
    print(f"{len(pool.pairs)} pairs to judge over {len(pool.queries)} queries, from "
          f"{len(runs)} run(s) at depth {args.depth}")
    if args.judged:
        skipped = pool.judged_skipped
        print(f"{skipped} pair{'' if skipped == 1 else 's'} already judged in {args.judged} "
              f"{'was' if skipped == 1 else 'were'} skipped")
    if pool.sample:
        sampled = sum(p.sampled for p in pool.pairs)
        print(f"hand-labelling sample: {len(pool.sample['queries'])} queries ({sampled} pairs, "
              f"seed {args.seed}) lead the queue")
    print(f"wrote {args.out}")
    print("label the pairs (a labels file, docs/judgments.md), then make a qrels version: "
          f"harness qrels version --pool {args.out} --labels LABELS.jsonl --out DIR")
    return 0
