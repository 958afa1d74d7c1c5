"""Retrieval speed, measured side by side in one run.

Rows (each says which way its ratio reads):

1. **BM25 per query** (tokenise, score, top 100): the embedded backend (bm25s) against
   ``rank_bm25.BM25Okapi.get_scores`` + ``argpartition`` on the same tokenised corpus
   (the QMSum validation chunks when the split is present, else a generated Zipfian
   corpus).  ratio = baseline time / ours; target >= 50x.
2. **Dense exact search**, 1,600 queries over 200,000 x 384 unit vectors, top 100: the
   backend's search (batched matmul, exact tie handling, result lists) against a bare
   ``Q @ V.T`` + ``argpartition`` + sort of the top k in the same batches.
   ratio = ours / baseline; target <= 2.
3. **Hybrid retrieval per query** (both legs, RRF fusion, size 48): on the QMSum
   validation split through ``harness bench`` with cached MiniLM embeddings (the first
   run fills the cache and is not timed), and on a synthetic meeting corpus of >= 100,000
   chunks from the generator, where the dense vectors are seeded random unit vectors
   (retrieval cost does not depend on their values; embedding 100k texts with MiniLM
   would take minutes per fresh machine).  ms per query = retrieval wall time / queries;
   target <= 5.  The generated corpus is kept under the embedding cache directory
   (``bench-synthetic/``) and reused by later runs.
4. **MiniLM embedding rate** through the encoder and a cold embedding cache against the
   raw ``SentenceTransformer.encode`` call on the same texts.  ratio = ours / raw rate;
   target >= 0.9.

``--quick`` shrinks every size (a smoke run; its ratios are indicative only).
"""

from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path

import numpy as np

from benchmarks import qmsum_val, row

SEED = 20260812


def _zipf_corpus(rng: random.Random, docs: int, queries: int):
    vocab = [f"w{i}" for i in range(20_000)]
    weights = [1.0 / (i + 1) for i in range(len(vocab))]
    texts = [" ".join(rng.choices(vocab, weights, k=rng.randint(5, 40))) for _ in range(docs)]
    qs = [" ".join(rng.choices(vocab[:5000], k=rng.randint(3, 8))) for _ in range(queries)]
    return texts, qs


# --------------------------------------------------------------------------- 1. BM25


def bench_bm25(quick: bool) -> dict:
    from rank_bm25 import BM25Okapi

    from harness.retrieval.backends.base import IndexDoc, SearchQuery
    from harness.retrieval.backends.embedded import EmbeddedBackend

    rng = random.Random(SEED)
    n_docs, n_queries = (10_000, 40) if quick else (20_000, 237)
    source = "generated Zipfian corpus"
    val = qmsum_val()
    if val is not None:
        from ingestion import load_corpus
        from ingestion.chunking import chunk_corpus

        corpus = load_corpus(f"qmsum:{val}")
        texts = [c.text for c in chunk_corpus(corpus)][:n_docs]
        queries = [q.text for q in corpus.rank_queries()][:n_queries]
        source = "QMSum validation chunks"
    else:
        texts, queries = _zipf_corpus(rng, n_docs, n_queries)
    backend = EmbeddedBackend(progress=False)
    backend.index([IndexDoc(f"d_{i}", "d", t, t) for i, t in enumerate(texts)], ["bm25"])
    tokenizer = backend.tokenizer
    baseline = BM25Okapi([tokenizer(t) or [""] for t in texts])
    k = 100

    def ours():
        for i, q in enumerate(queries):
            backend.search("bm25", [SearchQuery(f"q{i}", q)], k)

    def theirs():
        for q in queries:
            scores = baseline.get_scores(tokenizer(q))
            top = np.argpartition(-scores, min(k, len(scores) - 1))[:k]
            top[np.argsort(-scores[top], kind="stable")]

    ours(), theirs()
    t_ours, t_theirs = float("inf"), float("inf")
    for _ in range(2 if quick else 3):
        started = time.perf_counter()
        ours()
        t_ours = min(t_ours, time.perf_counter() - started)
        started = time.perf_counter()
        theirs()
        t_theirs = min(t_theirs, time.perf_counter() - started)
    per_ours = t_ours / len(queries) * 1000
    per_theirs = t_theirs / len(queries) * 1000
    ratio = per_theirs / per_ours
    return row(f"BM25 per query vs rank_bm25 ({len(texts)} docs, {source}; x faster)",
                round(per_ours, 4), round(per_theirs, 3), "ms/query", ratio, 50.0, ratio >= 50)


