"""Model profiles, encoders, the embedding cache and the provenance verdicts."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
from harness.retrieval.embeddings.encoders import weights_sha256
from harness.retrieval.embeddings.models import load_encoder
from harness.retrieval.embeddings.profiles import DEFAULT_MODEL, PROFILES, resolve_profile
from harness.retrieval.embeddings.provenance import (
    MixedEmbeddingSpace,
    embedding_verdict,
    index_block,
    refuse_mixed,
)
from tests.harness.retrieval.stand_in_encoder import StandInEncoder


class _HashEncoder(StandInEncoder):
    """Vectors from the text's sha256; records what the model was asked to embed."""

    def __init__(self, model_id="fake/model", weights="w" * 64, dimension=4,
                 query_prefix="q: ", document_prefix="d: "):
        super().__init__(model_id, query_prefix, document_prefix, dimension, weights)

    def vectors(self, texts):
        rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:4 * self.dimension],
                              dtype=np.uint8)[:self.dimension].astype(np.float32) for t in texts]
        return np.stack(rows)


# --------------------------------------------------------------------------- profiles


def test_default_profile_is_the_packaged_minilm():
    profile = resolve_profile(None)
    assert profile.model_id == DEFAULT_MODEL == "sentence-transformers/all-MiniLM-L6-v2"
    assert (profile.dimension, profile.query_prefix, profile.document_prefix) == (384, "", "")
    assert resolve_profile("minilm") == profile == resolve_profile("all-MiniLM-L6-v2")


def test_a_model_without_a_profile_needs_dim_and_both_prefixes(tmp_path):
    with pytest.raises(ValueError, match="--dim, --query-prefix, --document-prefix"):
        resolve_profile(str(tmp_path))
    with pytest.raises(ValueError, match="--dim"):
        resolve_profile(str(tmp_path), query_prefix="", document_prefix="")
    with pytest.raises(ValueError, match="--document-prefix"):
        resolve_profile(str(tmp_path), dim=768, query_prefix="query: ")
    profile = resolve_profile(str(tmp_path), dim=768, query_prefix="query: ",
                              document_prefix="passage: ")
    assert profile.model_id == f"local:{tmp_path.name}"
    assert (profile.dimension, profile.query_prefix, profile.document_prefix) == \
        (768, "query: ", "passage: ")
    with pytest.raises(ValueError, match="positive integer"):
        resolve_profile(str(tmp_path), dim=0, query_prefix="", document_prefix="")


def test_unknown_name_and_contradicting_flags_are_refused():
    with pytest.raises(ValueError, match="not a profile"):
        resolve_profile("intfloat/e5-small-v2")
    with pytest.raises(ValueError, match="contradicts"):
        resolve_profile(DEFAULT_MODEL, dim=768)
    with pytest.raises(ValueError, match="contradicts"):
        resolve_profile(DEFAULT_MODEL, query_prefix="query: ")


def test_the_packaged_directory_resolves_to_its_profile(minilm_path):
    assert resolve_profile(str(minilm_path)) == PROFILES[DEFAULT_MODEL]


def test_weights_sha256_is_the_weight_file_digest(tmp_path, minilm_path):
    (tmp_path / "model.safetensors").write_bytes(b"abc")
    (tmp_path / "config.json").write_text("{}")
    assert weights_sha256(tmp_path) == hashlib.sha256(b"abc").hexdigest()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "extra.bin").write_bytes(b"xyz")
    manifest = (f"model.safetensors {hashlib.sha256(b'abc').hexdigest()}\n"
                f"sub/extra.bin {hashlib.sha256(b'xyz').hexdigest()}\n")
    assert weights_sha256(tmp_path) == hashlib.sha256(manifest.encode()).hexdigest()
    with pytest.raises(FileNotFoundError):
        weights_sha256(tmp_path / "sub" / "nothing")


# --------------------------------------------------------------------------- cache


def test_second_pass_embeds_nothing_and_returns_the_same_vectors(tmp_path):
    texts = ["alpha", "beta", "alpha", "gamma"]
    first_enc = _HashEncoder()
    with EmbeddingCache(tmp_path) as cache:
        first = CachedEncoder(first_enc, cache, block_size=2, progress=False)
        v1 = first.encode_documents(texts)
        assert first.stats.block()["texts_embedded"] == 3        # alpha once
        assert sorted(first_enc.encoded) == ["d: alpha", "d: beta", "d: gamma"]
    second_enc = _HashEncoder()
    with EmbeddingCache(tmp_path) as cache:
        second = CachedEncoder(second_enc, cache, progress=False)
        v2 = second.encode_documents(texts)
        assert second_enc.encoded == []
        assert second.stats.block() == {
            "texts_embedded": 0, "texts_from_cache": 3,
            "by_role": {"documents": {"requested": 4, "unique": 3, "embedded": 0,
                                      "from_cache": 3}}}
    assert np.array_equal(v1, v2)
    assert np.array_equal(v1[0], v1[2])


