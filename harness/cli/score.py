"""``python -m harness score``: score a TREC/JSONL run against qrels into a results directory."""

from __future__ import annotations

import time
from pathlib import Path

from harness.core.canonical import sha256_file
from harness.core.commands import leave_to_exit
from harness.cli import add_licence_arguments, corpus_name_of
from harness.core.formats import gc_paused, read_qrels, read_run_columns
from harness.core.measures import DEFAULT_MEASURES, resolve
from harness.cli.ingest import add_warehouse_arguments, ingest_run
from harness.evaluation.judged import DEPTH
from harness.evaluation.scored_run import KEEP_RANKINGS, score_run

HELP = "score a run file against qrels (trec_eval -c semantics, ties normalised)"


def add_arguments(p) -> None:
    p.add_argument("--qrels", default=None,
                   help="TREC qrels, BEIR qrels .tsv, .jsonl, or a qrels version (qrels-*.json, "
                        "harness qrels version: its name is recorded); without it the run is "
                        "unjudged: "
                        "its Judged@10 and the pairs to judge are printed, nothing is written")
    p.add_argument("--run", required=True, help="TREC run or .jsonl run")
    p.add_argument("--out", default=None, help="results directory to write (with --qrels)")
    from harness.core.arglists import CommaList  # one list convention for every command

    p.add_argument("--measures", nargs="+", action=CommaList, default=list(DEFAULT_MEASURES),
                   help="canonical measure names, space- or comma-separated (default: "
                        f"{' '.join(DEFAULT_MEASURES)})")
    p.add_argument("--corpus-name", default=None, help="corpus name (default: the qrels file stem)")
    add_licence_arguments(p)
    p.add_argument("--query-classes", default=None,
                   help="TSV 'query_id<TAB>class' giving each query's class")
    p.add_argument("--queries", default=None,
                   help="the query texts, written to queries.jsonl so the dashboard shows "
                        "them beside each query's change: JSONL ({\"_id\" or \"query_id\", "
                        "\"text\"}, BEIR's queries.jsonl) or TSV 'query_id<TAB>text'")
    p.add_argument("--binary-relevance", action="store_true", help="collapse grades to 0/1")
    p.add_argument("--preserve-order", action="store_true",
                   help="score each list in file order instead of by score")
    p.add_argument("--control-name", default=None, help="name of this run (default: --out's name)")
    p.add_argument("--keep-rankings", type=int, default=KEEP_RANKINGS,
                   help=f"top-k per query written to rankings.jsonl (default {KEEP_RANKINGS})")
    add_warehouse_arguments(p)


def run(args) -> int:
    # a run's records hold no reference cycles: collecting among them costs a tenth of the
    # command's time and frees nothing
    with gc_paused():
        return _score(args)


def _score(args) -> int:
    started = time.perf_counter()
    from harness.core.tiers import declared_tier

    if args.qrels is None:
        return _unjudged(args)
    if args.out is None:
        raise ValueError("--out DIR is required with --qrels (the results directory to write)")
    version = None
    if Path(args.qrels).suffix.lower() == ".json":  # a qrels version (harness qrels version)
        from harness.judgments.versions import read_version

        version = read_version(args.qrels)
        if args.corpus_name is None and version.content.get("corpus"):
            args.corpus_name = version.content["corpus"]
        args.tier = _version_tier(args, version)
    corpus, from_stem = corpus_name_of(args)
    declared_tier(args.licence, args.tier, corpus)  # a refused --tier before any file is read
    resolve(args.measures)
    judgements = version.judgements if version else read_qrels(args.qrels).judgements
    run_docs = read_run_columns(args.run)
    classes = _query_classes(args.query_classes) if args.query_classes else {}
    texts = _query_texts(args.queries) if args.queries else None
    scored = score_run(
        judgements, run_docs, args.measures, corpus=corpus,
        control_name=args.control_name or Path(args.out).name,
        qrels_sha256=sha256_file(args.qrels), run_sha256=sha256_file(args.run),
        licence=args.licence, tier=args.tier, query_classes=classes,
        classes_source=str(args.query_classes), binary=args.binary_relevance,
        preserve_order=args.preserve_order, keep_rankings=args.keep_rankings,
        query_texts=texts, texts_source=str(args.queries),
        qrels_version=version.name if version else None)
    out = scored.write(args.out, {"elapsed_seconds": time.perf_counter() - started,
                                  "command": "score"})
    print(scored.markdown(), end="")
    print(f"\nwrote {out}")
    for line in summary_notes(scored, args, from_stem):
        print(line)
    ingest_run(out, args)
    leave_to_exit(judgements, run_docs, scored)  # freed by the exit, not one by one
    return 0


