"""``python -m harness qrels``: versions of a team's own judgements, their agreement and
their TREC export."""

from __future__ import annotations

from pathlib import Path

HELP = "version a team's labels into qrels, measure rater agreement, export TREC qrels"


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    v = sub.add_parser("version", help="snapshot labels into an immutable, digested qrels "
                                       "version (qrels-<12 hex>.json)")
    v.add_argument("--labels", nargs="+", required=True, metavar="LABELS",
                   help="labels files (JSONL: query_id, doc_id, label 0-3, rater, at)")
    v.add_argument("--pool", default=None, help="the pool file the pairs came from (its depth, "
                                                "runs and sample are recorded)")
    v.add_argument("--parent", default=None, metavar="VERSION",
                   help="a version these labels extend: its labels are kept, and a rater's "
                        "later label of a pair replaces theirs")
    v.add_argument("--corpus-name", default=None, help="the corpus the pairs are from")
    from harness.cli import add_licence_arguments

    add_licence_arguments(v, when="the corpus's ", tier_note="; the judgements inherit it")
    v.add_argument("--out", required=True, metavar="DIR", help="directory to write the version to")
    e = sub.add_parser("export", help="write a version's judgements as TREC qrels")
    e.add_argument("version", metavar="VERSION", help="a qrels-<12 hex>.json file")
    e.add_argument("--out", required=True, help="TREC qrels file to write")
    a = sub.add_parser("agreement", help="Cohen's / Fleiss' kappa among raters, with intervals")
    a.add_argument("--labels", nargs="+", default=None, metavar="LABELS", help="labels files")
    a.add_argument("--version", default=None, metavar="VERSION",
                   help="a qrels version (its recorded labels)")


def run(args) -> int:
    return {"version": _version, "export": _export, "agreement": _agreement}[args.action](args)


def _version(args) -> int:
    from harness.core.canonical import sha256_file
    from harness.core.tiers import declared_tier
    from harness.judgments.labels import read_labels
    from harness.judgments.pool import read_pool
    from harness.judgments.versions import build_version, read_version, write_version

    tier, _ = declared_tier(args.licence, args.tier, args.corpus_name)
    labels = read_labels(args.labels)
    parent = None
    if args.parent:
        held = read_version(args.parent)
        parent = held.name
        labels = held.labels() + labels
    pool = read_pool(args.pool) if args.pool else None
    if pool is not None:
        pooled = {(p.query_id, p.doc_id) for p in pool.pairs}
        strays = sorted({(i.query_id, i.doc_id) for i in labels} - pooled)
        if strays and args.parent is None:
            raise ValueError(f"{len(strays)} labelled pair(s) are not in the pool {args.pool}, "
                             f"e.g. {strays[0]}: label pairs from this pool, or leave --pool out")
    version = build_version(labels, pool=pool,
                            pool_sha256=sha256_file(args.pool) if args.pool else None,
                            corpus=args.corpus_name, tier=tier, parent=parent)
    out = write_version(version, args.out)
    doc = version.content
    print(f"{version.name}: {len(doc['judgements'])} judged pairs over "
          f"{len({r['query_id'] for r in doc['judgements']})} queries, {len(doc['labels'])} "
          f"labels by {len(doc['raters'])} rater(s), tier {tier}")
    from harness.judgments.agreement import agreement

    for line in agreement(labels).lines():
        print(line)
    print(f"wrote {out}")
    print(f"score a run on it: harness score --qrels {out} --run RUN --out DIR")
    return 0


def _export(args) -> int:
    from harness.core.outputs import write_file
    from harness.judgments.versions import read_version

    version = read_version(args.version)
    write_file(args.out, version.trec(), recognise=_is_trec_qrels, what="TREC qrels file",
               inputs=[("VERSION", args.version)])
    print(f"wrote {args.out}: {len(version.content['judgements'])} judgements of "
          f"{version.name} (tier {version.content['tier']})")
    return 0


def _is_trec_qrels(path: Path) -> bool:
    """A file this command could have written: every line ``query 0 doc int``."""
    try:
        with path.open(encoding="utf-8") as handle:
            lines = handle.read(1 << 20).splitlines()
    except (OSError, UnicodeDecodeError):
        return False
    for line in lines[:1000]:
        fields = line.split()
        if len(fields) != 4 or fields[1] != "0" or not fields[3].lstrip("-").isdigit():
            return False
    return bool(lines)


def _agreement(args) -> int:
    from harness.judgments.agreement import agreement
    from harness.judgments.labels import read_labels
    from harness.judgments.versions import read_version

    if (args.labels is None) == (args.version is None):
        raise ValueError("give --labels FILE... or --version VERSION (one of them)")
    if args.version:
        labels = read_version(args.version).labels()
    else:
        labels = read_labels(args.labels)
    for line in agreement(labels).lines():
        print(line)
    return 0
