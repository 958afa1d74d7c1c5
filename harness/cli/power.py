"""``python -m harness power``: what a gold set can resolve, before anything runs; and
``--audit`` of published numbers alone."""

from __future__ import annotations

HELP = ("what a gold set can resolve: p-value floor, minimum detectable effect, queries "
        "needed; --audit checks published numbers")


def add_arguments(p) -> None:
    src = p.add_argument_group("gold set (one of)")
    src.add_argument("--qrels", default=None, help="qrels file: n = its judgeable queries")
    src.add_argument("--results", default=None,
                     help="results directory: n from its row; also its pilot sd unless --sd/--pilot")
    p.add_argument("--measure", default="MRR@10", help="measure (default MRR@10)")
    p.add_argument("--corpus", default=None, help="row corpus (default: the only one, else pooled)")
    p.add_argument("--class", dest="query_class", default="all", help="row class (default all)")
    p.add_argument("--pilot", default=None,
                   help="pilot results directory: per-query sd of --measure (used as the paired sd)")
    p.add_argument("--pilot-control", default=None,
                   help="with --pilot: a second run on the same queries; sd of the paired differences")
    p.add_argument("--sd", type=float, default=None, help="sd of per-query paired differences")
    p.add_argument("--effect", type=float, default=None, help="effect to detect (e.g. 0.02)")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="power (default 0.8)")
    p.add_argument("--arms", type=int, default=1,
                   help="arms to be compared with one control as a Holm family (default 1): "
                        "floors and the queries that must differ account for the correction")
    p.add_argument("--json", action="store_true", help="print the power document as JSON")
    audit = p.add_argument_group("audit of published numbers (no data)")
    audit.add_argument("--audit", action="store_true", help="audit published 0/1-metric values")
    audit.add_argument("-n", type=int, default=None, help="queries behind the published values")
    audit.add_argument("-v", dest="values", nargs="+", default=None, help="published value(s)")
    audit.add_argument("-b", dest="baseline", default=None, help="published baseline value")
    audit.add_argument("--confidence", type=float, default=0.95, help="interval level (default 0.95)")


def _row_slice(results, corpus, query_class):
    from harness.claims.metrics import pooled_name
    from harness.evaluation.results import load_metrics

    metrics = load_metrics(results)
    corpora = sorted({c for r in metrics["rows"] for c in str(r["corpus"]).split("+")})
    if corpus is None:
        corpus = corpora[0] if len(corpora) == 1 else pooled_name(corpora)
    for row in metrics["rows"]:
        if row["corpus"] == corpus and row["query_class"] == query_class:
            return corpus, row
    raise ValueError(f"{results}: no row for corpus {corpus!r}, class {query_class!r}")


def _pilot_sd(args, corpus):
    import numpy as np

    from harness.claims.metrics import PER_QUERY
    from harness.evaluation.results import load_per_query
    from harness.stats.perquery import PerQueryIndex

    pilot = PerQueryIndex(load_per_query(args.pilot), source=f"{args.pilot}/{PER_QUERY}")
    if corpus is None:
        corpora = pilot.corpora
        corpus = corpora[0] if len(corpora) == 1 else "+".join(corpora)
    vals = pilot.select(corpus, args.query_class, args.measure)
    if args.pilot_control:
        ctl = PerQueryIndex(load_per_query(args.pilot_control),
                            source=f"{args.pilot_control}/{PER_QUERY}")
        other = ctl.select(corpus, args.query_class, args.measure)
        if other.keys != vals.keys:
            raise ValueError(f"{args.pilot_control}: --pilot-control scored different queries than "
                             f"--pilot on {corpus}/{args.query_class}; the differences need pairs")
        diffs = vals.values - other.values
        source = (f"sd of paired differences of {args.measure}, {args.pilot} minus "
                  f"{args.pilot_control}, n = {vals.n}")
    else:
        diffs = vals.values
        source = (f"per-query sd of {args.measure} in {args.pilot} (n = {vals.n}), used as the sd of "
                  "paired differences (equal when two systems correlate at 0.5)")
    if vals.n < 2:
        raise ValueError(f"{args.pilot}: a pilot sd needs at least 2 queries")
    sd = float(np.std(diffs, ddof=1))
    if sd <= 0:
        raise ValueError(f"{args.pilot}: the per-query values do not vary (sd 0); give --sd")
    return sd, source


def run(args) -> int:
    import sys

    from harness.core.canonical import canonical_json
    from harness.stats.markdown import audit_text, power_text
    from harness.stats.power import audit, power_report

    if args.audit:
        if args.n is None or not args.values:
            raise ValueError("--audit needs -n N and -v VALUE [VALUE ...] (and optionally -b BASELINE)")
        doc = audit(args.n, args.values, args.baseline, alpha=args.alpha, confidence=args.confidence)
        print(canonical_json(doc) if args.json else audit_text(doc), end="")
        return 0
    if bool(args.qrels) == bool(args.results):
        raise ValueError("give the gold set as exactly one of --qrels FILE or --results DIR (or use --audit)")
    if args.pilot_control and not args.pilot:
        raise ValueError("--pilot-control needs --pilot")
    corpus = args.corpus
    if args.qrels:
        from harness.core.formats import read_qrels
        from harness.evaluation.relevance import prepare_qrels

        judgeable, dropped, _ = prepare_qrels(read_qrels(args.qrels).judgements)
        n = len(judgeable)
        if dropped:
            # stderr: with --json, stdout is the document and nothing else
            print(f"note: {len(dropped)} qrels queries have no relevant document and are not counted",
                  file=sys.stderr)
    else:
        corpus, row = _row_slice(args.results, args.corpus, args.query_class)
        n = int(row["n"])
    sd, source = args.sd, "given (--sd)" if args.sd is not None else None
    if sd is None and args.pilot:
        sd, source = _pilot_sd(args, corpus)
    elif sd is None and args.results:
        args.pilot = args.results
        sd, source = _pilot_sd(args, corpus)
    doc = power_report(n, measure=args.measure, sd=sd, sd_source=source, effect=args.effect,
                       alpha=args.alpha, power=args.power, family_size=args.arms)
    if args.json:
        print(canonical_json(doc), end="")
        return 0
    print(power_text(doc), end="")
    if doc["family_size"] > 1:
        print(f"Holm family of {doc['family_size']} arms: smallest attainable adjusted p "
              f"{doc['smallest_attainable_p_holm']:.3g} ({doc['family_size']} x 2^(1-n)); the queries "
              f"that must differ above count the correction")
    return 0
