"""``python -m harness export-run RESULTS_DIR --format trec|jsonl --out FILE``: an arm's
rankings (or, with ``--qrels``, the judgements it was scored with) as a file other tools
read, with a provenance sidecar ``FILE.provenance.json``
(:mod:`harness.evaluation.run_export`)."""

from __future__ import annotations

HELP = ("write a results directory's rankings (or, with --qrels, its judgements) as a TREC or "
        "JSONL file, with a provenance sidecar")


def add_arguments(p) -> None:
    p.add_argument("results", help="results directory (metrics.json, rankings.jsonl, qrels.jsonl)")
    p.add_argument("--format", choices=("trec", "jsonl"), default="trec",
                   help="TREC run / qrels, or JSONL (default trec)")
    p.add_argument("--out", required=True, help="file to write (refused if it exists, unless --force)")
    p.add_argument("--qrels", action="store_true",
                   help="export the judgements the run was scored with (qrels.jsonl) instead")
    p.add_argument("--corpus", default=None, help="only this corpus (default: every corpus)")
    p.add_argument("--tag", default=None, help="TREC run tag (default: the run's control name)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out and sidecar (never a file of the results "
                        "directory: an input is refused whatever --force says)")


def _refuse_inputs(args) -> None:
    """Refuse an ``--out`` (or its sidecar) that is a file of the results directory read or
    pinned (metrics.json, rankings.jsonl, qrels.jsonl, per_query.jsonl, every file its marker
    lists), whatever ``--force`` says: the export would destroy its own input."""
    from pathlib import Path

    from harness.core.outputs import MARKER, marker_files, refuse_inputs
    from harness.evaluation.run_export import sidecar_path

    results = Path(args.results)
    if Path(args.out).is_dir() and not Path(args.out).is_symlink():
        return  # refused as a directory by write_export
    owned = {"metrics.json", "rankings.jsonl", "qrels.jsonl", "per_query.jsonl", MARKER}
    inputs = [(f"the results directory's {name}:", results / name)
              for name in sorted(owned | (marker_files(results) or set()))]
    refuse_inputs(args.out, inputs, "--out")
    refuse_inputs(sidecar_path(Path(args.out)), inputs, "--out's provenance sidecar")


def run(args) -> int:
    import logging

    from harness.evaluation.run_export import write_export

    _refuse_inputs(args)
    side, provenance = write_export(args.results, args.out, "qrels" if args.qrels else "rankings",
                                    args.format, corpus=args.corpus, tag=args.tag,
                                    force=args.force)
    log = logging.getLogger(__name__)
    if provenance["tier"] != "A":
        log.warning("%s: tier %s data: internal only, not publishable", args.out, provenance["tier"])
    for note in provenance["notes"]:
        log.warning("%s", note)
    what = "judgements" if args.qrels else "rankings"
    flags = " ".join(provenance["score_flags"])
    print(f"wrote {args.out} ({provenance['lines']} lines, {provenance['queries']} queries of "
          f"{what}) and {side}")
    if flags:
        print(f"re-score with: {flags}")
    return 0
