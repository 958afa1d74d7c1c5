"""The ONNX profiles (minilm-onnx, minilm-onnx-int8): exported once into the per-user models
directory (here: pytest's cache directory, through ``$HARNESS_MODELS``), loaded offline,
deterministic, with their derivation, weights digest and runtime version in provenance;
their vectors are told apart from the base model's by the mixed-index refusal; length-aware
batching gives what unsorted encoding gives, on full-length QMSum turns too."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json

import numpy as np
import pytest

from harness.retrieval.embeddings import onnx_export
from harness.retrieval.embeddings.models import load_encoder
from harness.retrieval.embeddings.profiles import DEFAULT_MODEL, PROFILES, source_path
from harness.retrieval.embeddings.provenance import (MixedEmbeddingSpace, embedding_verdict,
                                                     index_block, refuse_mixed, survey)

TEXTS = ["Marketing: so the remote should be fancy and easy to use.", "Okay.",
         "PhD A: " + "we looked at the features of the recognizer and the noise " * 30,
         "Project Manager: let us move on to the budget, twelve fifty per unit.",
         "Grad B: um yeah", "User Interface: " + "the buttons should be large " * 8]

# every test here loads the packaged MiniLM and its ONNX exports
pytestmark = [pytest.mark.model]


def _sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def models_dir(request, tmp_path_factory):
    cache = getattr(request.config, "cache", None)
    path = cache.mkdir("onnx-models") if cache is not None else tmp_path_factory.mktemp("onnx")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HARNESS_MODELS", str(path))
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield path


@pytest.fixture(scope="module")
def encoders(models_dir):
    return {name: load_encoder(PROFILES[name], batch_size=4)
            for name in (DEFAULT_MODEL, "minilm-onnx", "minilm-onnx-int8")}


def test_each_profile_is_exported_once_into_the_models_directory(encoders, models_dir):
    for name in ("minilm-onnx", "minilm-onnx-int8"):
        enc = encoders[name]
        assert enc.export.parent == models_dir and enc.export.name.startswith(f"{name}-")
        assert enc.export == onnx_export.export_dir(PROFILES[name])
        built = (enc.export / "model.onnx").stat().st_mtime_ns
        assert onnx_export.ensure_export(PROFILES[name]) == enc.export          # reused
        assert (enc.export / "model.onnx").stat().st_mtime_ns == built          # not rebuilt
    leftovers = [p.name for p in models_dir.iterdir()
                 if p.name.startswith(".") and not p.name.endswith(".lock")]
    assert leftovers == []                                                     # no tmp dirs


def test_provenance_names_derivation_weights_and_runtime(encoders):
    base_file = source_path(PROFILES[DEFAULT_MODEL].source) / "model.safetensors"
    for name, precision in (("minilm-onnx", "fp32"), ("minilm-onnx-int8", "int8")):
        enc = encoders[name]
        block = enc.describe()
        assert block["weights_sha256"] == _sha(enc.export / "model.onnx")
        assert block["label"] == f"{name}@{block['weights_sha256'][:12]}"
        assert block["base_weights_sha256"] == _sha(base_file)
        assert block["derived_from"] == DEFAULT_MODEL
        assert block["derivation"]["precision"] == precision
        assert block["runtime"]["onnxruntime"] == importlib.metadata.version("onnxruntime")
        assert block["runtime"]["onnx"] == importlib.metadata.version("onnx")
        record = json.loads((enc.export / "derivation.json").read_text(encoding="utf-8"))
        assert record["onnx_sha256"] == block["weights_sha256"]
        assert record["tokenizer_sha256"] == _sha(base_file.parent / "tokenizer.json")
    int8 = encoders["minilm-onnx-int8"].describe()
    assert int8["export"]["quantized_from"] == encoders["minilm-onnx"].weights_sha256


def test_each_profile_is_deterministic(encoders, models_dir):
    for name in ("minilm-onnx", "minilm-onnx-int8"):
        first = encoders[name].encode(TEXTS)
        assert first.tobytes() == encoders[name].encode(TEXTS).tobytes()
        again = load_encoder(PROFILES[name]).encode(TEXTS)      # a new session, new batches
        assert first.tobytes() == again.tobytes()


def test_the_same_model_with_cheaper_arithmetic(encoders):
    ref = encoders[DEFAULT_MODEL].encode(TEXTS)
    fp32 = encoders["minilm-onnx"].encode(TEXTS)
    int8 = encoders["minilm-onnx-int8"].encode(TEXTS)
    assert np.abs(fp32 - ref).max() < 1e-5                      # the same function
    cos = (int8 * ref).sum(axis=1)
    assert cos.min() > 0.95 and not np.array_equal(int8, fp32)  # close, not the same


def test_an_int8_vector_does_not_depend_on_its_batch(encoders):
    enc = encoders["minilm-onnx-int8"]
    alone = enc.encode([TEXTS[0]])
    with_others = enc.encode(TEXTS[::-1])[-1:]
    assert alone.tobytes() == with_others.tobytes()


def test_the_mixed_index_refusal_tells_the_three_apart(encoders):
    labels = [enc.label for enc in encoders.values()]
    assert len(set(labels)) == 3
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            block = index_block(survey([a, a, b]), 384, a)
            assert embedding_verdict(survey([a, b])) == "mixed"
            with pytest.raises(MixedEmbeddingSpace, match="2 named embedding models"):
                refuse_mixed(block)
    assert embedding_verdict(survey([labels[1]] * 3)) == "uniform"


def test_the_export_key_changes_with_each_part():
    profile = PROFILES["minilm-onnx"]
    versions = {"onnx": "1", "onnxruntime": "1", "torch": "1"}
    key = onnx_export.export_key(profile, "a" * 64, versions)
    other = PROFILES["minilm-onnx-int8"]
    changed = [onnx_export.export_key(profile, "b" * 64, versions),
               onnx_export.export_key(profile, "a" * 64, {**versions, "onnxruntime": "2"}),
               onnx_export.export_key(profile, "a" * 64, {**versions, "torch": "2"}),
               onnx_export.export_key(other, "a" * 64, versions)]
    assert len({key, *changed}) == 5


def _turns(qmsum_val, n_long: int, n_short: int) -> list[str]:
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus

    texts = sorted({c.text for c in chunk_corpus(load_corpus(f"qmsum:{qmsum_val}"))})
    long = sorted(texts, key=lambda t: (-len(t.split()), t))[:n_long]
    short = [t for t in texts if len(t.split()) <= 12][:n_short]
    assert len(long) == n_long and len(short) == n_short
    return [t for pair in zip(long, short) for t in pair] + short[n_long:]


def test_length_aware_batching_equals_unsorted_on_full_length_turns(encoders, qmsum_val):
    texts = _turns(qmsum_val, 6, 10)
    lengths = encoders["minilm-onnx"].token_lengths(texts)
    assert max(lengths) == 256 and min(lengths) < 30           # full-length and short mixed
    for name, enc in encoders.items():
        sorted_ = enc.encode(texts)
        unsorted = enc.encode(texts, length_aware=False)
        if name == "minilm-onnx-int8":                            # one text per run: exact
            assert sorted_.tobytes() == unsorted.tobytes()
        else:
            assert np.abs(sorted_ - unsorted).max() < 1e-5, name
