"""Smoke check of the assembled node with opensearch-py: analyzers, bulk load, BM25, k-NN (Lucene),
exact k-NN scripts, aggregations, and neural-search's hybrid query with its two processors.

    .venv/bin/python tools/opensearch-node/smoke.py [--url http://127.0.0.1:9200] [--docs 1000]

Without --url it starts a node (tests/servers/opensearch.py) and stops it at the end.  Every
check prints one line, OK or FAIL with the reason; the exit code is the number of failures.
Scores are compared with values computed here with numpy from the same vectors.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from opensearchpy import OpenSearch, helpers
from opensearchpy.exceptions import OpenSearchException

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.servers import opensearch as osnode  # noqa: E402

DIM = 8
INDEX = "smoke"
WORDS = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu "
         "running runs ran runner meeting meetings budget budgets").split()

failures = 0


def check(name: str, ok: bool, detail: object = "") -> None:
    global failures
    failures += 0 if ok else 1
    print(f"{'OK  ' if ok else 'FAIL'} {name}" + (f": {detail}" if detail != "" else ""), flush=True)


def attempt(name: str, fn):
    """Run fn(); print FAIL with the server's error when it raises."""
    try:
        return fn()
    except OpenSearchException as exc:
        info = getattr(exc, "info", None)
        reason = info.get("error", info) if isinstance(info, dict) else exc
        check(name, False, json.dumps(reason)[:600] if not isinstance(reason, str) else reason[:600])
    return None


def make_docs(n: int, rng: np.random.Generator):
    vecs = rng.normal(size=(n, DIM)).astype(np.float32)  # not normalised: inner products of both signs
    for i in range(n):
        words = rng.choice(WORDS, size=8)
        yield i, {"id": f"d{i:04d}", "cat": f"c{i % 7}",
                  "text_ws": " ".join(w.upper() if j % 3 == 0 else w for j, w in enumerate(words)),
                  "text_std": " ".join(words), "text_en": " ".join(words),
                  "vec_ip": vecs[i].tolist(), "vec_cos": vecs[i].tolist(), "vec_l2": vecs[i].tolist()}


