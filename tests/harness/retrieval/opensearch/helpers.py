"""Running ``harness bench`` against the session's node, and reading what it wrote."""

from __future__ import annotations

import json
from pathlib import Path

import math

from harness.cli import main

#: list depth the score comparisons read
K = 100

CLAIM_FILES = ("metrics.json", "metrics.md", "per_query.jsonl", "rankings.jsonl",
               "calibration.jsonl")


def bench(out: Path, url: str | None, *specs: str, extra=(), backend: str = "opensearch") -> int:
    argv = ["bench", "--out", str(out), "--no-warehouse", "--no-progress"]
    for spec in specs:
        argv += ["--corpus", spec]
    if backend is not None:
        argv += ["--backend", backend]
    if url is not None:
        argv += ["--opensearch-url", url]
    return main(argv + list(extra))


def read(path: Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines()]


def per_query(out: Path, measure: str) -> dict[str, float]:
    return {r["query_id"]: r["value"] for r in jsonl(Path(out) / "per_query.jsonl")
            if r["measure"] == measure}


def index_name(out: Path) -> str:
    return read(Path(out) / "metrics.json")["index"]["backend"]["index"]["name"]


def docs_and_queries(spec, max_words):
    """The documents and queries a bench run over ``spec`` would index and ask."""
    from harness.pipeline.config import ArmConfig
    from harness.retrieval.prepared.prepare import index_docs, prepare_corpus, search_queries
    from harness.pipeline.runner import relevance_policy
    from ingestion import load_corpus

    cfg = ArmConfig(corpus_specs=(spec,), out="unused")
    prepared = [prepare_corpus(load_corpus(spec), "chunk", relevance_policy(cfg), max_words)]
    return index_docs(prepared, False), search_queries(prepared, False)


def assert_same_lists(expected, got, tol=1e-4, k=K):
    """Same documents with scores within ``tol``, away from the cut at ``k`` (a document
    within ``tol`` of the last score may fall either side of it)."""
    for query_id, want in expected.items():
        have = dict(got[query_id])
        floor = want[-1][1] + tol if len(want) == k else -math.inf
        for doc_id, score in want:
            if score >= floor:
                assert doc_id in have, (query_id, doc_id)
                assert abs(have[doc_id] - score) <= tol, (query_id, doc_id, have[doc_id], score)
        mine = dict(want)
        for doc_id, score in got[query_id]:
            if score >= floor + tol:
                assert doc_id in mine, (query_id, doc_id)