# --------------------------------------------------------------------------- 2. dense


class _LookupEncoder:
    """Query vectors from a table: the benchmark times search, not embedding."""

    label = "random/unit-vectors@000000000000"

    def __init__(self, table):
        self.table = table

    def encode_queries(self, texts):
        return np.stack([self.table[t] for t in texts])


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    out = rng.standard_normal((n, dim), dtype=np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def bench_dense(quick: bool) -> dict:
    from harness.retrieval.backends.base import IndexDoc, SearchQuery
    from harness.retrieval.backends.embedded import DENSE_BATCH, EmbeddedBackend

    n_docs, n_queries, dim, k = (50_000, 400, 384, 100) if quick else (200_000, 1600, 384, 100)
    rng = np.random.default_rng(SEED)
    vectors = _unit(rng, n_docs, dim)
    qvecs = _unit(rng, n_queries, dim)
    table = {f"q{i}": qvecs[i] for i in range(n_queries)}
    backend = EmbeddedBackend(encoder=_LookupEncoder(table), progress=False)
    backend.index([IndexDoc(f"f{i // 100:05d}_{i % 100}", f"f{i // 100:05d}", "", "")
                   for i in range(n_docs)], [])
    backend.load_vectors(vectors, [_LookupEncoder.label] * n_docs)
    queries = [SearchQuery(q, q) for q in table]
    backend.prepare_queries(queries)

    def ours():
        backend.search("dense", queries, k)

    def bare():
        for start in range(0, n_queries, DENSE_BATCH):
            scores = qvecs[start:start + DENSE_BATCH] @ vectors.T
            part = np.argpartition(-scores, k, axis=1)[:, :k]
            vals = np.take_along_axis(scores, part, axis=1)
            np.take_along_axis(part, np.argsort(-vals, axis=1), axis=1)

    ours(), bare()
    t_ours, t_bare = float("inf"), float("inf")
    for _ in range(2 if quick else 3):
        started = time.perf_counter()
        ours()
        t_ours = min(t_ours, time.perf_counter() - started)
        started = time.perf_counter()
        bare()
        t_bare = min(t_bare, time.perf_counter() - started)
    ratio = t_ours / t_bare
    return row(f"dense exact search, {n_queries} q x {n_docs} x {dim}, top {k} vs bare numpy "
                "matmul + argpartition (x slower)", round(t_ours, 3), round(t_bare, 3), "s",
                ratio, 2.0, ratio <= 2)


# --------------------------------------------------------------------------- 3. hybrid

#: throughput rows retrieve in batches (per-query cost = wall time / queries)
BATCH = 64


def _hybrid_qmsum(quick: bool) -> dict:
    from harness.pipeline.config import ArmConfig
    from harness.pipeline.runner import run_arm

    val = qmsum_val()
    label = "hybrid rrf-60 per query, QMSum validation split, cached MiniLM embeddings"
    if val is None:
        return row(label + " (skipped: split not found)", None, None, "ms/query", None, 5.0,
                    None)
    spec = f"qmsum:{val / 'data' / 'Committee'}" if quick else f"qmsum:{val}"
    with tempfile.TemporaryDirectory() as tmp:
        cfg = ArmConfig(corpus_specs=(spec,), out=str(Path(tmp) / "warm"), progress=False,
                        query_batch=BATCH)
        run_arm(cfg)  # fills the embedding cache when it is cold; not timed
        cfg = ArmConfig(corpus_specs=(spec,), out=str(Path(tmp) / "timed"), progress=False,
                        query_batch=BATCH)
        outcome = run_arm(cfg)
    info = outcome.runinfo
    n = info["retrieval_latency_ms"]["queries"]
    per_query = info["phases"]["retrieval_seconds"] / n * 1000
    assert info["embedding"]["texts_embedded"] == 0, "the timed run must be fully cached"
    scope = "Committee domain" if quick else "all domains"
    return row(f"{label} ({scope}, {outcome.metrics['index']['documents']} chunks, {n} "
                f"queries, batches of {BATCH})", round(per_query, 3), None, "ms/query", None, 5.0,
                per_query <= 5)


def _hybrid_synthetic(quick: bool) -> dict:
    from harness.retrieval.backends.embedded import EmbeddedBackend
    from harness.pipeline.config import ArmConfig
    from harness.retrieval.prepared.prepare import index_docs, prepare_corpus, search_queries
    from harness.pipeline.runner import relevance_policy, retrieve_queries
    from harness.retrieval.embeddings.cache import default_cache_dir
    from ingestion import load_corpus
    from ingestion.synthetic import generate

    meetings = 150 if quick else 1450
    folder = default_cache_dir() / "bench-synthetic" / f"seed{SEED}-m{meetings}"
    if not (folder / "manifest.json").is_file():
        generate(SEED, meetings, folder)
    corpus = load_corpus(f"synthetic:{folder}")
    cfg = ArmConfig(corpus_specs=(f"synthetic:{folder}",), out=str(folder / "unused"),
                    progress=False, query_batch=BATCH)
    prepared = [prepare_corpus(corpus, "chunk", relevance_policy(cfg), cfg.max_words)]
    docs = index_docs(prepared, embed_header=False)
    queries = search_queries(prepared, gold_scope=False)
    rng = np.random.default_rng(SEED)
    qvecs = _unit(rng, len(queries), 384)
    table = {q.text: qvecs[i] for i, q in enumerate(queries)}
    backend = EmbeddedBackend(encoder=_LookupEncoder(table), progress=False)
    backend.index(docs, ["bm25"])
    backend.load_vectors(_unit(rng, len(docs), 384), [_LookupEncoder.label] * len(docs))
    backend.prepare_queries(queries)
    doc_file = {d.doc_id: d.file_id for d in docs}
    doc_text = {d.doc_id: d.text for d in docs}
    retrieve_queries(cfg, backend, queries[:16], doc_file, doc_text, None)  # warm-up
    started = time.perf_counter()
    retrieve_queries(cfg, backend, queries, doc_file, doc_text, None)
    per_query = (time.perf_counter() - started) / len(queries) * 1000
    return row(f"hybrid rrf-60 per query, synthetic corpus ({len(docs)} chunks, "
                f"{len(queries)} queries in batches of {BATCH}; random 384-d vectors)", round(per_query, 3),
                None, "ms/query", None, 5.0, per_query <= 5)


# --------------------------------------------------------------------------- 4. embedding


def bench_embedding(quick: bool) -> dict:
    from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
    from harness.retrieval.embeddings.models import load_encoder
    from harness.retrieval.embeddings.profiles import resolve_profile

    n = 256 if quick else 2048
    rng = random.Random(SEED)
    val = qmsum_val()
    if val is not None:
        from ingestion import load_corpus
        from ingestion.chunking import chunk_corpus

        pool = sorted({c.text for c in chunk_corpus(load_corpus(f"qmsum:{val}"))})
        texts = rng.sample(pool, min(n, len(pool)))
    else:
        texts, _ = _zipf_corpus(rng, n, 0)
    encoder = load_encoder(resolve_profile(None))
    encoder.model.encode(texts[:32], batch_size=64)  # warm
    t_ours, t_raw = float("inf"), float("inf")
    for _ in range(2 if quick else 3):  # alternated, best of each: the machine is shared
        with tempfile.TemporaryDirectory() as tmp, EmbeddingCache(tmp) as cache:
            cached = CachedEncoder(encoder, cache, progress=False)
            started = time.perf_counter()
            cached.encode_documents(texts)
            t_ours = min(t_ours, time.perf_counter() - started)
            if cached.stats.block()["texts_embedded"] != len(set(texts)):
                raise RuntimeError("the timed encoder+cache pass did not embed every text")
        started = time.perf_counter()
        encoder.model.encode(texts, batch_size=encoder.batch_size, convert_to_numpy=True,
                             normalize_embeddings=True, show_progress_bar=False)
        t_raw = min(t_raw, time.perf_counter() - started)
    ours_rate, raw_rate = len(texts) / t_ours, len(texts) / t_raw
    ratio = ours_rate / raw_rate
    return row(f"MiniLM embedding rate, encoder + cold cache vs raw encode ({len(texts)} "
                "texts; x of raw rate)", round(ours_rate, 1), round(raw_rate, 1), "texts/s",
                ratio, 0.9, ratio >= 0.9)


def run(quick: bool) -> list[dict]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return [bench_bm25(quick), bench_dense(quick), _hybrid_qmsum(quick),
            _hybrid_synthetic(quick), bench_embedding(quick)]
