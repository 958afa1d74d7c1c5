"""``python -m harness score``: score a TREC/JSONL run against qrels into a results directory."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from harness.core.canonical import sha256_file
from harness.cli import add_licence_arguments
from harness.core.formats import FormatError, read_qrels, read_run, _lines
from harness.core.markdown import md_escape
from harness.core.measures import DEFAULT_MEASURES, resolve
from harness.cli.ingest import add_warehouse_arguments, ingest_run
from harness.evaluation.rows import QueryMeta, build_rows, metrics_table, per_query_rows, ranking_rows
from harness.claims.metrics import MetricsClaim
from harness.evaluation.results import write_results
from harness.evaluation.scoring import metric_engine_block, score

log = logging.getLogger(__name__)

HELP = "score a run file against qrels (trec_eval -c semantics, ties normalised)"


def add_arguments(p) -> None:
    p.add_argument("--qrels", required=True, help="TREC qrels, BEIR qrels .tsv or .jsonl")
    p.add_argument("--run", required=True, help="TREC run or .jsonl run")
    p.add_argument("--out", required=True, help="results directory to write")
    p.add_argument("--measures", nargs="+", default=list(DEFAULT_MEASURES),
                   help=f"canonical measure names (default: {' '.join(DEFAULT_MEASURES)})")
    p.add_argument("--corpus-name", default=None, help="corpus name (default: the qrels file stem)")
    add_licence_arguments(p)
    p.add_argument("--query-classes", default=None,
                   help="TSV 'query_id<TAB>class' giving each query's class")
    p.add_argument("--binary-relevance", action="store_true", help="collapse grades to 0/1")
    p.add_argument("--preserve-order", action="store_true",
                   help="score each list in file order instead of by score")
    p.add_argument("--control-name", default=None, help="name of this run (default: --out's name)")
    p.add_argument("--keep-rankings", type=int, default=100,
                   help="top-k per query written to rankings.jsonl (default 100)")
    add_warehouse_arguments(p)


def read_query_classes(path) -> dict[str, str]:
    classes = {}
    for line, text in _lines(path):
        parts = text.split("\t")
        if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
            raise FormatError(path, line, None, "expected 'query_id<TAB>class'")
        query_id, cls = parts[0].strip(), parts[1].strip()
        if query_id in classes:
            raise FormatError(path, line, "query_id", f"duplicate query id {query_id!r}")
        classes[query_id] = cls
    return classes


def run(args) -> int:
    started = time.perf_counter()
    from harness.core.tiers import declared_tier

    corpus = args.corpus_name or Path(args.qrels).stem
    tier, evidence = declared_tier(args.licence, args.tier, corpus)
    measures = resolve(args.measures)
    qrels_file = read_qrels(args.qrels)
    run_docs = read_run(args.run)
    classes = read_query_classes(args.query_classes) if args.query_classes else {}
    strays = sorted(set(classes) - set(qrels_file.judgements))
    if strays:
        log.warning("%d queries in %s are not in the qrels and are ignored: %s",
                    len(strays), args.query_classes, strays[:5])
    result = score(qrels_file.judgements, run_docs, [m.name for m in measures],
                   binary=args.binary_relevance, preserve_order=args.preserve_order,
                   keep_rankings=args.keep_rankings)
    meta = {q: QueryMeta(corpus, classes.get(q)) for q in qrels_file.judgements}
    tiers = {corpus: tier}
    rows = build_rows(result, meta, tiers)
    metrics = MetricsClaim(
        control_name=args.control_name or Path(args.out).name,
        corpora=[{
            "name": corpus, "version": None, "licence": args.licence, "tier": tier,
            "sha256": sha256_file(args.qrels), "files": None, "chunks": None,
            "evidence": evidence,
        }],
        index=None,
        retrieval={"source": "run file", "run_sha256": sha256_file(args.run),
                   "preserve_order": args.preserve_order},
        metric_engine=metric_engine_block(measures, args.preserve_order),
        relevance_policy={"graded_from": "qrels", "gain": "linear",
                          "binary": args.binary_relevance,
                          "relevance_high": None, "relevance_low": None,
                          "negative_labels": "judged non-relevant (relevance 0)"},
        judgements={"queries_in_qrels": len(qrels_file.judgements),
                    "judged_documents": result.judged_documents,
                    "relevant_documents": result.relevant_documents,
                    "negative_labels": result.negative_labels,
                    "run_queries_not_in_qrels": len(result.queries_not_in_qrels)},
        rows=rows,
    )
    md = f"# {md_escape(metrics.control_name)}\n\n" + metrics_table(rows, [m.name for m in measures])
    out = write_results(
        args.out, metrics, metrics_md=md,
        per_query=per_query_rows(result, meta, tiers),
        rankings=ranking_rows(result, meta),
        runinfo={"elapsed_seconds": time.perf_counter() - started, "command": "score"},
    )
    print(md, end="")
    print(f"\nwrote {out}")
    ingest_run(out, args)
    return 0
