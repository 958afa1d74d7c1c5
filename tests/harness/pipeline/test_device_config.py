"""An arm's ``--device`` and ``--precision`` are checked when the configuration is made, and
``--precision certified`` without a certificate for this machine is refused (exit 2) before
any model loads."""

from __future__ import annotations

import pytest

from harness.pipeline.config import ArmConfig
from harness.pipeline.runner import build_backend
from harness.retrieval.embeddings import devices


def test_device_and_precision_are_checked_up_front(tmp_path):
    assert ArmConfig(corpus_specs=("x",), out="o").device == "auto"
    with pytest.raises(ValueError, match="expected auto, cpu, cuda or cuda:N"):
        ArmConfig(corpus_specs=("x",), out="o", device="gpu")
    with pytest.raises(ValueError, match=r"unknown --precision 'fast'"):
        ArmConfig(corpus_specs=("x",), out="o", precision="fast")
    cfg = ArmConfig(corpus_specs=("x",), out="o", cache_dir=str(tmp_path))
    assert cfg.certificate_dir == tmp_path / "certificates"


def test_certified_precision_without_a_certificate_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(devices, "capability", lambda device: {"device": "cpu", "path": "avx2"})
    monkeypatch.setattr(devices, "cuda_devices", lambda: 0)
    cfg = ArmConfig(corpus_specs=("x",), out="o", mode="vector", precision="certified",
                    cache_dir=str(tmp_path))
    with pytest.raises(ValueError, match=r"no cheaper profile is certified a drop-in for "
                                         r"sentence-transformers/all-MiniLM-L6-v2 on this "
                                         r"machine \(cpu-avx2\)"):
        build_backend(cfg)
