"""Run every benchmark module and print one table of side-by-side ratios."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time

import benchmarks


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--only", nargs="*", default=None, help="module names (e.g. bench_scoring)")
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    args = parser.parse_args(argv)
    names = sorted(m.name for m in pkgutil.iter_modules(benchmarks.__path__)
                   if m.name.startswith("bench_"))
    if args.only:
        names = [n for n in names if n in args.only]
    rows = []
    for name in names:
        module = importlib.import_module(f"benchmarks.{name}")
        started = time.perf_counter()
        print(f"== {name}", flush=True)
        for row in module.run(quick=args.quick):
            rows.append(row)
            print("   " + "  ".join(f"{k}={_fmt(v)}" for k, v in row.items()), flush=True)
        print(f"   ({time.perf_counter() - started:.1f} s)", flush=True)
    head = ["benchmark", "ours", "baseline", "unit", "ratio", "target", "ok"]
    print()
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(_fmt(row.get(k)) for k in head) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
