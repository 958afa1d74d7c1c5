"""``python -m harness calibrate``: a coverage or risk certificate from runs' calibration data."""

from __future__ import annotations

HELP = "calibrate a certificate (conformal context size or risk-controlled abstention) from runs"


def _fractions(text: str) -> tuple[float, float, float]:
    try:
        parts = tuple(float(p) for p in text.split(","))
    except ValueError:
        raise ValueError(f"--splits must be three comma-separated fractions, got {text!r}") from None
    if len(parts) != 3:
        raise ValueError(f"--splits must be three comma-separated fractions, got {text!r}")
    return parts


def add_arguments(p) -> None:
    p.add_argument("--run", action="append", required=True, metavar="DIR",
                   help="results directory holding calibration.jsonl (repeatable: pooled)")
    p.add_argument("--out", required=True, help="certificate JSON to write")
    p.add_argument("--type", choices=("coverage", "risk"), default="coverage",
                   help="coverage: adaptive context size; risk: answer/abstain threshold")
    p.add_argument("--alpha", type=float, default=0.1,
                   help="coverage: promise P(relevant passage in the set) >= 1 - alpha (default 0.1)")
    p.add_argument("--risk-target", type=float, default=0.05,
                   help="risk: promised P(answer with no relevant passage in context) (default 0.05)")
    p.add_argument("--delta", type=float, default=0.1,
                   help="risk: the promise holds with probability >= 1 - delta (default 0.1)")
    p.add_argument("--context-k", type=int, default=10,
                   help="risk: passages in the context the loss looks at (default 10)")
    p.add_argument("--seed", type=int, default=0, help="split seed (default 0)")
    p.add_argument("--splits", default="0.25,0.35,0.40",
                   help="tune,calibrate,heldout fractions (default 0.25,0.35,0.40)")


def run(args) -> int:
    from harness.certificates.build import build_coverage_certificate, build_risk_certificate
    from harness.evaluation.runs import load_pool
    from harness.claims import write_claim

    from harness.core.outputs import check_file, is_document

    fractions = _fractions(args.splits)
    inputs = [("--run", d) for d in args.run]
    check_file(args.out, recognise=is_document("certificate"), what="certificate document",
               inputs=inputs)
    pool = load_pool(args.run)
    if args.type == "coverage":
        doc = build_coverage_certificate(pool, alpha=args.alpha, seed=args.seed, fractions=fractions)
    else:
        doc = build_risk_certificate(pool, target=args.risk_target, delta=args.delta,
                                     seed=args.seed, context_k=args.context_k, fractions=fractions)
    write_claim(args.out, doc, inputs=inputs)
    splits = doc["splits"]
    print(f"{doc['type']} certificate: {doc['status'].upper()}  "
          f"(queries: {splits['tune']} tune / {splits['calibrate']} calibrate / "
          f"{splits['heldout']} held out, seed {doc['seed']}, tier {doc['tier']})")
    if doc["type"] == "coverage" and doc["threshold"] is not None:
        held = doc["heldout"]
        print(f"threshold {doc['threshold']!r} at temperature {doc['temperature']!r}")
        sized = "maximum K (degenerate)" if doc["status"] == "degenerate" else "adaptive"
        print(f"| held out | fixed K (same promise) | {sized} |")
        print("|---|---|---|")
        k = doc["fixed_k"]["k"]
        fixed_cov = "n/a" if held["fixed_k_coverage"] is None else f"{held['fixed_k_coverage']:.3f}"
        print(f"| passages sent | {k if k is not None else 'n/a'} | {held['mean_set_size']:.2f} |")
        lo, hi = held["coverage_interval"]
        print(f"| coverage | {fixed_cov} | {held['coverage']:.3f} [{lo:.3f}, {hi:.3f}] |")
        for bucket in held["by_first_relevant_rank"]:
            if bucket["n"]:
                print(f"| first relevant rank {bucket['bucket']} (n={bucket['n']}) | "
                      f"{k if k is not None else 'n/a'} | {bucket['mean_set_size']:.2f} |")
    print(doc["reason"])
    print(f"wrote {args.out}")
    return 0
