"""``python -m ingestion fetch``: download, register or verify corpora (see ingestion.fetch)."""

from __future__ import annotations

HELP = "download corpora into a cache with a checksum manifest; --verify offline; --from-dir"


def add_arguments(p) -> None:
    p.add_argument("--corpus", nargs="+", action="extend", default=[], metavar="NAME",
                   help="registered source names (python -m ingestion sources lists them)")
    p.add_argument("--dest", default=None,
                   help="cache directory (default: $INGESTION_DATA_DIR or ~/.cache/retrieval-eval/corpora)")
    p.add_argument("--accept-noncommercial", action="store_true",
                   help="allow tier-B sources (non-commercial, research-only, unknown licence)")
    p.add_argument("--verify", action="store_true",
                   help="offline: re-hash everything in the manifest (or the named corpora)")
    p.add_argument("--from-dir", default=None, metavar="PATH",
                   help="register a local copy of the one named corpus after checking its layout")
    p.add_argument("--timeout", type=float, default=60.0, help="network timeout in seconds")


def run(args) -> int:
    from ingestion import fetch as f

    dest = args.dest or f.default_dest()
    if args.verify:
        problems, verified = f.verify(dest, args.corpus or None)
        for line in verified:
            print(line)
        for line in problems:
            print(f"MISMATCH {line}")
        print(f"{len(verified)} verified, {len(problems)} problem(s) in {dest}")
        return 1 if problems else 0
    if args.from_dir:
        if len(args.corpus) != 1:
            raise f.FetchError("--from-dir registers exactly one source: give one --corpus NAME")
        entry = f.register_dir(args.corpus[0], args.from_dir, dest,
                               accept_noncommercial=args.accept_noncommercial)
        print(f"registered {entry['source']} ({entry['layout']}, {entry['files']} files, "
              f"tier {entry['tier']}) sha256 {entry['sha256']}")
        return 0
    from pathlib import Path

    from harness.core.sources import SOURCES

    for entry in f.fetch(args.corpus, dest, accept_noncommercial=args.accept_noncommercial,
                         timeout=args.timeout):
        print(f"{entry['source']}/{entry['filename']}: {entry['size']} bytes, tier "
              f"{entry['tier']}, sha256 {entry['sha256']} ({entry['sha256_origin']})")
        layout = SOURCES[entry["source"]].layout if entry["source"] in SOURCES else "any"
        if entry["extracted"] and layout != "any":
            print(f"  load with: {layout}:{Path(dest) / entry['extracted']}")
    print(f"manifest: {dest}/{f.MANIFEST_NAME}")
    return 0
