"""A second real system: OpenSearch's own ``_search`` REST API on a real node, measured with
``bench --backend http``.  Its rows equal ``harness score`` on the rankings the test fetched
from the node itself, written as a TREC run, and equal the ``--backend opensearch`` arm that
sends the same ``match`` query."""

from __future__ import annotations

import json

import httpx

from harness.cli import main
from harness.core.measures import DEFAULT_MEASURES

from .conftest import bench, comparable_rows, write_trec

BODY = '{"size": {k}, "query": {"match": {"text": {"query": "{query}"}}}, "_source": false}'


def _queries(synthetic):
    from harness.retrieval.prepared.prepare import prepare_corpus, search_queries
    from ingestion import load_corpus
    from ingestion.judgements import RelevancePolicy

    prepared = prepare_corpus(load_corpus(f"synthetic:{synthetic}"), "chunk", RelevancePolicy(),
                              200)
    return search_queries([prepared], False)


def test_opensearch_search_api_as_a_system_under_test(tmp_path, synthetic, embedded,
                                                      opensearch_node):
    url = opensearch_node.url
    arm = tmp_path / "os-arm"
    assert bench(synthetic, "--backend", "opensearch", "--opensearch-url", url, "--mode", "bm25",
                 "--out", str(arm)) == 0
    index = json.loads((arm / "metrics.json").read_text())["index"]["backend"]["index"]["name"]

    # the rankings, fetched from the node by the test itself (one _search per query)
    rankings = {}
    with httpx.Client(base_url=url, trust_env=False) as client:
        for q in _queries(synthetic):
            body = {"size": 48, "query": {"match": {"text": {"query": q.text}}},
                    "_source": False}
            hits = client.post(f"/{index}/_search", json=body).json()["hits"]["hits"]
            rankings[q.query_id] = [(h["_id"], h["_score"]) for h in hits]
    files = write_trec(embedded, rankings, tmp_path)
    assert main(["score", "--qrels", str(files["qrels"]), "--run", str(files["run"]),
                 "--query-classes", str(files["classes"]), "--corpus-name", "synthetic",
                 "--licence", "CC0-1.0", "--out", str(tmp_path / "scored"),
                 "--no-warehouse"]) == 0
    scored = json.loads((tmp_path / "scored" / "metrics.json").read_text())

    out = tmp_path / "http"
    assert bench(synthetic, "--backend", "http", "--url-template", f"{url}/{index}/_search",
                 "--method", "POST", "--body-template", BODY,
                 "--field-map", "hits=hits.hits[*],doc_id=_id,score=_score",
                 "--out", str(out)) == 0
    got = json.loads((out / "metrics.json").read_text())
    assert comparable_rows(got, DEFAULT_MEASURES) == comparable_rows(scored, DEFAULT_MEASURES)
    assert got["rows"] == json.loads((arm / "metrics.json").read_text())["rows"]
    sut = got["system_under_test"]
    assert sut["url_template"] == f"{url}/{index}/_search" and sut["returned_ids"][
        "unknown_to_corpus"] == 0
