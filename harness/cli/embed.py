"""``python -m harness embed --corpus KIND:PATH --model NAME --push URL``: embed a corpus's
chunk texts and queries (through the embedding cache) and push the vectors the team store
lacks (:mod:`harness.retrieval.embeddings.shared`), so that ``harness bench --vectors URL``
elsewhere pulls them instead of embedding.

The texts are exactly those a ``harness bench`` dense leg embeds with the same corpus,
``--max-words``, ``--embed-header`` and prefixes.  Pushing again writes nothing.  Exit 0
done, 2 bad input, 1 the store cannot be reached.
"""

from __future__ import annotations

HELP = ("embed a corpus's chunk texts and queries and push the vectors a team store lacks "
        "(content-addressed; pulled by `harness bench --vectors URL`)")


def add_arguments(p) -> None:
    from harness.retrieval.embeddings.devices import DEVICE_HELP

    p.add_argument("--corpus", action="append", required=True, metavar="KIND:PATH",
                   help="qmsum:PATH | beir:PATH | trec:PATH | synthetic:PATH (repeatable)")
    p.add_argument("--model", default=None, metavar="NAME|PATH",
                   help="embedding model profile or local directory (as harness bench)")
    p.add_argument("--dim", type=int, default=None)
    p.add_argument("--query-prefix", default=None)
    p.add_argument("--document-prefix", default=None)
    p.add_argument("--embed-header", action="store_true")
    p.add_argument("--max-words", type=int, default=200, help="chunk size cap in words")
    p.add_argument("--device", default="auto", metavar="auto|cpu|cuda[:N]", help=DEVICE_HELP)
    p.add_argument("--cache-dir", default=None,
                   help="embedding cache directory (default: $HARNESS_CACHE or ./cache)")
    p.add_argument("--push", required=True, metavar="URL",
                   help="the team store: s3://bucket/prefix, file:///path or a directory")
    p.add_argument("--endpoint-url", default=None, help="S3-compatible endpoint")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def run(args) -> int:
    import sys

    from harness.core.store import StoreError, open_store
    from harness.pipeline.config import ArmConfig
    from harness.pipeline.runner import build_encoder, relevance_policy
    from harness.retrieval.embeddings.cache import text_sha256
    from harness.retrieval.embeddings.shared import SharedVectors
    from harness.retrieval.prepared.prepare import index_docs, search_queries
    from harness.retrieval.prepared.prepared_cache import prepare_run

    cfg = ArmConfig(corpus_specs=tuple(args.corpus), out="", mode="vector", model=args.model,
                    dim=args.dim, query_prefix=args.query_prefix,
                    document_prefix=args.document_prefix, embed_header=args.embed_header,
                    max_words=args.max_words, cache_dir=args.cache_dir, device=args.device,
                    progress=not args.no_progress)
    store = open_store(args.push, endpoint_url=args.endpoint_url)
    prepared, _ = prepare_run(cfg, None, relevance_policy(cfg))
    documents = list(index_docs(prepared, cfg.embed_header).embedded_text)
    queries = sorted({q.text for q in search_queries(prepared, False)})
    encoder = build_encoder(cfg)
    enc = encoder.encoder
    digest = getattr(enc, "embedding_sha256", enc.weights_sha256)
    shared = SharedVectors(store)
    pushed = 0
    try:
        shared.index(digest)  # the store answers before anything is embedded
        for texts, read, encode in (
                (documents, enc.document_texts(documents), encoder.encode_documents),
                (queries, enc.query_texts(queries), encoder.encode_queries)):
            shas = [text_sha256(t) for t in read]
            pushed += shared.push(enc.model_id, digest, shas, encode(texts))
    except StoreError as exc:
        print(f"error: {exc}; what was pushed stays (push again to complete it)",
              file=sys.stderr)
        return 1
    finally:
        encoder.cache.close()
    stats = encoder.stats.block()
    print(f"{enc.label}: {len(documents)} chunks and {len(queries)} queries "
          f"({stats['texts_embedded']} embedded here, {stats['texts_from_cache']} from the "
          f"cache); pushed {pushed} vectors to {store.url} (the rest were there)")
    return 0