def knn_method(space: str) -> dict:
    return {"type": "knn_vector", "dimension": DIM,
            "method": {"name": "hnsw", "engine": "lucene", "space_type": space,
                       "parameters": {"m": 16, "ef_construction": 100}}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url")
    ap.add_argument("--docs", type=int, default=1000)
    args = ap.parse_args()

    node = None
    if args.url is None:
        ok, why = osnode.available()
        if not ok:
            print(why, file=sys.stderr)
            return 1
        node = osnode.start_node(timeout=120)
        print(f"node {node.url} up in {node.startup_seconds:.1f} s", flush=True)
    url = args.url or node.url
    try:
        run(OpenSearch(hosts=[url], timeout=60), args.docs)
    finally:
        if node is not None:
            node.stop()
    print(f"{failures} failed")
    return failures


def run(client: OpenSearch, n_docs: int) -> None:
    rng = np.random.default_rng(0)
    docs = list(make_docs(n_docs, rng))
    vecs = np.array([d["vec_ip"] for _, d in docs], dtype=np.float32)
    if client.indices.exists(index=INDEX):
        client.indices.delete(index=INDEX)

    body = {
        "settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0, "refresh_interval": "-1",
                               "knn": True},
                     "analysis": {"analyzer": {"ws_lower": {"type": "custom", "tokenizer": "whitespace",
                                                            "filter": ["lowercase"]}}}},
        "mappings": {"properties": {
            "id": {"type": "keyword"}, "cat": {"type": "keyword"},
            "text_ws": {"type": "text", "analyzer": "ws_lower"},
            "text_std": {"type": "text", "analyzer": "standard"},
            "text_en": {"type": "text", "analyzer": "english"},
            "vec_ip": knn_method("innerproduct"), "vec_cos": knn_method("cosinesimil"),
            "vec_l2": knn_method("l2")}},
    }
    client.indices.create(index=INDEX, body=body)
    check("create index (custom/standard/english analyzers, 3 lucene knn_vector fields)", True)

    an = client.indices.analyze(index=INDEX, body={"analyzer": "ws_lower", "text": "Running MEETINGS"})
    check("analyze ws_lower", [t["token"] for t in an["tokens"]] == ["running", "meetings"],
          [t["token"] for t in an["tokens"]])
    an = client.indices.analyze(index=INDEX, body={"analyzer": "english", "text": "Running MEETINGS budgets"})
    check("analyze english (stemming)", [t["token"] for t in an["tokens"]] == ["run", "meet", "budget"],
          [t["token"] for t in an["tokens"]])

    t0 = time.monotonic()
    actions = ({"_index": INDEX, "_id": d["id"], "_source": d} for _, d in docs)
    ok_count = sum(1 for ok, _ in helpers.streaming_bulk(client, actions, chunk_size=500) if ok)
    t_bulk = time.monotonic() - t0
    client.indices.refresh(index=INDEX)
    client.indices.forcemerge(index=INDEX, max_num_segments=1)
    client.indices.refresh(index=INDEX)
    segs = client.indices.segments(index=INDEX)["indices"][INDEX]["shards"]["0"][0]["segments"]
    stats = client.indices.stats(index=INDEX)["indices"][INDEX]["primaries"]
    check(f"streaming_bulk {ok_count} docs in {t_bulk:.1f} s, refresh, force-merge",
          ok_count == n_docs and len(segs) == 1 and stats["docs"]["count"] == n_docs,
          {"segments": len(segs), "docs.count": stats["docs"]["count"],
           "docs.deleted": stats["docs"]["deleted"], "indexing.total": stats["indexing"]["index_total"]})

    # lexical
    r = client.search(index=INDEX, body={"query": {"match": {"text_en": "runs meeting"}}, "size": 5})
    check("match on the english analyzer ('runs meeting' -> run, meet)", r["hits"]["total"]["value"] > 0,
          f"{r['hits']['total']['value']} hits, top {r['hits']['hits'][0]['_score']:.4f}")
    r = client.search(index=INDEX, body={"query": {"match": {"text_ws": "ALPHA"}}, "size": 1})
    expect = sum("alpha" in d["text_std"].split() for _, d in docs)
    check("match on custom analyzer (case-folded)", r["hits"]["total"]["value"] == expect,
          f"{r['hits']['total']['value']} hits, expected {expect}")
    phrase = docs[0][1]["text_std"].split()[2:4]
    r = client.search(index=INDEX, body={"query": {"match_phrase": {"text_std": " ".join(phrase)}}, "size": 3})
    expect = sum(" ".join(phrase) in d["text_std"] for _, d in docs)
    check(f"match_phrase '{' '.join(phrase)}'", r["hits"]["total"]["value"] == expect,
          f"{r['hits']['total']['value']} hits, expected {expect}")
    r = client.search(index=INDEX, body={"size": 0, "aggs": {"cats": {"terms": {"field": "cat", "size": 10}}}})
    buckets = {b["key"]: b["doc_count"] for b in r["aggregations"]["cats"]["buckets"]}
    check("terms aggregation on keyword", buckets.get("c0") == len(range(0, n_docs, 7)), buckets)

    # k-NN approximate (lucene HNSW) vs exact numpy
    q = rng.normal(size=DIM).astype(np.float32)
    ip = vecs @ q
    cos = ip / (np.linalg.norm(vecs, axis=1) * np.linalg.norm(q))
    l2sq = ((vecs - q) ** 2).sum(axis=1)
    ids = np.array([d["id"] for _, d in docs])
    transforms = {
        "vec_ip": (ip, lambda s: np.where(s < 0, 1 / (1 - s), s + 1), "ip<0: 1/(1-ip); ip>=0: ip+1"),
        "vec_cos": (cos, lambda s: (1 + s) / 2, "(1+cos)/2"),
        "vec_l2": (-l2sq, lambda s: 1 / (1 - s), "1/(1+d^2)"),  # s = -d^2
    }
    for field, (raw, tf, formula) in transforms.items():
        r = attempt(f"knn {field}", lambda: client.search(index=INDEX, body={
            "size": 10, "query": {"knn": {field: {"vector": q.tolist(), "k": 10}}}}))
        if r is None:
            continue
        got = [(h["_id"], h["_score"]) for h in r["hits"]["hits"]]
        true_top = list(ids[np.argsort(-raw, kind="stable")[:10]])
        recall = len({i for i, _ in got} & set(true_top)) / 10
        idx = {d: k for k, d in enumerate(ids)}
        err = max(abs(s - float(tf(raw[idx[i]]))) for i, s in got)
        sample = [(i, round(float(raw[idx[i]]) if field != "vec_l2" else float(-raw[idx[i]]), 4), round(s, 4))
                  for i, s in got[:3]]
        check(f"knn {field}: score = {formula}", err < 1e-4 and recall >= 0.9,
              f"recall@10 {recall:.1f}, max |score - formula| {err:.2e}, (id, raw, score) {sample}")

    # exact k-NN: the k-NN plugin's scoring script, and painless functions
    all_ = {"match_all": {}}
    forms = [
        ("knn_score innerproduct", "vec_ip", {"source": "knn_score", "lang": "knn",
         "params": {"field": "vec_ip", "query_value": q.tolist(), "space_type": "innerproduct"}},
         ip, lambda s: np.where(s < 0, 1 / (1 - s), s + 1)),
        # on a lucene-engine field the script gives the same (1+cos)/2 as the ANN query
        ("knn_score cosinesimil", "vec_cos", {"source": "knn_score", "lang": "knn",
         "params": {"field": "vec_cos", "query_value": q.tolist(), "space_type": "cosinesimil"}},
         cos, lambda s: (1 + s) / 2),
        ("knn_score l2", "vec_l2", {"source": "knn_score", "lang": "knn",
         "params": {"field": "vec_l2", "query_value": q.tolist(), "space_type": "l2"}},
         -l2sq, lambda s: 1 / (1 - s)),
        ("painless innerProduct (+ shift to stay >= 0)", "vec_ip", {"lang": "painless",
         "source": "float v = innerProduct(params.qv, doc['vec_ip']); return v < 0 ? 1 / (1 - v) : v + 1;",
         "params": {"qv": q.tolist()}}, ip, lambda s: np.where(s < 0, 1 / (1 - s), s + 1)),
        ("painless cosineSimilarity + 1", "vec_cos", {"lang": "painless",
         "source": "1.0 + cosineSimilarity(params.qv, doc['vec_cos'])", "params": {"qv": q.tolist()}},
         cos, lambda s: 1 + s),
        ("painless l2Squared", "vec_l2", {"lang": "painless",
         "source": "1 / (1 + l2Squared(params.qv, doc['vec_l2']))", "params": {"qv": q.tolist()}},
         -l2sq, lambda s: 1 / (1 - s)),
    ]
    idx = {d: k for k, d in enumerate(ids)}
    for name, field, script, raw, tf in forms:
        r = attempt(f"script_score {name}", lambda: client.search(index=INDEX, body={
            "size": n_docs, "query": {"script_score": {"query": all_, "script": script}}}))
        if r is None:
            continue
        got = [(h["_id"], h["_score"]) for h in r["hits"]["hits"]]
        err = max(abs(s - float(tf(raw[idx[i]]))) for i, s in got)
        order_ok = [i for i, _ in got[:10]] == list(ids[np.argsort(-raw, kind="stable")[:10]])
        check(f"script_score {name}", err < 1e-4 and len(got) == n_docs,
              f"{len(got)} hits, max |score - expected| {err:.2e}, top-10 order = numpy's: {order_ok}")

    try:  # script_score refuses negative scores: raw inner products must be shifted
        client.search(index=INDEX, body={"size": 1, "query": {"script_score": {"query": all_, "script": {
            "lang": "painless", "source": "innerProduct(params.qv, doc['vec_ip'])", "params": {"qv": q.tolist()}}}}})
        check("script_score raw painless innerProduct is refused when negative", False, "it was accepted")
    except OpenSearchException as exc:
        check("script_score raw painless innerProduct is refused when negative",
              "non-negative" in str(exc.info), str(exc.info)[:0])

    neural(client, q, ids, ip)


