"""``python -m harness bench``: one retrieval arm over one or more corpora, scored.

Exit codes: 0 written; 2 bad input (the message names what); 3 refused because the index
holds vectors from two named embedding models (nothing is written); 5 the backend failed or
its index changed under the run (unreachable node, deleted or rewritten index; a system
under test that failed a query after its retries, spent the request budget or returned ids
mostly unknown to the corpus: nothing is written).
"""

from __future__ import annotations

import sys

from harness.core import settings
from harness.core.arglists import CommaList
from harness.cli.ingest import add_warehouse_arguments

HELP = "run a retrieval arm (bm25 | vector | hybrid, retrieve | rerank) and score it"


def add_arguments(p) -> None:
    from harness.retrieval.arms import (
        COMBINATION_TECHNIQUES,
        FUSION_STRATEGIES,
        GRANULARITIES,
        MODES,
        NORMALIZATION_TECHNIQUES,
        SCOPES,
        STAGES,
    )
    from harness.retrieval.backends import BACKENDS, DEFAULT_BACKEND
    from harness.core.measures import DEFAULT_MEASURES

    g = p.add_argument_group("corpora and output")
    g.add_argument("--corpus", action="append", required=True, metavar="KIND:PATH",
                   help="qmsum:PATH | beir:PATH | trec:PATH | synthetic:PATH (repeatable; all "
                        "corpora share one index)")
    g.add_argument("--out", default=None,
                   help="results directory to write (required unless --gate is given)")
    g.add_argument("--control-name", default=None, help="name of this run (default: --out's name)")
    g.add_argument("--compare", default=None, metavar="CONTROL/metrics.json",
                   help="print the per-class delta table against this control")
    g.add_argument("--measures", nargs="+", action=CommaList, default=list(DEFAULT_MEASURES),
                   help="canonical measure names, space- or comma-separated (default: "
                        f"{' '.join(DEFAULT_MEASURES)})")

    g = p.add_argument_group("the arm")
    g.add_argument("--backend", choices=sorted(BACKENDS), default=DEFAULT_BACKEND)
    g.add_argument("--mode", choices=MODES, default=None,
                   help="default hybrid (not for --backend http or command: the system "
                        "under test returns one list)")
    g.add_argument("--stage", choices=STAGES, default="retrieve")
    g.add_argument("--scope", choices=SCOPES, default="corpus",
                   help="gold-files: oracle restricted to each query's gold files (upper bound)")
    g.add_argument("--granularity", choices=GRANULARITIES, default="chunk")
    g.add_argument("--size", type=int, default=None,
                   help="request size (default 48); sets the fusion window "
                        "max(100, min(size*4, 500)), so it is not a truncation knob")
    g.add_argument("--max-words", type=int, default=200, help="chunk size cap in words")

    from harness.retrieval.backends import option_modules

    for name, module in option_modules().items():
        module.add_arguments(p.add_argument_group(f"--backend {name}"))

    g = p.add_argument_group("fusion (--mode hybrid)")
    g.add_argument("--fusion", choices=FUSION_STRATEGIES, default=None,
                   help="default: rrf at rank constant 60, recorded as not selected explicitly")
    g.add_argument("--rank-constant", type=int, default=None)
    g.add_argument("--normalization-technique", choices=NORMALIZATION_TECHNIQUES, default=None)
    g.add_argument("--combination-technique", choices=COMBINATION_TECHNIQUES, default=None)
    g.add_argument("--combination-weights", default=None, metavar="BM25,VECTOR",
                   help="e.g. 0.7,0.3 (whole percents summing to 1)")

    g = p.add_argument_group("rerank stage (--stage rerank)")
    g.add_argument("--candidate-pool", type=int, default=None,
                   help="candidates retrieved for reranking (= the request size; default 48)")
    g.add_argument("--final-chunks", type=int, default=None, help="default 12")
    g.add_argument("--max-chunks-per-file", type=int, default=None, help="default 4")
    g.add_argument("--rerank-max-pairs", type=int, default=None, help="default 50")
    g.add_argument("--reranker", default=None, metavar="PATH",
                   help="local cross-encoder directory (default: $HARNESS_RERANKER)")

    g = p.add_argument_group("lexical and dense legs")
    g.add_argument("--k1", type=float, default=1.2, help="BM25 k1 (default 1.2)")
    g.add_argument("--b", type=float, default=0.75, help="BM25 b (default 0.75)")
    g.add_argument("--model", default=None, metavar="NAME|PATH",
                   help="embedding model profile or local directory "
                        "(default: sentence-transformers/all-MiniLM-L6-v2, packaged)")
    g.add_argument("--dim", type=int, default=None, help="dimension (required for a model "
                                                         "without a profile)")
    g.add_argument("--query-prefix", default=None)
    g.add_argument("--document-prefix", default=None)
    g.add_argument("--embed-header", action="store_true",
                   help="embed '{title} | {date} | participants: {roster}' before each chunk "
                        "(dense leg only)")
    g.add_argument("--cache-dir", default=None,
                   help="embedding cache directory (default: $HARNESS_CACHE or ./cache)")
    g.add_argument("--vectors", default=None, metavar="URL",
                   help="team store to pull vectors from before embedding (s3://bucket/prefix, "
                        "file:///path or a directory; written by `harness embed --push`): "
                        "each block is verified against its digest, only what is missing or "
                        "refused is embedded here")
    from harness.retrieval.embeddings.devices import DEVICE_HELP

    g.add_argument("--device", default="auto", metavar="auto|cpu|cuda[:N]", help=DEVICE_HELP)
    g.add_argument("--precision", choices=("as-given", "certified"), default="as-given",
                   help="as-given (default): the model named; certified: the fastest cheaper "
                        "profile (bf16, fp16, onnx) a migration study certified a drop-in "
                        "for it on this machine's CPU path or GPU (the claim names it and its "
                        "certificate); refused when none is")
    g.add_argument("--certificates", default=None, metavar="DIR",
                   help="certificate store (default: certificates/ in the cache directory)")

    g = p.add_argument_group("relevance")
    g.add_argument("--relevance-high", type=float, default=0.5)
    g.add_argument("--relevance-low", type=float, default=0.0)
    g.add_argument("--binary-relevance", action="store_true")

    g = p.add_argument_group("execution")
    g.add_argument("--workers", type=int, default=1, help="retrieval threads (default 1)")
    g.add_argument("--query-batch", type=int, default=None,
                   help="queries per retrieval call (default 1: every latency sample is one "
                        "query's; larger batches raise throughput but record batch means); a "
                        "fixed cut in query-id order, so results never depend on it or on --workers")
    g.add_argument("--no-progress", action="store_true", help="no progress bars")
    g.add_argument("--no-prepared-cache", action="store_true",
                   help="load, chunk, judge and index afresh, reading and writing no prepared-"
                        "corpus or BM25 index cache (default: $HARNESS_PREPARED_CACHE, else "
                        "prepared/ in the cache directory)")

    g = p.add_argument_group(
        "gated run (retrieve and score query by query until the gate decides; writes no "
        "results directory; exit 0 pass, 1 fail)")
    g.add_argument("--gate", choices=("point", "ci-lower", "regression", "sequential"),
                   default=None, help="gate policy; sequential stops as soon as it is decided")
    g.add_argument("--gate-measure", default="nDCG@10", help="measure gated (default nDCG@10)")
    g.add_argument("--gate-threshold", type=float, default=None, help="the line to clear")
    g.add_argument("--gate-corpus", default=None,
                   help="slice corpus (default: the only corpus, else all pooled)")
    g.add_argument("--gate-class", default="all", help="slice query class (default all)")
    g.add_argument("--gate-control", default=None, metavar="DIR",
                   help="recorded control results directory (regression)")
    g.add_argument("--gate-budget", type=int, default=None,
                   help="sequential: most queries to retrieve")
    g.add_argument("--gate-seed", type=int, default=0, help="query order seed (default 0)")
    g.add_argument("--gate-alpha", type=float, default=0.05, help="error level (default 0.05)")
    g.add_argument("--gate-out", default=None, metavar="FILE", help="write the gate document here")
    g.add_argument("--summary", default=None,
                   help="append the Markdown summary here (default: $GITHUB_STEP_SUMMARY if set)")
    g.add_argument("--summary-internal", action="store_true",
                   help="show the measured numbers of a slice that is not tier A (withheld by "
                        "default: step summaries are often public)")
    add_warehouse_arguments(p)


