"""``python -m harness gate``: pass/fail a measure against a threshold, for CI.

Exit 0 pass, 1 fail (``undecided`` fails).  A Markdown summary is appended to ``--summary``
or, when that is not given, to ``$GITHUB_STEP_SUMMARY`` if it is set.

The gate document and the summary name the slice's licence tier: from the results
directory's rows (a bench run's rows are as restrictive as its shared index), the control's
too for ``regression``, and for ``--qrels`` from ``--licence`` as in ``harness score``
(unknown: B).  A CI step summary is often public, so the summary of a slice that is not
tier A shows the verdict only and withholds every measured number, unless
``--summary-internal`` is given.

A ``--control`` that measured something else (another index, granularity, engine, relevance
policy, corpus checksum or tier) is refused as ``harness intervals`` refuses it
(:func:`harness.stats.randomization.refuse_incomparable`).
"""

from __future__ import annotations

from pathlib import Path

from harness.core import settings
from harness.cli import add_licence_arguments, corpus_name_of
from harness.core.tiers import most_restrictive_tier

HELP = "gate a measure on a threshold (point | ci-lower | regression | sequential); exit 0 pass, 1 fail"

POLICY_NAMES = ("point", "ci-lower", "regression", "sequential")


def add_arguments(p) -> None:
    p.add_argument("--policy", choices=POLICY_NAMES, default="point", help="gate policy (default point)")
    p.add_argument("--measure", required=True, help="canonical measure name, e.g. nDCG@10")
    p.add_argument("--threshold", type=float, required=True, help="the line the measure must clear")
    src = p.add_argument_group("what is gated (one of)")
    src.add_argument("--results", default=None, help="a results directory (per_query.jsonl)")
    src.add_argument("--qrels", default=None, help="qrels file (with --run): each query scored lazily")
    src.add_argument("--run", default=None, help="run file (with --qrels)")
    p.add_argument("--control", default=None, help="recorded control results directory (regression)")
    p.add_argument("--corpus", default=None,
                   help="corpus of the slice (default: the only one, else the pooled row)")
    p.add_argument("--class", dest="query_class", default="all", help="query class (default all)")
    p.add_argument("--corpus-name", default=None, help="with --qrels: corpus name (default: qrels stem)")
    p.add_argument("--query-classes", default=None, help="with --qrels: TSV 'query_id<TAB>class'")
    add_licence_arguments(p, when="with --qrels: ")
    p.add_argument("--binary-relevance", action="store_true", help="with --qrels: collapse grades to 0/1")
    p.add_argument("--preserve-order", action="store_true", help="with --qrels: score lists in file order")
    p.add_argument("--alpha", type=float, default=0.05, help="error level (default 0.05)")
    p.add_argument("--seed", type=int, default=0, help="seed: query order, resamples, sign flips")
    p.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples (ci-lower)")
    p.add_argument("--permutations", type=int, default=10000, help="sign flips (regression)")
    p.add_argument("--budget", type=int, default=None, help="sequential: most queries to score")
    p.add_argument("--summary", default=None, help="append the Markdown summary to this file")
    p.add_argument("--summary-internal", action="store_true",
                   help="include the measured numbers of a slice that is not tier A in the "
                        "printed and written summary (default: withheld; never for a public "
                        "step summary)")
    p.add_argument("--json", action="store_true", help="print the gate document as JSON")


def _results_stream(args):
    from harness.claims.metrics import PER_QUERY
    from harness.evaluation.results import load_metrics, load_per_query
    from harness.stats.intervals import MEAN_TOLERANCE
    from harness.stats.perquery import PerQueryIndex, default_slice_corpus
    from harness.stats.sequential import QueryStream

    metrics = load_metrics(args.results)
    index = PerQueryIndex(load_per_query(args.results), source=f"{args.results}/{PER_QUERY}")
    corpus = args.corpus or default_slice_corpus(index.corpora)
    sel = index.select(corpus, args.query_class, args.measure)
    tier = most_restrictive_tier([sel.tier, slice_tier(metrics, corpus)])
    for row in metrics["rows"]:
        if row["corpus"] == corpus and row["query_class"] == args.query_class \
                and args.measure in row["metrics"] \
                and abs(float(row["metrics"][args.measure]) - sel.mean) > MEAN_TOLERANCE:
            raise ValueError(f"{args.results}: per_query.jsonl and metrics.json disagree on "
                             f"{corpus}/{args.query_class}/{args.measure}")
    values = dict(zip(sel.keys, sel.values.tolist()))
    seed = args.seed if args.policy == "sequential" else None
    return corpus, tier, QueryStream.from_values(values, seed=seed, label=str(args.results))


def _qrels_stream(args):
    from harness.evaluation.inputs import read_query_classes
    from harness.core.formats import read_qrels, read_run
    from harness.core.measures import resolve
    from harness.core.tiers import declared_tier
    from harness.evaluation.runs import scored_stream

    resolve([args.measure])
    corpus, _ = corpus_name_of(args)
    tier, _ = declared_tier(args.licence, args.tier, corpus)
    qrels = read_qrels(args.qrels).judgements
    run = read_run(args.run)
    if args.corpus and args.corpus != corpus:
        raise ValueError(f"--corpus {args.corpus!r} does not name the qrels corpus {corpus!r} "
                         "(set it with --corpus-name)")
    ids = sorted(qrels)
    if args.query_class != "all":
        if not args.query_classes:
            raise ValueError(f"--class {args.query_class} with --qrels needs --query-classes TSV")
        classes = read_query_classes(args.query_classes)
        ids = [q for q in ids if classes.get(q) == args.query_class]
        if not ids:
            raise ValueError(f"{args.query_classes}: no qrels query has class {args.query_class!r}")
    seed = args.seed if args.policy == "sequential" else None
    stream = scored_stream(qrels, run, args.measure, binary=args.binary_relevance,
                           preserve_order=args.preserve_order, seed=seed, query_ids=ids,
                           label=f"{args.qrels} x {args.run}")
    return corpus, tier, stream