def _query_classes(path: str) -> dict[str, str]:
    from harness.evaluation.inputs import read_query_classes  # only when given

    return read_query_classes(path)


def _query_texts(path: str) -> dict[str, str]:
    from harness.evaluation.inputs import read_query_texts  # only when given

    return read_query_texts(path)


def _version_tier(args, version) -> str | None:
    """The tier to score a qrels version's run at: the judgements inherit their corpus's
    tier, so a version's tier caps the run's (a more open --tier is refused)."""
    from harness.core.tiers import rank

    held = version.content["tier"]
    if args.tier is not None and rank(args.tier) < rank(held):
        raise ValueError(f"--tier {args.tier} refused: the qrels version {version.name} is tier "
                         f"{held} (its judgements inherit their corpus's tier)")
    if args.tier is None:  # tier A leaves the licence to decide, as any qrels file does
        return None if held == "A" else held
    return held if rank(held) > rank(args.tier) else args.tier


def _unjudged(args) -> int:
    """A run with no qrels: what judging it would take, and no mean of any measure."""
    for name in ("out", "query_classes"):
        if getattr(args, name) is not None:
            raise ValueError(f"--{name.replace('_', '-')} needs --qrels: an unjudged run has no "
                             "scores to write")
    from harness.evaluation.unjudged import coverage

    run_docs = read_run_columns(args.run)
    queries = sorted(_query_texts(args.queries)) if args.queries else None
    cover = coverage(run_docs, queries, None, preserve_order=args.preserve_order)
    source = f"the query file {args.queries}" if args.queries else "the run"
    print(f"unjudged: no qrels given; the query set is {source}'s")
    for line in cover.lines():
        print(line)
    print("no measure has a mean until its queries are judged; nothing was written")
    print(f"pool those pairs to judge: harness pool {args.run} --depth {DEPTH} --out pool.jsonl")
    return 0


def summary_notes(scored, args, from_stem: bool) -> list[str]:
    """What a user may want to change or know before publishing: a tier that keeps the run
    out of the publishable view and why, a corpus name taken from a file name, and how many
    queries held tied scores (one line, not one per query)."""
    from harness.core.tiers import UNKNOWN_LICENCE

    notes = []
    (corpus,) = scored.claim.corpora
    if corpus["tier"] != "A":
        if args.licence == UNKNOWN_LICENCE:
            why = "no licence given (--licence)"
        elif "registered corpus" in corpus["evidence"]:
            why = f"{corpus['name']!r} is a registered tier-{corpus['tier']} corpus"
        elif args.tier is not None:
            why = f"--tier {args.tier}"
        else:
            why = f"licence {args.licence} is not publishable"
        notes.append(f"tier {corpus['tier']}: {why}; the run is hidden from the publishable "
                     "view")
    if from_stem:
        notes.append(f"corpus name {corpus['name']!r} was taken from the qrels file name; "
                     "give --corpus-name NAME to call it something else")
    missing = len(scored.result.queries_not_in_qrels) if scored.result is not None else 0
    if missing:
        notes.append(f"{missing} of the run's queries {'has' if missing == 1 else 'have'} no "
                     "judgement and so no score (trec_eval -c scores the qrels' queries); to "
                     f"include them, pool what is left to judge: harness pool {args.run} "
                     f"--judged {args.qrels} --depth {DEPTH} --out pool.jsonl")
    tied = len(scored.result.queries_tied) if scored.result is not None else 0
    if tied:
        how = ("kept in file order (--preserve-order)" if args.preserve_order else
               "ranked by the full scores, then (doc_type, file_id, chunk_index)")
        notes.append(f"{tied} quer{'y' if tied == 1 else 'ies'} had tied scores (equal as the "
                     f"single-precision floats trec_eval's engine reads), {how}; trec_eval "
                     "alone would have ordered each tie by document id")
    return notes
