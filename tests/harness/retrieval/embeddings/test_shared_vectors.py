"""Shared vectors: `harness embed --push` then `harness bench --vectors` (a directory store
here, moto's S3 server in the `service` test), with a seeded random static model (no torch).

The pulled run must write claim files byte-identical to a run that embedded everything; a
damaged, lying or oversized block is refused and its texts embedded here, counted."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.core.store import DirectoryStore
from harness.retrieval.embeddings.cache import EmbeddingCache
from harness.retrieval.embeddings.shared import SharedVectors, decode_block, encode_block
from tests.harness.retrieval.tiny import write_static_model

DIM = 32
#: the same arm name and no warehouse for every run (the name is part of the claim)
ARM = ["--control-name", "arm", "--no-warehouse"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> str:
    from ingestion.synthetic import generate

    return f"synthetic:{generate(7, 8, tmp_path_factory.mktemp('shared') / 'synthetic')}"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> list[str]:
    path = write_static_model(tmp_path_factory.mktemp("shared-model") / "static", DIM)
    return ["--model", str(path), "--dim", str(DIM), "--query-prefix", "",
            "--document-prefix", "", "--no-progress"]


@pytest.fixture(scope="module")
def cold(tmp_path_factory, corpus, model) -> Path:
    """A hybrid arm that embedded every text itself (the reference)."""
    base = tmp_path_factory.mktemp("cold")
    assert main(["bench", "--corpus", corpus, *model, "--cache-dir", str(base / "cache"),
                 "--out", str(base / "out"), *ARM]) == 0
    return base / "out"


def _bench(corpus, model, tmp_path: Path, url: str, name: str) -> tuple[Path, dict]:
    out = tmp_path / name
    assert main(["bench", "--corpus", corpus, *model, "--cache-dir", str(tmp_path / f"c-{name}"),
                 "--vectors", url, "--out", str(out), *ARM]) == 0
    runinfo = json.loads((out / "runinfo.json").read_text(encoding="utf-8"))
    return out, runinfo["embedding"]


def _claims(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*"))
            if p.is_file() and p.name != "runinfo.json"}


def _unique_texts(run: Path) -> int:
    roles = json.loads((run / "runinfo.json").read_text(encoding="utf-8"))["embedding"]["by_role"]
    return roles["documents"]["unique"] + roles["queries"]["unique"]


def _push(corpus, model, tmp_path: Path, url: str, capsys) -> str:
    assert main(["embed", "--corpus", corpus, *model, "--cache-dir", str(tmp_path / "pusher"),
                 "--push", url]) == 0
    return capsys.readouterr().out


def test_pulled_vectors_give_byte_identical_claims_and_embed_nothing(
        tmp_path, corpus, model, cold, capsys):
    store = tmp_path / "store"
    store.mkdir()
    unique = _unique_texts(cold)
    assert f"pushed {unique} vectors" in _push(corpus, model, tmp_path, str(store), capsys)
    keys = DirectoryStore(store).list("vectors/")
    # pushing again writes nothing and changes no object
    assert "pushed 0 vectors" in _push(corpus, model, tmp_path, str(store), capsys)
    assert DirectoryStore(store).list("vectors/") == keys

    out, embedding = _bench(corpus, model, tmp_path, str(store), "pulled")
    shared = embedding["shared_vectors"]
    assert (shared["pulled"], shared["refused"], shared["blocks_refused"]) == (unique, 0, 0)
    assert shared["blocks_verified"] >= 2  # a documents block and a queries block at least
    assert embedding["texts_embedded"] == 0
    assert _claims(out) == _claims(cold)


def test_a_tampered_block_is_refused_and_its_texts_embedded_here(
        tmp_path, corpus, model, cold, capsys):
    store = tmp_path / "store"
    store.mkdir()
    _push(corpus, model, tmp_path, str(store), capsys)
    blocks = sorted((p for p in store.rglob("blocks/*")), key=lambda p: p.stat().st_size)
    victim = blocks[-1]  # the largest: the documents
    index = json.loads(victim.parent.parent.joinpath("index", victim.name + ".json")
                       .read_text(encoding="utf-8"))
    data = bytearray(victim.read_bytes())
    data[-1] ^= 0x01  # one bit of one float: still finite, still the right length
    victim.write_bytes(bytes(data))

    out, embedding = _bench(corpus, model, tmp_path, str(store), "tampered")
    shared = embedding["shared_vectors"]
    assert shared["blocks_refused"] == 1
    assert shared["refused"] == len(index["texts"])
    assert shared["pulled"] == _unique_texts(cold) - len(index["texts"])
    assert embedding["texts_embedded"] == len(index["texts"])
    assert _claims(out) == _claims(cold)


def test_an_unreachable_store_is_a_store_that_holds_nothing(tmp_path, corpus, model, cold):
    out, embedding = _bench(corpus, model, tmp_path, str(tmp_path / "no-such-store"), "away")
    assert "no such directory" in embedding["shared_vectors"]["unreachable"]
    assert embedding["shared_vectors"]["pulled"] == 0
    assert embedding["texts_embedded"] == _unique_texts(cold)
    assert _claims(out) == _claims(cold)


def test_embed_refuses_a_store_it_cannot_reach_before_embedding(tmp_path, corpus, model,
                                                                  capsys):
    assert main(["embed", "--corpus", corpus, *model, "--cache-dir", str(tmp_path / "c"),
                 "--push", str(tmp_path / "no-such-store")]) == 1
    assert "no such directory" in capsys.readouterr().err
    with EmbeddingCache(tmp_path / "c") as cache:
        assert cache.count() == 0  # nothing was embedded


def test_vectors_without_a_dense_leg_is_refused(tmp_path, corpus, capsys):
    assert main(["bench", "--corpus", corpus, "--mode", "bm25", "--vectors", str(tmp_path),
                 "--out", str(tmp_path / "out"), *ARM]) == 2
    assert "--vectors needs a dense leg" in capsys.readouterr().err


def _one_block(root: Path) -> tuple[SharedVectors, str, np.ndarray, list[str]]:
    root.mkdir()
    store = DirectoryStore(root)
    shas = [hashlib.sha256(t.encode()).hexdigest() for t in ("a", "b", "c")]
    vectors = np.arange(3 * 4, dtype=np.float32).reshape(3, 4) / 8
    shared = SharedVectors(store)
    digest = "d" * 64
    assert shared.push("m", digest, shas, vectors) == 3
    assert shared.push("m", digest, shas, vectors) == 0
    return SharedVectors(store), digest, vectors, shas


def test_a_pull_puts_exactly_the_asked_vectors(tmp_path):
    shared, digest, vectors, shas = _one_block(tmp_path / "store")
    with EmbeddingCache(tmp_path / "cache") as cache:
        assert shared.pull(cache, "m", digest, [shas[2], shas[0], "e" * 64], 4) == 2
        rows = cache.get("m", digest, shas, 4)
        assert sorted(rows) == sorted([shas[0], shas[2]])
        assert rows[shas[2]].tolist() == [1.0, 1.125, 1.25, 1.375]  # (8, 9, 10, 11) / 8
        # another model asking for the same digest is refused, not served
        assert shared.pull(cache, "other", digest, shas, 4) == 0
        assert shared.counts["refused"] == 3 and cache.count("other") == 0


def test_a_block_larger_than_its_index_says_is_not_read(tmp_path):
    shared, digest, _, shas = _one_block(tmp_path / "store")
    [block] = (tmp_path / "store" / "vectors" / digest / "blocks").iterdir()
    block.write_bytes(block.read_bytes() + b"\0" * 4096)  # grown after it was indexed
    with EmbeddingCache(tmp_path / "cache") as cache:
        assert shared.pull(cache, "m", digest, shas, 4) == 0
        assert cache.count() == 0
    assert (shared.counts["blocks_refused"], shared.counts["refused"]) == (1, 3)


def test_a_block_whose_header_lies_is_refused_though_it_hashes_to_its_name():
    shas = ["a" * 64, "b" * 64]
    data = encode_block("m", "d" * 64, shas, np.ones((2, 4), dtype=np.float32))
    name = hashlib.sha256(data).hexdigest()
    assert decode_block(data, name, "m", "d" * 64, shas, 4).shape == (2, 4)
    for model_id, texts, dim in (("x", shas, 4), ("m", shas[::-1], 4), ("m", shas, 2)):
        with pytest.raises(ValueError, match="header"):
            decode_block(data, name, model_id, "d" * 64, texts, dim)
    nan = encode_block("m", "d" * 64, shas, np.full((2, 4), np.nan, dtype=np.float32))
    with pytest.raises(ValueError, match="finite"):
        decode_block(nan, hashlib.sha256(nan).hexdigest(), "m", "d" * 64, shas, 4)


@pytest.mark.service
def test_vectors_through_s3(tmp_path, corpus, model, cold, s3_bucket, capsys):
    url = f"{s3_bucket}/team"
    assert f"pushed {_unique_texts(cold)} vectors" in _push(corpus, model, tmp_path, url, capsys)
    out, embedding = _bench(corpus, model, tmp_path, url, "s3")
    assert embedding["shared_vectors"]["pulled"] == _unique_texts(cold)
    assert embedding["texts_embedded"] == 0
    assert _claims(out) == _claims(cold)
