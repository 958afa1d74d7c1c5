"""Embedding models for the dense leg: profiles as data, offline encoders, the on-disk
cache, and embedding provenance.  Importing this package loads no model."""

from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache, default_cache_dir
from harness.retrieval.embeddings.encoders import Encoder, weights_sha256
from harness.retrieval.embeddings.models import load_encoder
from harness.retrieval.embeddings.profiles import DEFAULT_MODEL, PROFILES, ModelProfile, resolve_profile
from harness.retrieval.embeddings.provenance import (
    EXIT_MIXED_EMBEDDINGS,
    MixedEmbeddingSpace,
    embedding_verdict,
)

__all__ = [
    "CachedEncoder", "EmbeddingCache", "default_cache_dir", "Encoder", "load_encoder",
    "weights_sha256", "DEFAULT_MODEL", "PROFILES", "ModelProfile", "resolve_profile",
    "EXIT_MIXED_EMBEDDINGS", "MixedEmbeddingSpace", "embedding_verdict",
]
