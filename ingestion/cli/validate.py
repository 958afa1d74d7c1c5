"""``python -m ingestion validate DIR``: run every validator check on a synthetic corpus."""

from __future__ import annotations

HELP = "re-derive every gold set of a synthetic corpus from its text; exit 1 on any failure"


def add_arguments(p) -> None:
    p.add_argument("path", help="synthetic corpus directory")


def run(args) -> int:
    from ingestion.synthetic.validate import CHECKS, validate

    failures = validate(args.path)
    for f in failures:
        print(f"FAIL [{f.check}] {f.message}")
    failed = sorted({f.check for f in failures})
    print(f"{len(CHECKS) - len(failed)}/{len(CHECKS)} checks passed"
          + (f"; failed: {failed}" if failed else ""))
    return 1 if failures else 0
