"""The dense leg on OpenSearch: k-NN scores turned back into inner products, exact search
equal to the embedded backend's, and HNSW measured against exact search."""

from __future__ import annotations

import numpy as np
import pytest

from harness.retrieval.backends.base import SearchQuery
from harness.retrieval.backends.embedded import EmbeddedBackend
from harness.retrieval.backends.opensearch.backend import OpenSearchBackend
from harness.retrieval.backends.opensearch.mapping import knn_field
from harness.retrieval.backends.opensearch.options import DEFAULT_EF_SEARCH
from harness.retrieval.backends.opensearch.queries import (
    exact_query,
    expanded_hits,
    inner_product,
    knn_query,
)

from .conftest import static_encoder
from .helpers import assert_same_lists, docs_and_queries

TOP = 48


def test_inner_product_inverts_the_knn_transform_by_hand():
    # ip >= 0 is reported as ip + 1, ip < 0 as 1 / (1 - ip)
    assert inner_product(1.6) == pytest.approx(0.6)
    assert inner_product(1.0) == 0.0
    assert inner_product(1 / 1.6) == pytest.approx(-0.6)
    assert inner_product(0.2) == pytest.approx(-4.0)


def test_the_node_reports_inner_products_through_that_transform(opensearch_node):
    name = "test-transform"
    opensearch_node.request("DELETE", f"/{name}")
    assert opensearch_node.request("PUT", f"/{name}", {
        "settings": {"index": {"knn": True, "number_of_shards": 1, "number_of_replicas": 0}},
        "mappings": {"properties": {"vector": knn_field(2)}}})[0] == 200
    # q = (1, 0): inner products 0.6, -0.6 and 0 with these three vectors
    docs = {"a": [0.6, 0.8], "b": [-0.6, 0.8], "c": [0.0, 1.0]}
    lines = "".join(f'{{"index":{{"_id":"{k}"}}}}\n{{"vector":{v}}}\n' for k, v in docs.items())
    assert opensearch_node.request("POST", f"/{name}/_bulk?refresh=true", lines)[0] == 200
    try:
        for query in (knn_query([1.0, 0.0], 3, 10), exact_query([1.0, 0.0])):
            status, body = opensearch_node.request("POST", f"/{name}/_search",
                                                   {"size": 3, "query": query})
            assert status == 200, body
            raw = {h["_id"]: h["_score"] for h in body["hits"]["hits"]}
            assert raw == pytest.approx({"a": 1.6, "c": 1.0, "b": 1 / 1.6})
            assert expanded_hits(body, 3) == [("a", pytest.approx(0.6)), ("c", 0.0),
                                              ("b", pytest.approx(-0.6))]
    finally:
        opensearch_node.request("DELETE", f"/{name}")


@pytest.fixture(scope="module")
def synthetic_dense(os_url, synthetic_path, static_model, os_cache):
    """The synthetic corpus on both backends with the static model's vectors."""
    docs, queries = docs_and_queries(f"synthetic:{synthetic_path}", 200)
    encoder = static_encoder(static_model, os_cache)
    embedded = EmbeddedBackend(encoder=encoder, progress=False)
    embedded.index(docs, ["dense"])
    embedded.prepare_queries(queries)
    node = OpenSearchBackend(url=os_url, encoder=encoder, progress=False)
    node.index(docs, ["bm25", "dense"])
    node.prepare_queries(queries)
    yield docs, queries, embedded, node
    node.close()


def test_duplicate_vectors_are_held_once_and_expanded_exactly(synthetic_dense):
    docs, queries, embedded, node = synthetic_dense
    distinct = len({v.tobytes() for v in embedded._vectors})
    assert node.vectors_held == distinct < len(docs)


def test_exact_mode_returns_the_embedded_backends_lists(synthetic_dense):
    _, queries, embedded, node = synthetic_dense
    node.dense_search = "exact"
    try:
        got = node.search("dense", queries, TOP)
    finally:
        node.dense_search = "hnsw"
    want = embedded.search("dense", queries, TOP)
    assert_same_lists(want, got, tol=1e-5, k=TOP)
    identical = sum(1 for q in queries if [d for d, _ in want[q.query_id]]
                    == [d for d, _ in got[q.query_id]])
    assert identical >= len(queries) - 2  # only float near-ties may swap


def test_gold_file_scope_filters_both_modes_like_the_embedded_backend(synthetic_dense):
    docs, queries, embedded, node = synthetic_dense
    files = sorted({d.file_id for d in docs})
    scoped = [SearchQuery(q.query_id, q.text, tuple(files[i % len(files)::7]))
              for i, q in enumerate(queries)]
    want = embedded.search("dense", scoped, TOP)
    for mode in ("exact", "hnsw"):
        node.dense_search = mode
        try:
            got = node.search("dense", scoped, TOP)
        finally:
            node.dense_search = "hnsw"
        for q in scoped:
            assert {node._doc_file[d] for d, _ in got[q.query_id]} <= set(q.files)
        assert_same_lists(want, got, tol=1e-5, k=TOP)


def overlap(exact, approx, k=TOP) -> list[float]:
    """Per query, the share of the approximate top ``k`` that belongs to the exact top ``k``
    (a document tied with the exact k-th score within 1e-6 belongs)."""
    out = []
    for query_id, want in exact.items():
        kth = want[-1][1]
        out.append(sum(1 for _, s in approx[query_id][:k] if s >= kth - 1e-6) / len(want))
    return out


def _measure(node, queries, name):
    node.dense_search = "exact"
    exact = node.search("dense", queries, TOP)
    node.dense_search = "hnsw"
    got = overlap(exact, node.search("dense", queries, TOP))
    print(f"{name}: HNSW top-{TOP} overlap with exact search at ef_search {node.ef_search}: "
          f"mean {np.mean(got):.4f}, min {np.min(got):.4f} over {len(got)} queries")
    return got


def test_hnsw_top_48_overlap_with_exact_on_the_synthetic_corpus(synthetic_dense):
    _, queries, _, node = synthetic_dense
    assert node.ef_search == DEFAULT_EF_SEARCH
    assert np.mean(_measure(node, queries, "synthetic")) >= 0.99


def test_hnsw_top_48_overlap_with_exact_on_qmsum_val(os_url, qmsum_val, static_model, os_cache):
    docs, queries = docs_and_queries(f"qmsum:{qmsum_val}", 200)
    node = OpenSearchBackend(url=os_url, encoder=static_encoder(static_model, os_cache),
                             progress=False)
    try:
        node.index(docs, ["dense"])
        node.prepare_queries(queries)
        assert node.vectors_held < 0.8 * len(docs)  # QMSum repeats short turns a lot
        assert np.mean(_measure(node, queries, "QMSum val")) >= 0.99
    finally:
        node.close()
