"""The bfloat16 profile (minilm-bf16): loaded offline from the packaged MiniLM, deterministic,
within cosine 0.999 of plain fp32 sentence-transformers vectors computed here, keyed and
labelled apart from the base and the ONNX profiles (torch's version and the CPU's ISA path
included), and named by the mixed-index refusal."""

from __future__ import annotations

import hashlib
import importlib.metadata
import random
from pathlib import Path

import numpy as np
import pytest

from harness.core import heavy
from harness.retrieval.embeddings.bf16_encoder import (BATCH_TOKENS, DEFAULT_BATCH, bf16_digest,
                                                       isa_path)
from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
from harness.retrieval.embeddings.models import load_encoder, open_encoders
from harness.retrieval.embeddings.profiles import (DEFAULT_MODEL, DERIVED_KINDS, PROFILES,
                                                   resolve_profile, source_path)
from harness.retrieval.embeddings.provenance import (MixedEmbeddingSpace, embedding_verdict,
                                                     index_block, refuse_mixed, survey)

TEXTS = ["Marketing: so the remote should be fancy and easy to use.", "Okay.",
         "PhD A: " + "we looked at the features of the recognizer and the noise " * 30,
         "Project Manager: let us move on to the budget, twelve fifty per unit.",
         "Grad B: um yeah", "User Interface: " + "the buttons should be large " * 8,
         "Industrial Designer: the case could be rubber, or plastic with a titanium look, "
         "and the chip on the board decides what the buttons cost.",
         "Professor B: " + "so the idea is that the second stream is trained on " * 12,
         "Mm-hmm.", "Marketing: " + "young people want something trendy " * 4]

# every test here loads the packaged MiniLM (in bfloat16)
pytestmark = [pytest.mark.model]


def _cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


@pytest.fixture(scope="module")
def offline():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("TRANSFORMERS_OFFLINE", "1")
        yield


@pytest.fixture(scope="module")
def bf16(offline):
    return load_encoder(PROFILES["minilm-bf16"])


@pytest.fixture(scope="module")
def reference(offline):
    """fp32 vectors from plain ``SentenceTransformer.encode`` (not the product's encoder)."""
    st = heavy.load("sentence_transformers")
    model = st.SentenceTransformer(str(source_path(PROFILES[DEFAULT_MODEL].source)),
                                   device="cpu", local_files_only=True)
    model.max_seq_length = 256
    return model.encode(TEXTS, batch_size=32, normalize_embeddings=True,
                        convert_to_numpy=True)


def test_the_profile_is_derived_and_loads_offline(bf16):
    profile = resolve_profile("minilm-bf16")
    assert profile.kind == "bf16" and profile.kind in DERIVED_KINDS
    assert profile.base == DEFAULT_MODEL and profile.source == f"profile:{DEFAULT_MODEL}"
    assert (bf16.batch_size, bf16.max_batch_tokens) == (DEFAULT_BATCH, BATCH_TOKENS) == (64, 2048)
    vectors = bf16.encode(TEXTS)
    assert vectors.shape == (len(TEXTS), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-6)
    torch = heavy.load("torch")
    linear = [m for m in bf16._model.modules() if isinstance(m, torch.nn.Linear)]
    norms = [m for m in bf16._model.modules() if isinstance(m, torch.nn.LayerNorm)]
    assert len(linear) == 6 * 6 + 1       # 6 layers x (4 attention + 2 feed-forward), pooler
    assert {m.weight.dtype for m in linear} == {torch.bfloat16}
    assert norms and {m.weight.dtype for m in norms} == {torch.float32}


def test_two_encodes_are_byte_identical(bf16, offline):
    first = bf16.encode(TEXTS)
    assert first.tobytes() == bf16.encode(TEXTS).tobytes()
    again = load_encoder(PROFILES["minilm-bf16"]).encode(TEXTS)    # a new model, same batches
    assert first.tobytes() == again.tobytes()


def test_batches_follow_the_length_order_whatever_the_input_order(bf16):
    """Distinct token lengths: a shuffled input forms the same batches, so the same bytes."""
    lengths = bf16.token_lengths(TEXTS)
    assert len(set(lengths)) == len(TEXTS)
    order = list(range(len(TEXTS)))
    random.Random(7).shuffle(order)
    shuffled = bf16.encode([TEXTS[i] for i in order])
    assert shuffled.tobytes() == bf16.encode(TEXTS)[order].tobytes()


