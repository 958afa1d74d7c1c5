"""``python -m harness agreement``: do two corpora rank the arms' changes the same way?"""

from __future__ import annotations

from pathlib import Path

HELP = ("corpus agreement over families of arms: Kendall tau-b, Spearman, Pearson, sign "
        "agreement, winners, delta ranges")


def add_arguments(p) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--manifest", default=None,
                     help="JSON manifest: families, each with a control run and arms {name, run, axis}")
    src.add_argument("--emit-manifest", action="store_true",
                     help="print a manifest template for --runs (edit it, then pass it to --manifest)")
    p.add_argument("--runs", nargs="+", default=None, help="with --emit-manifest: results directories")
    p.add_argument("--family", default=None,
                   help="with --emit-manifest: put every run in this family (default: infer from "
                        "retrieval stage/scope and query counts)")
    p.add_argument("--class", dest="query_class", default="all", help="query class (default all)")
    p.add_argument("--measure", default=None, help="measure (default: the manifest's, else nDCG@10)")
    p.add_argument("--corpora", nargs=2, default=None, metavar=("A", "B"),
                   help="the two corpora, in delta order (default: the manifest's, else inferred)")
    p.add_argument("--exclude-inert", action="store_true",
                   help="leave out arms that moved nothing on either corpus")
    p.add_argument("--drop", nargs="+", action="extend", default=[], metavar="ARM",
                   help="leave out these arms (repeatable)")
    p.add_argument("--inert-below", type=float, default=0.0,
                   help="treat |delta| <= this as zero (default 0: exact)")
    p.add_argument("--json", action="store_true", help="print the agreement document as JSON")
    p.add_argument("--out", default=None, help="also write the agreement document to this file")


def run(args) -> int:
    from harness.core.canonical import canonical_json
    from harness.evaluation.manifests import arms_from_manifest, emit_manifest, load_manifest
    from harness.stats.agreement import DEFAULT_MEASURE, agreement

    if args.emit_manifest:
        if not args.runs:
            raise ValueError("--emit-manifest needs --runs DIR [DIR ...]")
        print(canonical_json(emit_manifest(args.runs, family=args.family,
                                           measure=args.measure or DEFAULT_MEASURE)), end="")
        return 0
    if args.runs:
        raise ValueError("--runs goes with --emit-manifest; with --manifest the runs are in the manifest")
    path = Path(args.manifest)
    inputs = [("--manifest", path)]
    if args.out:
        from harness.core.outputs import check_file, is_document
        from harness.claims import AgreementClaim

        check_file(args.out, recognise=is_document(AgreementClaim.KIND), what="agreement document",
                   inputs=inputs)
    manifest = load_manifest(path)
    arms, corpora, measure = arms_from_manifest(manifest, path.parent, measure=args.measure,
                                                query_class=args.query_class, corpora=args.corpora)
    doc = agreement(arms, corpora, measure=measure, query_class=args.query_class,
                    exclude_inert=args.exclude_inert, drop=args.drop, tolerance=args.inert_below)
    if args.out:
        from harness.claims import write_claim

        write_claim(args.out, doc, inputs=inputs)
    if args.json:
        print(canonical_json(doc), end="")
    else:
        from harness.stats.markdown import agreement_tables

        print(agreement_tables(doc), end="")
    return 0