def test_cache_keys_on_model_weights_and_the_prefixed_text(tmp_path):
    with EmbeddingCache(tmp_path) as cache:
        CachedEncoder(_HashEncoder(), cache, progress=False).encode_documents(["alpha"])
        other_weights = _HashEncoder(weights="v" * 64)
        CachedEncoder(other_weights, cache, progress=False).encode_documents(["alpha"])
        assert other_weights.encoded == ["d: alpha"]
        other_model = _HashEncoder(model_id="fake/other")
        CachedEncoder(other_model, cache, progress=False).encode_documents(["alpha"])
        assert other_model.encoded == ["d: alpha"]
        same = _HashEncoder()
        queries = CachedEncoder(same, cache, progress=False)
        queries.encode_queries(["alpha"])              # "q: alpha" is another text
        assert same.encoded == ["q: alpha"]
        assert cache.count() == 4


def test_cache_refuses_a_vector_of_the_wrong_dimension(tmp_path):
    with EmbeddingCache(tmp_path) as cache:
        CachedEncoder(_HashEncoder(dimension=4), cache, progress=False).encode_documents(["x"])
        with pytest.raises(ValueError, match="dimension 4, expected 3"):
            CachedEncoder(_HashEncoder(dimension=3), cache, progress=False).encode_documents(["x"])


# --------------------------------------------------------------------------- provenance


def test_embedding_verdicts():
    assert embedding_verdict({}) == "empty"
    assert embedding_verdict({None: 5}) == "unattributed"
    assert embedding_verdict({"m@1": 5}) == "uniform"
    assert embedding_verdict({"m@1": 5, None: 1}) == "partially_unattributed"
    assert embedding_verdict({"m@1": 5, "n@2": 1}) == "mixed"
    assert embedding_verdict({"m@1": 5, "n@2": 1, None: 3}) == "mixed"
    block = index_block({"n@2": 1, "m@1": 5, None: 2}, 384, "m@1")
    assert block == {"embedding_models": ["m@1", "n@2"], "embedding_verdict": "mixed",
                     "embedding_unattributed": 2, "embedding_dimension": 384,
                     "configured_embedding_model": "m@1"}
    with pytest.raises(MixedEmbeddingSpace, match="2 named embedding models"):
        refuse_mixed(block)
    refuse_mixed(index_block({"m@1": 3}, 384, "m@1"))  # uniform passes


# --------------------------------------------------------------------------- real encoders


@pytest.fixture(scope="module")
def minilm():
    return load_encoder(resolve_profile(None))


@pytest.mark.model
def test_minilm_encoder_matches_the_raw_sentence_transformers_call(minilm):
    texts = ["the remote control needs a new battery", "we cut the marketing budget",
             "replace the batteries in the remote"]
    ours = minilm.encode_documents(texts)
    raw = minilm.model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    assert ours.shape == (3, 384) and ours.dtype == np.float32
    assert np.allclose(ours, raw, atol=1e-6)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    sims = ours @ ours.T
    assert sims[0, 2] > sims[0, 1]  # battery/remote paraphrase closer than budget
    assert minilm.label == f"{DEFAULT_MODEL}@{minilm.weights_sha256[:12]}"


def test_static_model2vec_encoder_from_a_local_directory(tmp_path, minilm_path):
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(minilm_path / "tokenizer.json"))
    rng = np.random.default_rng(0)
    vectors = rng.standard_normal((tok.get_vocab_size(), 8)).astype(np.float32)
    StaticModel(vectors=vectors, tokenizer=tok, normalize=True).save_pretrained(str(tmp_path))
    profile = resolve_profile(str(tmp_path), dim=8, query_prefix="", document_prefix="")
    assert profile.kind == "model2vec" and profile.pooling == "mean"
    encoder = load_encoder(profile)
    out = encoder.encode_queries(["remote control", "remote control", "budget"])
    assert out.shape == (3, 8) and np.array_equal(out[0], out[1])
    # mean of the token vectors, L2-normalised (model2vec's static pooling), by hand
    tok.no_padding()  # the packaged tokenizer.json pads to 128
    ids = tok.encode("budget", add_special_tokens=False).ids
    mean = vectors[ids].mean(axis=0)
    assert np.allclose(out[2], mean / np.linalg.norm(mean), atol=1e-5)
    with pytest.raises(ValueError, match="declared dimension 16"):
        load_encoder(resolve_profile(str(tmp_path), dim=16, query_prefix="",
                                     document_prefix=""))
    assert json.loads((tmp_path / "modules.json").read_text())[0]["type"].endswith(
        "StaticEmbedding")
