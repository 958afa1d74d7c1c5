"""``python -m harness drift simulate``: frozen vs rolling vs adaptive thresholds under shift."""

from __future__ import annotations

HELP = "simulate certificate drift: frozen, rolling-window and adaptive (ACI) thresholds"


def add_arguments(p) -> None:
    sub = p.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True
    s = sub.add_parser("simulate", help="long-run coverage per method under shift and saturation")
    s.add_argument("--scenario", action="append", default=None,
                   help="location_shift and/or saturation (repeatable; default both)")
    s.add_argument("--streams", type=int, default=200, help="independent streams (default 200)")
    s.add_argument("--length", type=int, default=3000, help="queries per stream (default 3000)")
    s.add_argument("--alpha", type=float, default=0.1, help="promised miscoverage (default 0.1)")
    s.add_argument("--gamma", type=float, default=0.005, help="ACI step size (default 0.005)")
    s.add_argument("--window", type=int, default=500, help="rolling window (default 500)")
    s.add_argument("--calibration", type=int, default=500,
                   help="calibration sample before the stream (default 500)")
    s.add_argument("--shift", type=float, default=0.30, help="location shift (default 0.30)")
    s.add_argument("--saturation", type=float, default=0.3,
                   help="fraction of scores tied at the top after the change (default 0.3)")
    s.add_argument("--change-at", type=int, default=0, help="query index of the change (default 0)")
    s.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    s.add_argument("--json", action="store_true", help="print the full results as JSON")


def run(args) -> int:
    from harness.core.canonical import canonical_json
    from harness.certificates.drift import SCENARIOS, format_table, simulate

    scenarios = args.scenario or sorted(SCENARIOS)
    for name in scenarios:
        if name not in SCENARIOS:
            raise ValueError(f"unknown scenario {name!r}; expected one of {sorted(SCENARIOS)}")
    results = [simulate(name, streams=args.streams, length=args.length, alpha=args.alpha,
                        gamma=args.gamma, window=args.window, calibration=args.calibration,
                        shift=args.shift, saturation=args.saturation, change_at=args.change_at,
                        seed=args.seed, progress=True)
               for name in scenarios]
    if args.json:
        print(canonical_json(results), end="")
        return 0
    print(f"{args.streams} streams x {args.length} queries, promise {1 - args.alpha:g}, "
          f"seed {args.seed}: long-run coverage\n")
    print(format_table(results), end="")
    for r in results:
        print(f"{r['scenario']}: worst stream |miss rate - alpha| = {r['aci_worst_stream_gap']:.4f} "
              f"(ACI bound {r['aci_bound']:.4f})")
    return 0
