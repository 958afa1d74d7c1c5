"""``python -m harness submit DIR... --to URL``: deliver results directories (or claim
documents) to the team's shared store (:mod:`harness.core.submissions`).

Needs write access to the store only, never the warehouse or its credentials.  Each
directory becomes one immutable submission named by its content digest; submitting the
same directory again changes nothing.  Exit 0 when every one is in the store, 2 for a
path that cannot be submitted, 1 when the store cannot be reached (nothing is half-visible:
a submission appears only when its marker, written last, is there).
"""

from __future__ import annotations

HELP = ("deliver results directories (or claim documents) to a shared store: s3://bucket/prefix "
        "or a shared directory (one immutable submission each, named by its content digest)")


def add_arguments(p) -> None:
    p.add_argument("paths", nargs="+", metavar="DIR",
                   help="results directories written by the harness, or claim documents")
    p.add_argument("--to", required=True, metavar="URL", dest="url",
                   help="the store: s3://bucket/prefix (credentials and region from the "
                        "standard AWS variables), file:///path or a directory")
    p.add_argument("--endpoint-url", default=None,
                   help="S3-compatible endpoint (default: $AWS_ENDPOINT_URL_S3, "
                        "$AWS_ENDPOINT_URL, else AWS)")


def run(args) -> int:
    import sys

    from harness.core.store import StoreError, open_store
    from harness.core.submissions import SubmissionRefused, listing_of, submit

    for path in args.paths:  # every path is checked before anything is sent
        listing_of(path)
    store = open_store(args.url, endpoint_url=args.endpoint_url)
    status = 0
    for path in args.paths:
        try:
            done = submit(path, store)
        except SubmissionRefused as exc:
            print(f"error: {exc}", file=sys.stderr)
            status = status or 2
            continue
        except StoreError as exc:
            print(f"error: {exc}; nothing of {path} is visible there (retry: a resubmission "
                  "completes it)", file=sys.stderr)
            return 1
        state = "submitted" if done.created else "already in the store (nothing to do)"
        print(f"{state}: {path} -> {store.url} submission {done.digest} ({done.files} files)")
    return status