def system_arguments(args) -> None:
    """Resolve ``--mode`` and, for a system under test (``--backend http | command``), the
    one-list-per-query arm: no legs of the harness's own, one request per query, the
    concurrency given by ``--http-concurrency``; flags that cannot apply are refused."""
    from harness.retrieval.backends import SYSTEM_BACKENDS
    from harness.retrieval.backends.system import DEFAULT_CONCURRENCY

    if args.backend not in SYSTEM_BACKENDS:
        args.mode = args.mode or "hybrid"
        return
    refused = [("--mode", args.mode is not None),
               ("--workers (use --http-concurrency)", args.workers != 1),
               ("--query-batch", args.query_batch not in (None, 1)),
               ("--scope gold-files", args.scope != "corpus"),
               ("--stage rerank", args.stage != "retrieve"),
               ("--repeat with --gate (a gate is one pass)", bool(args.gate and args.repeat))]
    bad = [flag for flag, given in refused if given]
    if bad:
        raise ValueError(f"{', '.join(bad)} do not apply to --backend {args.backend}: the "
                         "system under test returns one ranked list per query")
    args.mode = "bm25"  # the single-list path; the claim records mode "system"
    args.workers = args.http_concurrency or DEFAULT_CONCURRENCY


def run_gate(args) -> int:
    """``--gate``: index once, retrieve and score query by query until the gate decides."""

    from harness.pipeline.config import from_args
    from harness.pipeline.gated import GateOptions, run_gated
    from harness.stats.markdown import gate_summary

    if args.gate_threshold is None:
        raise ValueError("--gate needs --gate-threshold")
    if args.gate == "regression" and not args.gate_control:
        raise ValueError("--gate regression needs --gate-control DIR (a recorded control run)")
    if args.summary:
        from harness.core.outputs import check_appendable

        check_appendable(args.summary)  # before anything is indexed
    if args.gate_out:
        from harness.core.outputs import check_file, is_document
        from harness.claims import GateClaim

        check_file(args.gate_out, recognise=is_document(GateClaim.KIND), what="gate document",
                   flag="--gate-out", inputs=[("--gate-control", args.gate_control)])
    control = control_claim = None
    if args.gate_control:
        from harness.evaluation.results import load_metrics
        from harness.evaluation.runs import recorded_values

        control_claim = load_metrics(args.gate_control)  # compared once the index is open
        control = recorded_values(args.gate_control, args.gate_corpus, args.gate_class,
                                  args.gate_measure)[1]
    args.out = args.out or args.control_name or "gated-run"
    cfg = from_args(args)
    gate = GateOptions(policy=args.gate, measure=args.gate_measure,
                       threshold=args.gate_threshold, corpus=args.gate_corpus,
                       query_class=args.gate_class, control=control, alpha=args.gate_alpha,
                       seed=args.gate_seed, budget=args.gate_budget,
                       control_claim=control_claim,
                       control_source=f"{args.gate_control}/metrics.json")
    outcome = run_gated(cfg, gate)
    summary = gate_summary(outcome.result, internal=args.summary_internal)
    print(summary, end="")
    print(f"\nretrieved {outcome.retrieved} of {outcome.result.available} queries")
    if outcome.requests_sent is not None:
        requests = (f"requests sent to the system: {outcome.requests_sent} (retries "
                    f"included); saved: {outcome.result.available - outcome.retrieved} "
                    "queries never sent\n")
        print(requests, end="")
        summary += "\n" + requests
    if args.gate_out:
        from harness.claims import write_claim

        write_claim(args.gate_out, outcome.result.to_dict(), flag="--gate-out",
                    inputs=[("--gate-control", args.gate_control)])
    target = args.summary or settings.step_summary()
    if target:
        from harness.core.outputs import append_text

        append_text(target, summary + "\n",
                    flag="--summary" if args.summary else "$GITHUB_STEP_SUMMARY")
    return 0 if outcome.result.passed else 1


