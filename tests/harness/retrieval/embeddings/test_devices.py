"""``--device auto|cpu|cuda[:N]``: resolution, refusals (exit 2), and the device's part in
the embedding key and label.  CUDA presence is faked through ``devices.cuda_devices``; a
test that needs a real GPU skips with a reason where torch sees none."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from harness.core import heavy
from harness.core.canonical import canonical_line
from harness.retrieval.embeddings import devices
from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
from harness.retrieval.embeddings.devices import (DeviceUnavailable, machine_key,
                                                  parse_device, resolve_device)
from harness.retrieval.embeddings.encoders import embedding_digest
from harness.retrieval.embeddings.models import build_encoder, load_encoder
from harness.retrieval.embeddings.profiles import PROFILES


def _gpus(monkeypatch, n: int) -> None:
    monkeypatch.setattr(devices, "cuda_devices", lambda: n)


@pytest.mark.parametrize("spec, expected", [(None, "auto"), ("auto", "auto"), ("CPU", "cpu"),
                                            ("cuda", "cuda:0"), ("cuda:3", "cuda:3")])
def test_parse_device_normalises(spec, expected):
    assert parse_device(spec) == expected


@pytest.mark.parametrize("spec", ["gpu", "cuda:", "cuda:x", "cuda:-1", "mps", ""])
def test_parse_device_refuses_other_words(spec):
    with pytest.raises(DeviceUnavailable, match="expected auto, cpu, cuda or cuda:N"):
        parse_device(spec)


def test_auto_is_cuda_when_torch_sees_a_gpu_else_cpu(monkeypatch):
    _gpus(monkeypatch, 0)
    assert resolve_device("auto") == "cpu"
    _gpus(monkeypatch, 2)
    assert resolve_device("auto") == "cuda:0"
    assert resolve_device("cuda:1") == "cuda:1"
    # a kind that runs on the CPU only stays there under auto, with or without a GPU
    assert resolve_device("auto", "bf16") == "cpu"
    assert resolve_device("auto", "onnx") == "cpu"


def test_absent_cuda_device_is_refused_with_what_torch_sees(monkeypatch):
    _gpus(monkeypatch, 0)
    with pytest.raises(DeviceUnavailable, match="torch sees no CUDA device"):
        resolve_device("cuda")
    _gpus(monkeypatch, 2)
    with pytest.raises(DeviceUnavailable, match=r"cuda:2.*2 CUDA device\(s\) \(cuda:0..cuda:1\)"):
        resolve_device("cuda:2")


def test_kind_that_cannot_run_on_the_device_is_refused(monkeypatch):
    _gpus(monkeypatch, 1)
    with pytest.raises(DeviceUnavailable, match="runs on the CPU only"):
        resolve_device("cuda", "bf16", "minilm-bf16")
    with pytest.raises(DeviceUnavailable, match="runs on a CUDA device only"):
        resolve_device("cpu", "fp16", "minilm-cuda-fp16")
    _gpus(monkeypatch, 0)
    with pytest.raises(DeviceUnavailable, match="CUDA device only.*sees no CUDA device"):
        resolve_device("auto", "fp16", "minilm-cuda-fp16")


def test_fp16_profile_is_refused_on_a_machine_without_cuda(monkeypatch):
    _gpus(monkeypatch, 0)
    profile = PROFILES["minilm-cuda-fp16"]
    for device in ("auto", "cpu", "cuda"):
        with pytest.raises(DeviceUnavailable, match="minilm-cuda-fp16"):
            load_encoder(profile, device=device)
        with pytest.raises(DeviceUnavailable, match="minilm-cuda-fp16"):
            build_encoder(profile, device=device)


def test_embedding_digest_is_the_weights_on_the_cpu_and_folds_the_execution_elsewhere():
    weights = "ab" * 32
    assert embedding_digest(weights, {"device": "cpu", "precision": "fp32",
                                      "runtime": "torch"}) == weights
    gpu = {"device": "cuda:0", "precision": "fp32", "runtime": "torch",
           "device_name": "NVIDIA H200", "versions": {"cuda": "12.4", "torch": "2.5.1"}}
    expected = hashlib.sha256(canonical_line({"execution": gpu, "weights_sha256": weights})
                              .encode("utf-8")).hexdigest()
    assert embedding_digest(weights, gpu) == expected != weights
    other_gpu = {**gpu, "device_name": "NVIDIA A100"}
    fp16 = {**gpu, "precision": "fp16"}
    assert len({embedding_digest(weights, e) for e in (gpu, other_gpu, fp16)}) == 3


class _Stub:
    """An encoder seen by the cache: same model and weights, a given embedding key."""

    def __init__(self, key: str, value: float):
        self.model_id, self.dimension = "m", 2
        self.weights_sha256 = "w" * 64
        self.embedding_sha256 = key
        self.value = value
        self.calls = 0

    label = property(lambda self: f"{self.model_id}@{self.embedding_sha256[:12]}")

    def document_texts(self, texts):
        return list(texts)

    query_texts = document_texts

    def encode(self, texts):
        self.calls += len(texts)
        return np.full((len(texts), 2), self.value, dtype=np.float32)


def test_cache_never_serves_one_devices_vectors_to_another(tmp_path):
    with EmbeddingCache(tmp_path) as cache:
        cpu = _Stub("w" * 64, 1.0)
        gpu = _Stub("g" * 64, 2.0)
        first = CachedEncoder(cpu, cache, progress=False).encode_documents(["a", "b"])
        second = CachedEncoder(gpu, cache, progress=False).encode_documents(["a", "b"])
        again = CachedEncoder(_Stub("w" * 64, 9.0), cache, progress=False)
        third = again.encode_documents(["a", "b"])
    assert gpu.calls == 2 and first.tolist() == [[1.0, 1.0]] * 2
    assert second.tolist() == [[2.0, 2.0]] * 2
    assert third.tolist() == [[1.0, 1.0]] * 2 and again.encoder.calls == 0


def test_machine_key_names_the_device_and_its_path():
    assert machine_key({"device": "cpu", "path": "avx512-bf16"}) == "cpu-avx512-bf16"
    assert machine_key({"device": "cuda", "path": "NVIDIA H200"}) == "cuda-nvidia-h200"


@pytest.mark.model  # devices.cpu_isa_path asks torch
def test_cpu_isa_path_matches_the_cpu_flags():
    flags = set()
    for line in open("/proc/cpuinfo", encoding="utf-8"):
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    if not flags:
        pytest.skip("no /proc/cpuinfo flags on this machine")
    path = devices.cpu_isa_path()
    if "amx_tile" in flags:
        assert path == "amx"
    elif "avx512_bf16" in flags and "avx512f" in flags:
        assert path == "avx512-bf16"
    elif "avx512f" in flags:
        assert path in ("avx512", "avx2")  # torch may cap AVX512 to AVX2 on some CPUs
    elif "avx2" in flags:
        assert path == "avx2"


def _has_cuda() -> bool:
    return devices.cuda_devices() > 0


@pytest.mark.model
def test_fp16_on_a_real_gpu_matches_cpu_fp32():
    if not _has_cuda():
        pytest.skip("needs a CUDA device: torch sees none on this machine")
    torch = heavy.load("torch")
    assert torch.cuda.is_available()
    texts = ["Marketing: the remote should be easy to use.", "Okay.",
             "PhD A: " + "we looked at the features of the recognizer " * 20]
    cpu = load_encoder(PROFILES["sentence-transformers/all-MiniLM-L6-v2"], device="cpu")
    gpu = load_encoder(PROFILES["minilm-cuda-fp16"], device="cuda")
    cosine = (cpu.encode(texts) * gpu.encode(texts)).sum(axis=1)
    assert cosine.min() > 0.999
    assert gpu.label != cpu.label and gpu.execution["device"] == "cuda:0"