def test_within_cosine_0999_of_plain_fp32_sentence_transformers(bf16, reference):
    vectors = bf16.encode(TEXTS)
    cosine = (vectors * reference).sum(axis=1)
    assert cosine.min() >= 0.999
    assert not np.array_equal(vectors, reference)              # bfloat16, not fp32 again


def test_provenance_names_derivation_weights_runtime_and_isa(bf16):
    block = bf16.describe()
    base_file = source_path(PROFILES[DEFAULT_MODEL].source) / "model.safetensors"
    assert block["base_weights_sha256"] == hashlib.sha256(base_file.read_bytes()).hexdigest()
    assert block["derived_from"] == DEFAULT_MODEL
    assert block["derivation"] == {"autocast": "cpu", "linear_weights": "bfloat16",
                                   "precision": "bf16"}
    assert block["runtime"]["torch"].split("+")[0] == importlib.metadata.version("torch")
    flags = _cpu_flags()
    isa = block["isa"]
    assert isa["amx_tile"] == ("amx_tile" in flags)
    assert isa["avx512_bf16"] == ("avx512_bf16" in flags)
    assert isa["native_bf16"] == bool({"amx_bf16", "avx512_bf16"} & flags)
    assert isa["cpu_capability"] == heavy.load("torch").backends.cpu.get_cpu_capability()
    assert block["label"] == f"minilm-bf16@{block['weights_sha256'][:12]}"


def test_the_cache_key_names_torch_and_the_isa_path(bf16):
    profile, base = PROFILES["minilm-bf16"], bf16.base_weights_sha256
    key = bf16_digest(profile, base, bf16.torch_version, bf16.isa)
    assert key == bf16.weights_sha256 and key != base
    assert bf16.isa == isa_path()                               # the path it runs on
    other_isa = {**bf16.isa, "cpu_capability": "AVX2", "amx_tile": False}
    changed = [bf16_digest(profile, base, "0.0", bf16.isa),
               bf16_digest(profile, base, bf16.torch_version, other_isa),
               bf16_digest(profile, "0" * 64, bf16.torch_version, bf16.isa),
               bf16_digest(PROFILES["minilm-onnx"], base, bf16.torch_version, bf16.isa)]
    assert len({key, *changed}) == 5


def test_the_cache_never_serves_the_base_vectors_to_bf16(bf16, offline, tmp_path):
    base = load_encoder(PROFILES[DEFAULT_MODEL])
    with EmbeddingCache(tmp_path) as cache:
        fp32 = CachedEncoder(base, cache, progress=False).encode_documents(TEXTS[:3])
        cached = CachedEncoder(bf16, cache, progress=False)
        vectors = cached.encode_documents(TEXTS[:3])
        assert cached.stats.block()["texts_embedded"] == 3        # none from the base's rows
        assert not np.array_equal(vectors, fp32)
        again = CachedEncoder(bf16, cache, progress=False)
        assert again.encode_documents(TEXTS[:3]).tobytes() == vectors.tobytes()
        assert again.stats.block()["texts_from_cache"] == 3
        assert cache.count("minilm-bf16") == 3


@pytest.fixture(scope="module")
def onnx_labels(request, tmp_path_factory, offline):
    """The ONNX profiles' labels, from their exports (the folder test_onnx.py exports into)."""
    cache = getattr(request.config, "cache", None)
    path = cache.mkdir("onnx-models") if cache is not None else tmp_path_factory.mktemp("onnx")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HARNESS_MODELS", str(path))
        return [load_encoder(PROFILES[name]).label
                for name in ("minilm-onnx", "minilm-onnx-int8")]


def test_label_and_refusal_tell_bf16_apart_from_fp32_onnx_and_int8(bf16, onnx_labels):
    base = open_encoders([PROFILES[DEFAULT_MODEL]])[0]
    assert bf16.weights_sha256 != base.weights_sha256
    others = [base.label, *onnx_labels]
    assert len({bf16.label, *others}) == 4
    for other in others:
        assert embedding_verdict(survey([bf16.label, other])) == "mixed"
        with pytest.raises(MixedEmbeddingSpace, match="2 named embedding models") as err:
            refuse_mixed(index_block(survey([bf16.label, bf16.label, other]), 384, other))
        assert bf16.label in str(err.value) and other in str(err.value)
    assert embedding_verdict(survey([bf16.label] * 3)) == "uniform"
