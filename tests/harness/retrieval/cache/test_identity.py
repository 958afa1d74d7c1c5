"""A cache hit can never change a number: the claim files of an arm run without the cache,
with a cold cache (miss) and with a warm one (hit) are the same bytes."""

from __future__ import annotations

import pytest

from harness.cli import main

from ..tiny import write_beir, write_qmsum
from .helpers import claims, runinfo


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("HARNESS_PREPARED_CACHE", raising=False)


def _bench(out, specs, cache, extra=()):
    argv = ["bench", "--out", str(out), "--cache-dir", str(cache), "--control-name", "arm",
            "--no-warehouse", "--no-progress"]
    for spec in specs:
        argv += ["--corpus", spec]
    assert main(argv + list(extra)) == 0


def _three_ways(tmp_path, specs, extra):
    cache = tmp_path / "cache"
    _bench(tmp_path / "uncached", specs, cache, [*extra, "--no-prepared-cache"])
    assert runinfo(tmp_path / "uncached")["prepared_cache"] == {"enabled": False}
    assert not (cache / "prepared").exists()
    _bench(tmp_path / "cold", specs, cache, extra)
    _bench(tmp_path / "warm", specs, cache, extra)
    reference = claims(tmp_path / "uncached")
    assert claims(tmp_path / "cold") == reference
    assert claims(tmp_path / "warm") == reference
    return [runinfo(tmp_path / name)["prepared_cache"] for name in ("cold", "warm")]


@pytest.mark.slow  # builds BM25 over the whole split twice
def test_qmsum_validation_split_bm25_hit_is_byte_identical(qmsum_val, tmp_path):
    cold, warm = _three_ways(tmp_path, [f"qmsum:{qmsum_val}"], ["--mode", "bm25"])
    assert [(c["source"], c["prepared"]) for c in cold["corpora"]] == [("miss", "miss")]
    assert [(c["source"], c["prepared"]) for c in warm["corpora"]] == [("hit", "hit")]
    assert (cold["bm25_index"]["outcome"], warm["bm25_index"]["outcome"]) == ("miss", "hit")


@pytest.mark.model
def test_two_corpora_hybrid_with_headers_hit_is_byte_identical(tmp_path):
    """Meetings and documents in one index, the dense leg embedding each chunk's header
    (title, date, roster: read from the cached file records)."""
    root = tmp_path / "corpora"
    specs = [f"qmsum:{write_qmsum(root / 'qmsum')}", f"beir:{write_beir(root / 'beir')}"]
    cold, warm = _three_ways(tmp_path, specs, ["--mode", "hybrid", "--embed-header"])
    assert [c["prepared"] for c in cold["corpora"]] == ["miss", "miss"]
    assert [(c["source"], c["prepared"]) for c in warm["corpora"]] == [("hit", "hit")] * 2
    assert warm["bm25_index"]["outcome"] == "hit"


@pytest.mark.model  # the first arm embeds with MiniLM
def test_an_arm_over_cached_embeddings_loads_no_model(tmp_path, monkeypatch):
    """Every text in the embedding cache: the dense model is never loaded, and the claim
    files are those of the run that embedded them."""
    from harness.retrieval.embeddings import models

    specs = [f"qmsum:{write_qmsum(tmp_path / 'corpora' / 'qmsum')}"]
    cache = tmp_path / "cache"
    _bench(tmp_path / "embedded", specs, cache, ["--mode", "hybrid"])
    assert runinfo(tmp_path / "embedded")["embedding"]["texts_embedded"] > 0

    def refuse(*args, **kwargs):
        raise AssertionError("the embedding model was loaded although every text was cached")

    monkeypatch.setattr(models, "load_encoder", refuse)
    _bench(tmp_path / "cached", specs, cache, ["--mode", "hybrid"])
    assert runinfo(tmp_path / "cached")["embedding"]["texts_embedded"] == 0
    assert claims(tmp_path / "cached") == claims(tmp_path / "embedded")