def slice_tier(metrics, corpus: str) -> str:
    """The tier of a results directory's numbers on ``corpus`` (``a+b`` pooled): the most
    restrictive effective tier of its corpora (:func:`harness.evaluation.results.effective_tiers`);
    a corpus the run does not list fails closed (B)."""
    from harness.claims.metrics import effective_tiers

    tiers = effective_tiers(metrics)
    return most_restrictive_tier(tiers.get(name, "B") for name in corpus.split("+"))


def qrels_claim(args, corpus: str, tier: str) -> dict:
    """What ``harness score`` records about a qrels and run pair, as far as comparability
    reads it (engine, relevance policy, the corpus and its checksum, no index): a control is
    compared with this as with a results directory's metrics.json."""
    from harness.core.canonical import sha256_file
    from harness.core.measures import resolve
    from harness.evaluation.engine import metric_engine_block

    return {
        "control_name": f"{Path(args.qrels).name} x {Path(args.run).name}",
        "corpora": [{"name": corpus, "version": None, "licence": args.licence, "tier": tier,
                     "sha256": sha256_file(args.qrels)}],
        "index": None,
        "retrieval": {"source": "run file", "run_sha256": sha256_file(args.run),
                      "preserve_order": args.preserve_order},
        "metric_engine": metric_engine_block(resolve([args.measure]), args.preserve_order),
        "relevance_policy": {"graded_from": "qrels", "gain": "linear",
                             "binary": args.binary_relevance,
                             "relevance_high": None, "relevance_low": None,
                             "negative_labels": "judged non-relevant (relevance 0)"},
    }


def _control_values(args, corpus, claim: dict, claim_source: str) -> tuple[dict, str]:
    """The control's values on the slice, keyed by ``(corpus, query_id)``, and their tier,
    after refusing a control that measured something else than ``claim`` (the same rules as
    ``harness intervals``: :func:`harness.stats.randomization.refuse_incomparable`)."""
    from harness.claims.metrics import METRICS_JSON
    from harness.evaluation.results import load_metrics
    from harness.evaluation.runs import recorded_values
    from harness.stats.randomization import refuse_incomparable

    control = load_metrics(args.control)
    refuse_incomparable(control, claim, control_name=str(control["control_name"]),
                        control_source=str(Path(args.control) / METRICS_JSON),
                        arm_name=str(claim["control_name"]), arm_source=claim_source)
    values = recorded_values(args.control, corpus, args.query_class, args.measure)[1]
    return values, slice_tier(control, corpus)


def gate_document(result, tier: str) -> dict:
    """The gate document (kind ``gate``) with the slice's licence tier."""
    return {**result.to_dict(), "tier": tier}


def run(args) -> int:
    from harness.stats.gate import GateSpec, run_gate
    from harness.stats.markdown import gate_summary

    if bool(args.results) == bool(args.qrels or args.run):
        raise ValueError("gate needs exactly one source: --results DIR, or --qrels FILE with --run FILE")
    if bool(args.qrels) != bool(args.run):
        raise ValueError("--qrels and --run go together")
    if args.summary:
        from harness.core.outputs import check_appendable

        check_appendable(args.summary)  # before anything is scored
    if args.policy == "regression" and not args.control:
        raise ValueError("--policy regression needs --control DIR (a recorded control run)")
    if args.results and (args.licence != "unknown" or args.tier is not None):
        raise ValueError("--licence and --tier go with --qrels: a results directory records "
                         "its corpora's licences and tiers")
    if args.results:
        from harness.claims.metrics import METRICS_JSON
        from harness.evaluation.results import load_metrics

        corpus, tier, stream = _results_stream(args)
        source = str(args.results)
        claim, claim_source = load_metrics(args.results), str(Path(args.results) / METRICS_JSON)
    else:
        corpus, tier, stream = _qrels_stream(args)
        source = f"{args.qrels} x {args.run}"
        claim, claim_source = qrels_claim(args, corpus, tier), source
    control = None
    if args.control:
        control, control_tier = _control_values(args, corpus, claim, claim_source)
        tier = most_restrictive_tier([tier, control_tier])
        if not args.results:  # qrels mode: the stream's keys are bare query ids
            control = {qid: v for (_, qid), v in control.items()}
    spec = GateSpec(measure=args.measure, threshold=args.threshold, corpus=corpus,
                    query_class=args.query_class, stream=stream, control=control, alpha=args.alpha,
                    seed=args.seed, resamples=args.resamples, permutations=args.permutations,
                    budget=args.budget, source=source)
    result = run_gate(args.policy, spec)
    result.extra["tier"] = tier
    summary = gate_summary(result, internal=args.summary_internal)
    if args.json:
        from harness.core.canonical import canonical_json

        print(canonical_json(gate_document(result, tier)), end="")
    else:
        print(summary, end="")
    target = args.summary or settings.step_summary()
    if target:
        from harness.core.outputs import append_text

        append_text(target, summary + "\n",
                    flag="--summary" if args.summary else "$GITHUB_STEP_SUMMARY")
    return 0 if result.passed else 1
