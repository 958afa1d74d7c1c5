"""The OpenSearch backend beside the embedded one, measured in the same run.

The node is ``$OPENSEARCH_URL`` when set, else a single node started here
(``tests.servers.opensearch``, 2.19.1 from Maven Central); without Java or the built node
every row says why it was skipped.  Rows:

1. **node start to yellow** (s; target <= 60): the started node only.
2. **bulk indexing rate** (documents/s, load only; refresh, force-merge and settling are
   reported beside it): text only, and with 384-d MiniLM vectors (one per distinct vector).
3. **query latency p50 / p95** per leg through the harness's own retrieval loop (one query
   per call, as ``harness bench`` measures it) at concurrency 1 and 4: bm25, vector HNSW,
   vector exact, hybrid RRF-60 fused in the harness, hybrid RRF-60 fused by the node.
   ratio = OpenSearch p50 / embedded p50 (the embedded backend has no server-side fusion:
   that row compares with the embedded hybrid).  Goal for hybrid: p50 <= 20 ms.
4. **HNSW top-48 overlap with exact search** at the default ``ef_search`` (target >= 0.99),
   one vector per distinct vector, and with a vector on every document.

On QMSum val (MiniLM vectors from the embedding cache; embedded once when it is cold) and,
without ``--quick``, on the >= 100,000-chunk synthetic corpus ``bench_retrieval`` generates,
with seeded random 384-d vectors (one per distinct text) and 300 of its queries; there the
node-fused arm is left out (its second, every-document vector index took another ~10
minutes to load on two cores).  Both indexes are reloaded on every run (the load is what is
measured): the full run takes about half an hour on two cores, ``--quick`` two minutes.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import numpy as np

SEED = 20260812
REPO = Path(__file__).resolve().parents[1]
HYBRID_GOAL_MS = 20.0
TOP = 48
SYNTHETIC_QUERIES = 300


def _row(label, ours, baseline, unit, ratio, target, ok) -> dict:
    return {"benchmark": label, "ours": ours, "baseline": baseline, "unit": unit,
            "ratio": None if ratio is None else round(ratio, 3), "target": target, "ok": ok}


def _skip(reason: str) -> list[dict]:
    return [_row(f"OpenSearch backend (skipped: {reason})", None, None, "-", None, None, None)]


class _TextSeededEncoder:
    """Unit vectors seeded by each text's digest: equal texts, equal vectors (the
    retrieval cost does not depend on the values; embedding 100k texts would)."""

    label = "random/text-seeded-unit@000000000000"
    dimension = 384

    def _one(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dimension).astype(np.float32)
        return v / np.linalg.norm(v)

    def encode_documents(self, texts):
        return np.stack([self._one(t) for t in texts])

    def encode_queries(self, texts):
        return np.stack([self._one("query: " + t) for t in texts])


def docs_and_queries(spec: str, max_words: int):
    """What a bench run over ``spec`` indexes and asks (chunks, judgeable queries)."""
    from harness.pipeline.config import ArmConfig
    from harness.retrieval.prepared.prepare import index_docs, prepare_corpus, search_queries
    from harness.pipeline.runner import relevance_policy
    from ingestion import load_corpus

    cfg = ArmConfig(corpus_specs=(spec,), out="unused")
    prepared = [prepare_corpus(load_corpus(spec), "chunk", relevance_policy(cfg), max_words)]
    return index_docs(prepared, False), search_queries(prepared, False)


def _node():
    """``(url, node or None, startup seconds or None, why not)``."""
    url = os.environ.get("OPENSEARCH_URL")
    if url:
        return url, None, None, ""
    from tests.servers import opensearch

    ok, why = opensearch.available()
    if not ok:
        return None, None, None, why
    node = opensearch.start_node(timeout=opensearch.START_TIMEOUT)
    return node.url, node, node.startup_seconds, ""


def _latency(backend, queries, mode: str, workers: int) -> dict:
    from harness.pipeline.config import ArmConfig
    from harness.pipeline.latency import latency_block
    from harness.pipeline.runner import retrieve_queries

    cfg = ArmConfig(corpus_specs=("unused",), out="unused", mode=mode, workers=workers,
                    progress=False)
    retrieve_queries(cfg, backend, queries[:8], {}, {}, None)  # warm the connections and JIT
    _, _, batches = retrieve_queries(cfg, backend, queries, {}, {}, None)
    block = latency_block(batches, workers, "one query per call")
    return {"p50": block["p50"], "p95": block["p95"]}


def _overlap(exact, approx) -> float:
    got = []
    for query_id, want in exact.items():
        kth = want[-1][1]
        got.append(sum(1 for _, s in approx[query_id][:TOP] if s >= kth - 1e-6) / len(want))
    return float(np.mean(got))


def _corpus(name: str, spec: str, docs, queries, encoder, url: str, quick: bool,
            server_side: bool = True) -> list[dict]:
    from harness.retrieval.backends.embedded import EmbeddedBackend
    from harness.retrieval.backends.opensearch.backend import OpenSearchBackend

    rows = []
    tag = f"{name}, {len(docs)} chunks, {len(queries)} queries"
    prefix = "bench"
    # text only: a fresh index each run, so the load is measured
    text = OpenSearchBackend(url=url, progress=False, index_prefix=prefix, rebuild=True)
    text.index(docs, ["bm25"])
    load = text.run_stats()["opensearch"]
    rows.append(_row(f"OpenSearch bulk load, text only ({tag}; refresh+merge "
                     f"{load['phases']['merge_seconds']:.1f} s, settle "
                     f"{load['phases']['settle_seconds']:.1f} s)",
                     round(load["load"]["docs_per_second"], 1), None, "docs/s", None, None, None))
    text.close()

    hybrid = OpenSearchBackend(url=url, encoder=encoder, progress=False, index_prefix=prefix,
                               rebuild=True)
    hybrid.index(docs, ["bm25", "dense"])
    load = hybrid.run_stats()["opensearch"]
    rows.append(_row(f"OpenSearch bulk load, with {encoder.dimension}-d vectors ({tag}; "
                     f"{hybrid.vectors_held} distinct vectors held; refresh+merge "
                     f"{load['phases']['merge_seconds']:.1f} s)",
                     round(load["load"]["docs_per_second"], 1), None, "docs/s", None, None, None))
    server = None
    if server_side:  # a second index: a vector on every document
        server = OpenSearchBackend(url=url, encoder=encoder, progress=False,
                                   index_prefix=prefix, fusion="server")
        server.index(docs, ["bm25", "dense"])
    embedded = EmbeddedBackend(encoder=encoder, progress=False)
    embedded.index(docs, ["bm25", "dense"])
    for backend in (hybrid, server, embedded):
        if backend is not None:
            backend.prepare_queries(queries)

    hybrid.dense_search = "exact"
    exact = hybrid.search("dense", queries, TOP)
    hybrid.dense_search = "hnsw"
    distinct = _overlap(exact, hybrid.search("dense", queries, TOP))
    every = "" if server is None else \
        f"; a vector on every document: {_overlap(exact, server.search('dense', queries, TOP)):.4f}"
    rows.append(_row(f"HNSW top-{TOP} overlap with exact, ef_search {hybrid.ef_search}, one "
                     f"vector per distinct vector ({name}{every})", round(distinct, 4), None,
                     "share", None, 0.99, distinct >= 0.99))

    cases = [("bm25", "bm25", hybrid, "harness"), ("vector", "vector HNSW", hybrid, "hnsw"),
             ("vector", "vector exact", hybrid, "exact"),
             ("hybrid", "hybrid rrf-60 (harness fuses)", hybrid, "hnsw")]
    if server is not None:
        cases.append(("hybrid", "hybrid rrf-60 (node fuses)", server, "hnsw"))
    for workers in ((1,) if quick else (1, 4)):
        base = {mode: _latency(embedded, queries, mode, workers)
                for mode in ("bm25", "vector", "hybrid")}
        for mode, label, backend, dense in cases:
            if dense in ("hnsw", "exact"):
                backend.dense_search = dense
            got = _latency(backend, queries, mode, workers)
            backend.dense_search = "hnsw"
            goal = HYBRID_GOAL_MS if mode == "hybrid" else None
            rows.append(_row(
                f"{label} p50 at concurrency {workers}, OpenSearch vs embedded ({name}; p95 "
                f"{got['p95']:.1f} vs {base[mode]['p95']:.2f} ms)",
                round(got["p50"], 2), round(base[mode]["p50"], 3), "ms/query",
                got["p50"] / base[mode]["p50"], goal,
                None if goal is None else got["p50"] <= goal))
    for backend in (hybrid, server):
        if backend is not None:
            backend.close()
    return rows


def _qmsum(url: str, quick: bool) -> list[dict]:
    from benchmarks import qmsum_val
    from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache, default_cache_dir
    from harness.retrieval.embeddings.models import load_encoder
    from harness.retrieval.embeddings.profiles import resolve_profile
    val = qmsum_val()
    if val is None:
        return _skip("QMSum validation split not found")
    spec = f"qmsum:{val / 'data' / 'Committee'}" if quick else f"qmsum:{val}"
    docs, queries = docs_and_queries(spec, 200)
    cache = EmbeddingCache(default_cache_dir())
    encoder = CachedEncoder(load_encoder(resolve_profile(None)), cache, progress=True)
    try:
        return _corpus("QMSum val" + (" Committee" if quick else ""), spec, docs, queries,
                       encoder, url, quick)
    finally:
        cache.close()


def _synthetic(url: str) -> list[dict]:
    from harness.retrieval.embeddings.cache import default_cache_dir
    from ingestion.synthetic import generate

    folder = default_cache_dir() / "bench-synthetic" / f"seed{SEED}-m1450"
    if not (folder / "manifest.json").is_file():
        generate(SEED, 1450, folder)
    docs, queries = docs_and_queries(f"synthetic:{folder}", 200)
    return _corpus("synthetic", f"synthetic:{folder}", docs, queries[:SYNTHETIC_QUERIES],
                   _TextSeededEncoder(), url, False, server_side=False)


def run(quick: bool) -> list[dict]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    started = time.perf_counter()
    url, node, startup, why = _node()
    if url is None:
        return _skip(why)
    load = os.getloadavg()[0]
    rows = [_row(f"machine load average over 1 minute at the start ({os.cpu_count()} cores; "
                 "every latency below is measured under it)", round(load, 2), None, "runnable",
                 None, None, None)]
    try:
        if startup is not None:
            rows.append(_row("OpenSearch node start to yellow health (2.19.1, 1 GB heap)",
                             round(startup, 1), None, "s", None, 60.0, startup <= 60))
        rows += _qmsum(url, quick)
        if not quick:
            rows += _synthetic(url)
    finally:
        if node is not None:
            node.stop()
    rows.append(_row("OpenSearch benchmark wall time", round(time.perf_counter() - started, 1),
                     None, "s", None, None, None))
    return rows