def neural(client: OpenSearch, q: np.ndarray, ids: np.ndarray, ip: np.ndarray) -> None:
    plugins = [p["component"] for p in client.cat.plugins(format="json")]
    if not any("neuralsearch" in p for p in plugins):
        check("neural-search loaded", False, plugins)
        return
    weights = [0.3, 0.7]
    client.transport.perform_request("PUT", "/_search/pipeline/norm-minmax", body={
        "phase_results_processors": [{"normalization-processor": {
            "normalization": {"technique": "min_max"},
            "combination": {"technique": "arithmetic_mean", "parameters": {"weights": weights}}}}]})
    client.transport.perform_request("PUT", "/_search/pipeline/rrf", body={
        "phase_results_processors": [{"score-ranker-processor": {
            "combination": {"technique": "rrf", "rank_constant": 60}}}]})
    check("search pipelines: normalization-processor (min_max, arithmetic_mean), score-ranker-processor (rrf)", True)

    k = 20
    subs = [{"match": {"text_en": "budget meeting"}}, {"knn": {"vec_ip": {"vector": q.tolist(), "k": k}}}]
    hybrid = {"size": k, "query": {"hybrid": {"queries": subs}}}
    lists = []
    for sub in subs:
        r = client.search(index=INDEX, body={"size": k, "query": sub})
        lists.append([(h["_id"], h["_score"]) for h in r["hits"]["hits"]])

    r = attempt("hybrid without pipeline", lambda: client.search(index=INDEX, body=hybrid))
    if r is not None:
        check("hybrid without a pipeline answers, but with hybrid's internal marker scores", True,
              f"{len(r['hits']['hits'])} hits, top {r['hits']['hits'][0]['_score'] if r['hits']['hits'] else None}")

    # expected min_max + weighted arithmetic mean, computed here
    norm = []
    for lst in lists:
        s = [x for _, x in lst]
        lo, hi = min(s), max(s)
        norm.append({d: (1.0 if hi == lo else max((x - lo) / (hi - lo), 0.001)) for d, x in lst})
    docs = set(norm[0]) | set(norm[1])
    expect = {d: sum(w * n.get(d, 0.0) for w, n in zip(weights, norm)) / sum(weights) for d in docs}
    r = attempt("hybrid + norm-minmax", lambda: client.search(index=INDEX, body=hybrid,
                                                              params={"search_pipeline": "norm-minmax"}))
    if r is not None:
        got = [(h["_id"], h["_score"]) for h in r["hits"]["hits"]]
        err = max(abs(s - expect[d]) for d, s in got)
        check("hybrid + normalization-processor min_max/arithmetic_mean [0.3, 0.7]", err < 1e-4,
              f"{len(got)} hits, max |score - client-side min_max mean| {err:.2e}, top {got[:2]}")
    ranks = [{d: i + 1 for i, (d, _) in enumerate(lst)} for lst in lists]
    expect = {d: sum(1 / (60 + rk[d]) for rk in ranks if d in rk) for d in docs}
    r = attempt("hybrid + rrf", lambda: client.search(index=INDEX, body=hybrid, params={"search_pipeline": "rrf"}))
    if r is not None:
        got = [(h["_id"], h["_score"]) for h in r["hits"]["hits"]]
        err = max(abs(s - expect[d]) for d, s in got)
        check("hybrid + score-ranker-processor rrf (rank_constant 60)", err < 1e-6,
              f"{len(got)} hits, max |score - sum 1/(60+rank)| {err:.2e}, top {got[:2]}")


if __name__ == "__main__":
    sys.exit(main())
