"""Model profiles for migration studies: the derived kinds, their arithmetic against the
base's own vectors, lazy loading behind the cache, and resolving --old / --new."""

from __future__ import annotations

import numpy as np
import pytest

from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
from harness.retrieval.embeddings.models import ENCODER_KINDS, load_encoder
from harness.retrieval.embeddings.profiles import DEFAULT_MODEL, DERIVED_KINDS, PROFILES, resolve_profile
from harness.retrieval.embeddings.models import (TransformedEncoder, derivation_digest, open_encoders,
                                      resolve_model, rotation_matrix)


def test_the_rotation_is_orthogonal_and_fixed_by_its_seed():
    q = rotation_matrix(384, 0)
    assert np.allclose(q.T @ q, np.eye(384), atol=1e-10)
    assert np.array_equal(q, rotation_matrix(384, 0))
    assert not np.allclose(q, rotation_matrix(384, 1))


def test_the_derived_profiles():
    for name in ("minilm-rotated", "minilm-static-256", "minilm-cls", "minilm-trunc-256"):
        profile = resolve_profile(name)
        assert profile.kind in DERIVED_KINDS and profile.base == DEFAULT_MODEL
        assert profile.situation and profile.source == f"profile:{DEFAULT_MODEL}"
        assert ENCODER_KINDS[profile.kind] is ENCODER_KINDS["rotated"]   # loadable by bench
    assert resolve_profile("minilm-static-256").dimension == 256
    assert resolve_profile("minilm-cls").pooling == "cls"
    # a plain profile's block (what metrics.json records) is unchanged by the new fields
    assert list(PROFILES[DEFAULT_MODEL].block()) == [
        "model_id", "kind", "dimension", "normalize", "pooling", "query_prefix",
        "document_prefix", "max_seq_length"]
    block = PROFILES["minilm-trunc-256"].block()
    assert block["derived_from"] == DEFAULT_MODEL and block["derivation"] == {"dims": 256}


def test_resolving_old_and_new(tmp_path):
    assert resolve_model("minilm", "old") == PROFILES[DEFAULT_MODEL]
    with pytest.raises(ValueError, match="--new-dim, --new-query-prefix, --new-document-prefix"):
        resolve_model(str(tmp_path), "new")
    with pytest.raises(ValueError, match=r"--old-dim \(its output dimension"):
        resolve_model(str(tmp_path), "old", query_prefix="", document_prefix="")
    profile = resolve_model(str(tmp_path), "new", dim=768, query_prefix="query: ",
                            document_prefix="passage: ")
    assert (profile.dimension, profile.query_prefix, profile.document_prefix) == \
        (768, "query: ", "passage: ")
    with pytest.raises(ValueError, match="--new-dim 768 contradicts"):
        resolve_model("minilm", "new", dim=768)
    with pytest.raises(ValueError, match="not a profile"):
        resolve_model("intfloat/e5-small-v2", "new")


def test_derived_vectors_are_the_base_vectors_transformed(rotation_report, truncation_report,
                                                          migration_cache, synthetic_corpus):
    """After the session's runs every chunk text is cached under MiniLM's key, so the
    derived encoders here reach MiniLM's vectors through the cache and load no model."""
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus

    texts = [c.text for c in chunk_corpus(load_corpus(f"synthetic:{synthetic_corpus}"))][:40]
    profiles = [resolve_profile(n) for n in ("minilm", "minilm-rotated", "minilm-trunc-256")]
    with EmbeddingCache(migration_cache) as cache:
        base, rotated, truncated = open_encoders(profiles, cache)
        assert rotated.base is base and truncated.base is base        # one shared base
        vectors = CachedEncoder(base, cache, progress=False).encode_documents(texts)
        rot = CachedEncoder(rotated, None, progress=False).encode_documents(texts)
        cut = CachedEncoder(truncated, None, progress=False).encode_documents(texts)
        assert not base.loaded              # everything came from the cache
    assert np.allclose(rot, vectors @ rotation_matrix(384, 0), atol=1e-6)
    assert np.allclose(rot @ rot.T, vectors @ vectors.T, atol=1e-5)   # inner products kept
    head = vectors[:, :256] / np.linalg.norm(vectors[:, :256], axis=1, keepdims=True)
    assert np.allclose(cut, head, atol=1e-6)
    assert rotated.weights_sha256 == derivation_digest(profiles[1], base.weights_sha256)
    assert rotated.weights_sha256 != truncated.weights_sha256 != base.weights_sha256
    assert rotated.describe()["base_weights_sha256"] == base.weights_sha256


@pytest.mark.model
def test_bench_loads_a_derived_profile_through_load_encoder():
    encoder = load_encoder(resolve_profile("minilm-trunc-256"))
    assert isinstance(encoder, TransformedEncoder)
    assert encoder.label.startswith("minilm-trunc-256@") and encoder.dimension == 256
