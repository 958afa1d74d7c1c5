"""Fixtures for the OpenSearch backend tests: the session's real node (``opensearch_node``
in tests/conftest.py), corpora in the real on-disk formats, and a seeded random static
embedding model (the packaged MiniLM tokenizer, random token vectors: a bag-of-tokens
embedding with real duplicate and near-duplicate structure, built in a second)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.harness.retrieval.tiny import write_static_model

os.environ.setdefault("HF_HUB_OFFLINE", "1")

SYNTHETIC_SEED = 20260812
SYNTHETIC_MEETINGS = 40


@pytest.fixture(scope="session")
def os_url(opensearch_node) -> str:
    return opensearch_node.url


@pytest.fixture(scope="session")
def synthetic_path(tmp_path_factory) -> Path:
    from ingestion.synthetic import generate

    return generate(SYNTHETIC_SEED, SYNTHETIC_MEETINGS,
                    tmp_path_factory.mktemp("os-synthetic") / "synthetic")


@pytest.fixture(scope="session")
def tiny_qmsum(tmp_path_factory) -> Path:
    from tests.harness.retrieval.tiny import write_qmsum

    return write_qmsum(tmp_path_factory.mktemp("os-tiny") / "qmsum")


@pytest.fixture(scope="session")
def static_model(tmp_path_factory) -> Path:
    """A 64-dimension random static model directory (``--model PATH --dim 64``)."""
    return write_static_model(tmp_path_factory.mktemp("os-static") / "static-64", 64)


@pytest.fixture(scope="session")
def os_cache(tmp_path_factory) -> Path:
    """One embedding cache for the OpenSearch tests."""
    return tmp_path_factory.mktemp("os-embedding-cache")


@pytest.fixture(scope="session")
def static_flags(static_model, os_cache) -> list[str]:
    return ["--model", str(static_model), "--dim", "64", "--query-prefix", "",
            "--document-prefix", "", "--cache-dir", str(os_cache)]


def static_encoder(model: Path, cache: Path, dim: int = 64):
    """The harness's own encoder stack (profile, static encoder, cache) for ``model``."""
    from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
    from harness.retrieval.embeddings.models import load_encoder
    from harness.retrieval.embeddings.profiles import resolve_profile

    profile = resolve_profile(str(model), dim=dim, query_prefix="", document_prefix="")
    return CachedEncoder(load_encoder(profile), EmbeddingCache(cache), progress=False)
