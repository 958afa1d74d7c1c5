"""Latency samples say what they are: one query's time, or a batch's mean."""

from __future__ import annotations

import json

import pytest

from harness.pipeline.latency import latency_block
from harness.cli import main


def test_per_query_samples_and_their_percentiles_by_hand():
    block = latency_block({"q1": (1, 4.0), "q2": (1, 1.0), "q3": (1, 2.0), "q4": (1, 3.0)},
                          concurrency=1, method="m", query_batch=1)
    assert block["samples"] == [4.0, 1.0, 2.0, 3.0] and block["sample_unit"] == "query"
    assert block["n"] == block["queries"] == 4
    # type-7 percentile of [1, 2, 3, 4]: 1 + p * (4 - 1) on the sorted values
    assert block["p50"] == pytest.approx(1 + 0.50 * 3)
    assert block["p95"] == pytest.approx(1 + 0.95 * 3)
    assert block["max"] == 4.0 and block["mean"] == pytest.approx(2.5)


def test_batched_samples_are_one_per_batch_and_labelled():
    block = latency_block({"a": (64, 0.5), "b": (64, 0.7), "c": (3, 0.9)},
                          concurrency=2, method="m", query_batch=64)
    assert block["samples"] == [0.5, 0.7, 0.9] and block["queries"] == 64 + 64 + 3
    assert block["sample_unit"] == "batch mean over up to 64 queries"


def _bench_latency(tmp_path, seed: int, meetings: int) -> tuple[dict, dict]:
    """``(runinfo.json's retrieval_latency_ms, metrics.json)`` of a BM25 bench over a
    synthetic corpus."""
    from ingestion.synthetic import generate

    corpus = generate(seed=seed, meetings=meetings, out_dir=tmp_path / "syn")
    out = tmp_path / "run"
    assert main(["bench", "--corpus", f"synthetic:{corpus}", "--mode", "bm25", "--out", str(out),
                 "--no-warehouse", "--no-progress"]) == 0
    return (json.loads((out / "runinfo.json").read_text())["retrieval_latency_ms"],
            json.loads((out / "metrics.json").read_text()))


def test_bench_times_every_query_by_default(tmp_path):
    latency, metrics = _bench_latency(tmp_path, seed=2, meetings=12)
    assert latency["sample_unit"] == "query"
    assert len(latency["samples"]) == latency["queries"] >= metrics["judgements"]["queries_scored"]


def test_blas_is_held_to_one_thread_while_queries_are_timed():
    # multi-threaded BLAS made identical runs of one arm measure p50 0.5 ms or 7.9 ms
    # (helper-thread wake-up on busy cores): the timing loop holds it to one thread
    from threadpoolctl import threadpool_info

    from harness.pipeline.latency import BLAS_THREADS, one_blas_thread

    def blas_threads():
        return {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}

    before = blas_threads()
    with one_blas_thread():
        assert blas_threads() == {1} == {BLAS_THREADS}
    assert blas_threads() == before
    block = latency_block({"q1": (1, 1.0)}, concurrency=1, method="m")
    assert block["blas_threads"] == 1


def test_bench_records_the_blas_threads_it_timed_with(tmp_path):
    latency, _ = _bench_latency(tmp_path, seed=3, meetings=6)
    assert latency["blas_threads"] == 1
