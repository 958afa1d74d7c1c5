"""``python -m ingestion sources``: the registry, one line per source (or JSON)."""

from __future__ import annotations

HELP = "list the registered sources with licence, tier and evidence"


def add_arguments(p) -> None:
    p.add_argument("--json", action="store_true", help="canonical JSON instead of a table")


def run(args) -> int:
    import dataclasses

    from harness.core.canonical import canonical_json
    from harness.core.sources import SOURCES
    from harness.core.tiers import source_tier

    if args.json:
        rows = {name: {**dataclasses.asdict(s), "tier": source_tier(s)} for name, s in SOURCES.items()}
        print(canonical_json(rows), end="")
        return 0
    for name in sorted(SOURCES):
        s = SOURCES[name]
        print(f"{name:24} {source_tier(s)}  {s.licence:34} {s.evidence}")
    return 0
