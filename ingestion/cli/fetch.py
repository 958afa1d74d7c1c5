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


#: files that did not match, named one per line before "and N more"
LISTED = 50


def pins_report(entry: dict) -> list[str]:
    """What the pinned checksums said about a ``--from-dir`` copy: how many files matched,
    which did not, and the licence that follows."""
    from harness.core.sources import SOURCES

    pins = entry.get("pins")
    source = SOURCES.get(entry["source"])
    if pins is None:
        if source is not None and entry["tier"] == "B" and source.licence != entry["licence"]:
            return [f"no pinned checksums for {entry['source']}: a copy registered from a "
                    f"directory is not attributed {source.licence} (tier B); its own licence "
                    "file, or a verified download, can attribute it"]
        return []
    total = pins["matched"] + len(pins["unmatched"])
    head = (f"pinned checksums of upstream revision {pins['revision'][:12]}: {pins['matched']} "
            f"of {total} files match")
    if not pins["unmatched"]:
        return [f"{head}; licence {entry['licence']} (tier {entry['tier']})"]
    lines = [f"{head}; {len(pins['unmatched'])} do not (edited, or not upstream's), so the copy "
             "is tier B, licence unknown, and so is any corpus loaded with them:"]
    lines += [f"  {name}" for name in pins["unmatched"][:LISTED]]
    if len(pins["unmatched"]) > LISTED:
        lines.append(f"  ... and {len(pins['unmatched']) - LISTED} more (all listed in the "
                     "manifest)")
    return lines


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
        for line in pins_report(entry):
            print(line)
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
