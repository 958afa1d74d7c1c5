"""``harness bench --backend opensearch`` flags (imports no client library).

``options(args, chosen)`` returns the :class:`~.backend.OpenSearchBackend` keyword arguments
when the backend is chosen, and refuses any of these flags given to another backend.
"""

from __future__ import annotations

from harness.core import settings

DENSE_MODES = ("hnsw", "exact")
FUSION_SITES = ("harness", "server")
#: the HNSW beam at query time; top-48 overlap with exact search measured in docs/opensearch.md
DEFAULT_EF_SEARCH = 512
DEFAULT_SETTLE_TIMEOUT = 60.0

#: flag -> (argparse dest, constructor keyword)
FLAGS = {
    "--opensearch-url": ("opensearch_url", "url"),
    "--opensearch-dense": ("opensearch_dense", "dense_search"),
    "--opensearch-ef-search": ("opensearch_ef_search", "ef_search"),
    "--opensearch-fusion": ("opensearch_fusion", "fusion"),
    "--opensearch-analyzer": ("opensearch_analyzer", "analyzer"),
    "--opensearch-index-prefix": ("opensearch_index_prefix", "index_prefix"),
    "--opensearch-rebuild": ("opensearch_rebuild", "rebuild"),
    "--opensearch-timeout": ("opensearch_timeout", "timeout"),
    "--opensearch-retries": ("opensearch_retries", "retries"),
    "--opensearch-settle-timeout": ("opensearch_settle_timeout", "settle_timeout"),
    "--opensearch-max-response-bytes": ("opensearch_max_response_bytes", "max_response_bytes"),
}


def add_arguments(group) -> None:
    from harness.retrieval.backends.http_options import byte_count
    from harness.retrieval.backends.opensearch.mapping import (
        ANALYZERS,
        DEFAULT_ANALYZER,
        DEFAULT_PREFIX,
    )

    group.add_argument("--opensearch-url", default=None, metavar="URL",
                       help="the node or cluster, http://HOST:PORT (default: $OPENSEARCH_URL)")
    group.add_argument("--opensearch-dense", choices=DENSE_MODES, default=None,
                       help="dense leg: hnsw (the Lucene graph, default) or exact (a k-NN "
                            "script over every document: what HNSW recall is measured against)")
    group.add_argument("--opensearch-ef-search", type=int, default=None, metavar="N",
                       help=f"HNSW beam width at query time (default {DEFAULT_EF_SEARCH})")
    group.add_argument("--opensearch-fusion", choices=FUSION_SITES, default=None,
                       help="hybrid: fuse in the harness (default; the same arm as embedded) or "
                            "on the node with a neural-search pipeline (a separate arm)")
    group.add_argument("--opensearch-analyzer", choices=ANALYZERS, default=None,
                       help=f"text analyzer (default {DEFAULT_ANALYZER}: the embedded "
                            "tokenizer's rules as far as OpenSearch allows)")
    group.add_argument("--opensearch-index-prefix", default=None, metavar="PREFIX",
                       help=f"index names are PREFIX-<digest> (default {DEFAULT_PREFIX})")
    group.add_argument("--opensearch-rebuild", action="store_true", default=None,
                       help="delete and reload this run's index when one of this product "
                            "already exists under its name (never another product's index)")
    group.add_argument("--opensearch-timeout", type=float, default=None, metavar="SECONDS",
                       help="each request's deadline: the whole answer within this many "
                            "seconds (default 30); timeouts and HTTP 429 are retried with "
                            "backoff and counted in runinfo.json")
    group.add_argument("--opensearch-max-response-bytes", type=byte_count, default=None,
                       metavar="BYTES",
                       help="the most one answer of the node may hold; larger fails the run, "
                            "exit 5 (default 256M; suffixes K, M, G)")
    group.add_argument("--opensearch-retries", type=int, default=None, metavar="N",
                       help="retries per request after a timeout or HTTP 429 (default 5)")
    group.add_argument("--opensearch-settle-timeout", type=float, default=None,
                       metavar="SECONDS",
                       help=f"longest wait for a settled index before refusing to measure "
                            f"(default {DEFAULT_SETTLE_TIMEOUT:g})")


def options(args, chosen: bool) -> dict:
    given = {flag: getattr(args, dest, None) for flag, (dest, _) in FLAGS.items()}
    if not chosen:
        bad = sorted(flag for flag, value in given.items() if value is not None)
        if bad:
            raise ValueError(f"{', '.join(bad)} apply to --backend opensearch only")
        return {}
    from harness.retrieval.backends.opensearch.client import check_url

    out = {kw: given[flag] for flag, (_, kw) in FLAGS.items() if given[flag] is not None}
    out["url"] = check_url(out.get("url") or settings.opensearch_url())
    if out.get("timeout") is not None:
        from harness.retrieval.backends.retry import check_timeout

        check_timeout(out["timeout"], "--opensearch-timeout")
    if out.get("dense_search") is not None and args.mode == "bm25":
        raise ValueError("--opensearch-dense needs a dense leg (--mode vector or hybrid)")
    if out.get("fusion") is not None and args.mode != "hybrid":
        raise ValueError("--opensearch-fusion applies to --mode hybrid only")
    ef = out.get("ef_search")
    if ef is not None and (ef < 1 or ef > 10_000):
        raise ValueError(f"--opensearch-ef-search must be between 1 and 10000, got {ef}")
    return out
