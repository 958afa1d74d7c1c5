"""``python -m harness ppi --judge FILE --labels FILE``: a judge's mean, corrected by hand labels.

The items' corpus may be named with its licence (``--licence``): the document's tier is
derived from it (A only for a publishable licence) and ``--tier`` may only make it more
restrictive, as in ``harness score``.
"""

from __future__ import annotations


from harness.cli import add_licence_arguments

HELP = "prediction-powered estimate (PPI++) of a mean from judge scores and a few hand labels"


def add_arguments(p) -> None:
    p.add_argument("--judge", required=True, help="JSONL {item_id, score in [0, 1]} for every item")
    p.add_argument("--labels", default=None,
                   help="JSONL {item_id, label}: the hand-labelled items (required to estimate)")
    p.add_argument("--alpha", type=float, default=0.05, help="1 - interval level (default 0.05)")
    p.add_argument("--corpus", default=None, help="corpus the items come from (recorded)")
    add_licence_arguments(p, tier_note=" and --corpus is named")
    p.add_argument("--out", default=None, help="write the ppi JSON document here")


def run(args) -> int:
    from harness.claims import write_claim
    from harness.claims.certificate import with_id
    from harness.certificates.ppi import ppi_document, ppi_from_files
    from harness.core.tiers import declared_tier

    from harness.core.outputs import check_file, is_document

    read = [("--judge", args.judge), ("--labels", args.labels)]
    if args.out:
        check_file(args.out, recognise=is_document("ppi"), what="ppi document", inputs=read)
    tier, evidence = declared_tier(args.licence, args.tier, args.corpus)
    if tier == "A" and not args.corpus:
        raise ValueError("tier A needs the corpus named (--corpus NAME): a publishable number "
                         "says what it was measured on")
    result, inputs = ppi_from_files(args.judge, args.labels, alpha=args.alpha)
    level = f"{1 - args.alpha:.0%}"
    lo, hi = result.interval
    llo, lhi = result.labels_only_interval
    bias = result.judge_bias
    print(f"judge alone       {result.judge_only:.3f} (no validity: the judge's opinion)")
    print(f"hand labels only  {result.labels_only:.3f} [{llo:.3f}, {lhi:.3f}] n={result.labelled}")
    print(f"PPI               {result.estimate:.3f} [{lo:.3f}, {hi:.3f}] ({level}) "
          f"lambda={result.lam:.2f}")
    leaning = 'optimistic' if bias > 0 else 'pessimistic' if bias < 0 else 'none'
    print(f"judge bias        {bias:+.3f} ({leaning})")
    print(f"effective labels  {result.effective_labels:.0f} (from {result.labelled} written, "
          f"{result.unlabelled} judged only)")
    print(f"tier              {tier} ({evidence})")
    if args.out:
        doc = ppi_document(result, inputs, corpus=args.corpus, tier=tier)
        doc = with_id({**doc, "licence": args.licence, "evidence": evidence})
        write_claim(args.out, doc, inputs=read)
        print(f"wrote {args.out}")
    return 0