def run(args) -> int:
    from harness.retrieval.backends import EXIT_BACKEND, BackendError
    from harness.pipeline.config import from_args
    from harness.pipeline.runner import run_arm
    from harness.retrieval.embeddings.provenance import EXIT_MIXED_EMBEDDINGS, MixedEmbeddingSpace
    from harness.cli.ingest import ingest_run

    system_arguments(args)
    if args.gate:
        try:
            return run_gate(args)
        except MixedEmbeddingSpace as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_MIXED_EMBEDDINGS
        except BackendError as exc:
            print(f"error: {exc}; nothing was written", file=sys.stderr)
            return EXIT_BACKEND
    if not args.out:
        raise ValueError("--out is required (the results directory to write)")
    from harness.evaluation.results import check_out_directory

    check_out_directory(args.out)  # before anything is indexed
    cfg = from_args(args)
    control = None
    if cfg.compare:
        from harness.evaluation.results import load_metrics

        control = load_metrics(cfg.compare)  # a bad control fails before any work
    try:
        outcome = run_arm(cfg)
    except MixedEmbeddingSpace as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_MIXED_EMBEDDINGS
    except BackendError as exc:
        print(f"error: {exc}; nothing was written", file=sys.stderr)
        return EXIT_BACKEND
    from harness.cli.summary import bench_summary

    print("\n".join(bench_summary(outcome.out, outcome.metrics, outcome.runinfo)))
    lat = outcome.runinfo["retrieval_latency_ms"]
    sent = outcome.runinfo.get("backend", {})
    if "requests_sent" in sent:  # a system under test
        print(f"system under test: {sent['requests_sent']} requests sent ({sent['retries']} "
              f"retries); latency percentiles over {lat['n']} samples at concurrency "
              f"{lat['concurrency']}; {sent['unknown_ids']} of {sent['returned_ids']} returned "
              "ids unknown to the corpus")
        band = outcome.metrics.get("system_under_test", {}).get("repeat_band")
        if band:
            print(f"repeats: {band['repeats']}; widest run-to-run band {band['widest']:.4f}; "
                  f"{band['queries_changed']} queries changed ranking between repeats")
    if control is not None:
        from harness.evaluation.rows import compare_table

        print(f"\ncontrol: {control['control_name']}   candidate: {cfg.name()}\n")
        print(compare_table(control, outcome.metrics), end="")
    ingest_run(outcome.out, args)
    return 0
