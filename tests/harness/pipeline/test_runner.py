"""``python -m harness bench`` end to end on tiny corpora in the real on-disk formats."""

from __future__ import annotations

import json

import pytest

from harness.retrieval.backends import BACKENDS
from harness.cli import main
from ingestion import load_corpus
from ingestion.chunking import chunk_corpus

from tests.harness.retrieval.tiny import write_beir, write_qmsum

CLAIM_FILES = ("metrics.json", "metrics.md", "per_query.jsonl", "rankings.jsonl",
               "calibration.jsonl")


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpora")
    qmsum = write_qmsum(root / "qmsum")
    beir = write_beir(root / "beir")
    return f"qmsum:{qmsum}", f"beir:{beir}"


def _bench(out, *specs, extra=()):
    argv = ["bench", "--out", str(out), "--no-warehouse", "--no-progress"]
    for spec in specs:
        argv += ["--corpus", spec]
    return main(argv + list(extra))


def _read(path):
    return json.loads(path.read_text(encoding="utf-8"))


def _jsonl(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _unique_texts(specs):
    """Distinct chunk texts and distinct query texts over the corpora, counted here."""
    chunks, queries = set(), set()
    for spec in specs:
        corpus = load_corpus(spec)
        chunks |= {c.text for c in chunk_corpus(corpus)}
        queries |= {q.text for q in corpus.rank_queries()}
    return len(chunks), len(queries)


@pytest.mark.model
def test_hybrid_runs_are_byte_identical_and_the_second_embeds_nothing(tmp_path, corpora):
    cache = tmp_path / "cache"
    extra = ["--cache-dir", str(cache), "--query-batch", "2", "--control-name", "arm"]
    assert _bench(tmp_path / "one", *corpora, extra=extra) == 0
    assert _bench(tmp_path / "two", *corpora, extra=extra + ["--workers", "3"]) == 0
    for name in CLAIM_FILES:
        one, two = (tmp_path / "one" / name).read_bytes(), (tmp_path / "two" / name).read_bytes()
        assert one == two, name

    n_chunks, n_queries = _unique_texts(corpora)
    first = _read(tmp_path / "one" / "runinfo.json")["embedding"]
    second = _read(tmp_path / "two" / "runinfo.json")["embedding"]
    assert first["texts_embedded"] == n_chunks + n_queries and first["texts_from_cache"] == 0
    assert second["texts_embedded"] == 0 and second["texts_from_cache"] == n_chunks + n_queries

    metrics = _read(tmp_path / "one" / "metrics.json")
    index = metrics["index"]
    assert index["embedding_verdict"] == "uniform"
    assert len(index["embedding_models"]) == 1
    assert index["embedding_models"][0].startswith("sentence-transformers/all-MiniLM-L6-v2@")
    assert index["configured_embedding_model"] == index["embedding_models"][0]
    assert index["embedding_dimension"] == 384
    retrieval = metrics["retrieval"]
    assert retrieval["fusion"]["arm_id"] == "hybrid-rrf-60"
    assert retrieval["fusion"]["selected_explicitly"] is False
    assert retrieval["fusion"]["window"] == max(100, min(48 * 4, 500))
    assert (retrieval["mode"], retrieval["stage"], retrieval["scope"], retrieval["size"]) == \
        ("hybrid", "retrieve", "corpus", 48)
    assert retrieval["bm25"]["k1"] == 1.2 and retrieval["embed_header"] is False
    # rows: qmsum x {lookup, summarize, all}, beir-toyset x {all}, pooled.  Every row is
    # tier B: the tiny qmsum tree has no LICENSE and no fetch manifest (its name proves
    # nothing), and beir-toyset is unregistered; both share one index, tier B
    keys = [(r["corpus"], r["query_class"], r["tier"], r["n"]) for r in metrics["rows"]]
    assert keys == [("beir-toyset", "all", "B", 3), ("qmsum", "lookup", "B", 6),
                    ("qmsum", "summarize", "B", 3), ("qmsum", "all", "B", 9),
                    ("beir-toyset+qmsum", "all", "B", 12)]
    assert (index["corpora"], index["tier"]) == (["beir-toyset", "qmsum"], "B")
    assert {"file:Success@1", "file:R@10", "file:MRR"} <= set(metrics["rows"][0]["metrics"])
    assert [c["name"] for c in metrics["corpora"]] == ["beir-toyset", "qmsum"]

    latency = _read(tmp_path / "two" / "runinfo.json")["retrieval_latency_ms"]
    # --query-batch 2 over 12 queries: the legs ran jointly per batch, so there are 6
    # samples, each a batch mean, and they say so
    assert latency["concurrency"] == 3 and latency["queries"] == 12
    assert len(latency["samples"]) == 12 // 2
    assert latency["sample_unit"] == "batch mean over up to 2 queries"
    assert latency["p50"] <= latency["p95"] <= latency["p99"] <= latency["max"]

    lines = (tmp_path / "one" / "calibration.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    assert [(r["corpus"], r["query_id"]) for r in rows] == sorted((r["corpus"], r["query_id"])
                                                                   for r in rows)
    assert len(rows) == 12
    for r in rows:
        assert set(r) == {"corpus", "tier", "query_id", "query_class", "stage", "scores",
                          "relevant", "first_relevant_rank"}
        assert r["stage"] == "retrieve" and len(r["scores"]) == len(r["relevant"]) <= 50
        assert r["scores"] == sorted(r["scores"], reverse=True)
        first = next((i + 1 for i, x in enumerate(r["relevant"]) if x), None)
        assert r["first_relevant_rank"] == first


@pytest.mark.model
def test_mixed_embedding_models_refuse_to_write_results(tmp_path, corpora, monkeypatch, capsys,
                                                        shared_cache):
    monkeypatch.setitem(BACKENDS, "mixed-test", "tests.harness.retrieval.fakes:MixedBackend")
    out = tmp_path / "mixed"
    rc = _bench(out, corpora[0], extra=["--backend", "mixed-test", "--mode", "vector",
                                        "--cache-dir", str(shared_cache)])
    assert rc == 3
    err = capsys.readouterr().err
    assert "refusing to write results" in err and "other/embedding-model@" in err
    assert not out.exists()


def test_rerank_stage_scores_the_prompt_order(tmp_path, corpora, random_cross_encoder):
    out = tmp_path / "rerank"
    rc = _bench(out, corpora[0], extra=["--mode", "bm25", "--stage", "rerank",
                                        "--reranker", str(random_cross_encoder),
                                        "--final-chunks", "5", "--max-chunks-per-file", "2",
                                        "--rerank-max-pairs", "6", "--size", "12"])
    assert rc == 0
    metrics = _read(out / "metrics.json")
    r = metrics["retrieval"]
    assert (r["candidate_pool"], r["final_chunks"], r["max_chunks_per_file"],
            r["rerank_max_pairs"]) == (12, 5, 2, 6)
    assert r["reranker"]["name"] == random_cross_encoder.name
    assert len(r["reranker"]["weights_sha256"]) == 64
    assert "preserve_order" in metrics["metric_engine"]["tie_break"]
    rankings = _jsonl(out / "rankings.jsonl")
    by_query: dict[str, list[str]] = {}
    for row in rankings:
        by_query.setdefault(row["query_id"], []).append(row["doc_id"])
    assert by_query
    for docs in by_query.values():
        files = [d.rpartition("_")[0] for d in docs]
        assert len(docs) <= 5
        assert all(files.count(f) <= 2 for f in files)
        # round-robin: every file appears once before any file appears twice
        distinct = list(dict.fromkeys(files))
        assert files[:len(distinct)] == distinct
    for row in _jsonl(out / "calibration.jsonl"):
        assert row["stage"] == "rerank" and len(row["scores"]) <= 6
        assert row["scores"] == sorted(row["scores"], reverse=True)


def test_rerank_without_weights_is_an_error_not_a_skip(tmp_path, corpora, capsys, monkeypatch):
    monkeypatch.delenv("HARNESS_RERANKER", raising=False)
    rc = _bench(tmp_path / "x", corpora[0], extra=["--mode", "bm25", "--stage", "rerank"])
    assert rc == 2 and "--reranker" in capsys.readouterr().err
    rc = _bench(tmp_path / "x", corpora[0], extra=["--mode", "bm25", "--stage", "rerank",
                                                   "--reranker", str(tmp_path / "absent")])
    assert rc == 2 and "reranker weights not found" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_gold_files_scope_is_an_upper_bound_restricted_to_gold(tmp_path, corpora):
    out = tmp_path / "gold"
    assert _bench(out, corpora[0], extra=["--mode", "bm25", "--scope", "gold-files"]) == 0
    metrics = _read(out / "metrics.json")
    assert metrics["retrieval"]["upper_bound"] is True
    assert "upper bound" in (out / "metrics.md").read_text()
    corpus = load_corpus(corpora[0])
    gold = {q.query_id: set(q.gold_files) for q in corpus.queries}
    for row in _jsonl(out / "rankings.jsonl"):
        assert row["doc_id"].rpartition("_")[0] in gold[row["query_id"]]
    # every answered query's first file is a gold file, so file-level Success@1 is 1
    for row in _jsonl(out / "per_query.jsonl"):
        if row["measure"] == "file:Success@1" and row["answered"]:
            assert row["value"] == 1.0


def test_file_granularity_ranks_whole_files(tmp_path, corpora):
    out = tmp_path / "files"
    assert _bench(out, corpora[0], extra=["--mode", "bm25", "--granularity", "file"]) == 0
    metrics = _read(out / "metrics.json")
    assert metrics["relevance_policy"]["graded_from"] == "gold files"
    assert metrics["corpora"][0]["chunks"] == 3  # one document per meeting
    assert {row["doc_id"] for row in _jsonl(out / "rankings.jsonl")} <= {"Ta001", "Ta002",
                                                                         "Ta003"}
    # query "...the remote and the control?" is about meeting Ta001 only
    first = [r for r in _jsonl(out / "rankings.jsonl") if r["query_id"] == "Ta001-s0"][0]
    assert first["doc_id"] == "Ta001"


def test_compare_prints_the_delta_table(tmp_path, corpora, capsys):
    assert _bench(tmp_path / "ctl", corpora[0], extra=["--mode", "bm25"]) == 0
    capsys.readouterr()
    assert _bench(tmp_path / "cand", corpora[0],
                  extra=["--mode", "bm25", "--k1", "0.9",
                         "--compare", str(tmp_path / "ctl" / "metrics.json")]) == 0
    text = capsys.readouterr().out
    assert "control: ctl" in text and "Δ nDCG@10" in text


@pytest.mark.parametrize("flags, message", [
    (["--fusion", "normalization", "--combination-weights", "0.705,0.295"], "more precision"),
    (["--mode", "bm25", "--fusion", "rrf"], "hybrid only"),
    (["--final-chunks", "4"], "rerank only"),
    (["--rank-constant", "30"], "without --fusion"),
])
def test_unusable_configurations_exit_2_before_any_work(tmp_path, corpora, capsys, flags,
                                                        message):
    assert _bench(tmp_path / "bad", corpora[0], extra=flags) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()


def test_qmsum_val_meeting_level_bm25_orders_domains_as_the_methodology(tmp_path, qmsum_val):
    """Meeting-level BM25 Success@1 per domain: Committee > Academic > Product, the
    ordering the methodology measured on the full corpus (near-duplicate AMI sessions make
    Product hardest).  The validation split is smaller, so the values are higher."""
    success = {}
    for domain in ("Product", "Academic", "Committee"):
        out = tmp_path / domain
        assert _bench(out, f"qmsum:{qmsum_val / 'data' / domain}",
                      extra=["--mode", "bm25", "--granularity", "file"]) == 0
        rows = _read(out / "metrics.json")["rows"]
        success[domain] = next(r for r in rows if r["query_class"] == "all")["metrics"]["Success@1"]
    assert success["Committee"] > success["Academic"] > success["Product"] > 0


def test_embed_header_goes_to_the_dense_text_only(corpora):
    from harness.retrieval.prepared.prepare import index_docs, prepare_corpus
    from ingestion.judgements import RelevancePolicy

    prepared = [prepare_corpus(load_corpus(corpora[0]), "chunk", RelevancePolicy(), 200)]
    plain = index_docs(prepared, embed_header=False)
    headed = index_docs(prepared, embed_header=True)
    first = headed[0]
    assert first.doc_id == "Ta001_0" and first.text == plain[0].text
    # QMSum meetings have no title and no date; the loader sorts the roster
    assert first.embedded_text == ("Ta001 | undated | participants: Industrial Designer, "
                                   f"Marketing, Project Manager\n\n{first.text}")
    assert all(p.embedded_text == p.text for p in plain)
