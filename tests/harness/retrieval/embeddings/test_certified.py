"""Certificates per machine: kept under the CPU path or GPU they were measured on, read back
only there (faked capabilities), checked against their own claim, offered once by name and
speed, chosen only on request, and naming themselves where a mixed index is accepted."""

from __future__ import annotations

import hashlib
import json

import pytest

from harness.retrieval.embeddings import certified, devices
from harness.retrieval.embeddings.certified import (certified_for, choose, equivalent_pairs,
                                                    note_offer, record)
from harness.retrieval.embeddings.provenance import (MixedEmbeddingSpace, certify_mixed,
                                                     index_block, refuse_mixed)

AMX = {"device": "cpu", "path": "amx"}
AVX2 = {"device": "cpu", "path": "avx2"}
BASE = "sentence-transformers/all-MiniLM-L6-v2"


def _claim(new="minilm-bf16", decision="equivalent_drop_in") -> tuple[bytes, dict]:
    doc = {"decision": {"decision": decision, "tier": "T1"},
           "models": {"old": {"model_id": BASE, "label": f"{BASE}@aaaaaaaaaaaa"},
                      "new": {"model_id": new, "label": f"{new}@bbbbbbbbbbbb"}}}
    text = json.dumps(doc, sort_keys=True) + "\n"
    return text.encode("utf-8"), doc


def _fake_machine(monkeypatch, cpu: dict, gpus: int = 0) -> None:
    monkeypatch.setattr(devices, "capability", lambda device: cpu if device == "cpu" else
                        {"device": "cuda", "path": "NVIDIA H200"})
    monkeypatch.setattr(devices, "cuda_devices", lambda: gpus)


def test_a_certificate_is_kept_under_its_machine_and_read_back_only_there(tmp_path):
    raw, doc = _claim()
    path = record(tmp_path, raw, doc, AMX, {"old": 82.0, "new": 465.0})
    assert path == tmp_path / "cpu-amx" / f"{BASE.replace('/', '-')}--minilm-bf16.json"
    [cert] = certified_for(tmp_path, BASE, AMX)
    assert cert.sha256 == hashlib.sha256(raw).hexdigest() and cert.new == "minilm-bf16"
    assert round(cert.speedup, 3) == round(465.0 / 82.0, 3)
    assert certified_for(tmp_path, BASE, AVX2) == []       # another ISA path: not certified
    assert certified_for(tmp_path, "other-model", AMX) == []


def test_only_a_drop_in_decision_becomes_a_certificate(tmp_path):
    raw, doc = _claim(decision="no_upgrade_needed")
    assert record(tmp_path, raw, doc, AMX) is None
    assert not (tmp_path / "cpu-amx").exists()


def test_a_certificate_is_checked_not_trusted(tmp_path, caplog):
    raw, doc = _claim()
    path = record(tmp_path, raw, doc, AMX, {"old": 1.0, "new": 2.0})
    entry = json.loads(path.read_text())
    entry["claim"] = entry["claim"].replace("equivalent_drop_in", "equivalent_drop_ix")
    path.write_text(json.dumps(entry))
    assert certified_for(tmp_path, BASE, AMX) == []
    assert "does not hash to certificate_sha256" in caplog.text
    # a file copied into another machine's folder is not that machine's certificate
    record(tmp_path, raw, doc, AMX, {"old": 1.0, "new": 2.0})
    moved = tmp_path / "cpu-avx2" / path.name
    moved.parent.mkdir()
    moved.write_bytes(path.read_bytes())
    assert certified_for(tmp_path, BASE, AVX2) == []
    assert "certified on cpu-amx, not cpu-avx2" in caplog.text


def test_bench_offers_the_certified_profile_only_on_the_machine_it_was_certified_on(
        tmp_path, monkeypatch):
    raw, doc = _claim()
    record(tmp_path, raw, doc, AMX, {"old": 82.0, "new": 465.0})
    _fake_machine(monkeypatch, AMX)
    note = note_offer(tmp_path, BASE, "auto")
    digest = hashlib.sha256(raw).hexdigest()
    # 465 / 82 = 5.67
    assert note == (f"note: minilm-bf16 is certified a drop-in for {BASE} on this machine "
                    f"(cpu-amx; certificate sha256:{digest[:12]}) and ran 5.7x faster there "
                    f"(465 vs 82 texts/s); this run uses {BASE} as asked: --precision "
                    "certified opts in")
    chosen = choose(tmp_path, BASE, "auto")
    assert chosen.claim_block() == {"profile": "minilm-bf16", "replaces": BASE,
                                    "certificate_sha256": digest, "machine": "cpu-amx",
                                    "decision": "equivalent_drop_in"}
    _fake_machine(monkeypatch, AVX2)                      # the same store on an AVX2 CPU
    assert note_offer(tmp_path, BASE, "auto") is None
    with pytest.raises(ValueError, match=r"no cheaper profile is certified.*\(cpu-avx2\)"):
        choose(tmp_path, BASE, "auto")


def test_a_gpu_certificate_needs_the_gpu(tmp_path, monkeypatch):
    raw, doc = _claim("minilm-cuda-fp16")
    record(tmp_path, raw, doc, {"device": "cuda", "path": "NVIDIA H200"},
           {"old": 82.0, "new": 5000.0})
    _fake_machine(monkeypatch, AMX, gpus=0)
    assert note_offer(tmp_path, BASE, "auto") is None
    _fake_machine(monkeypatch, AMX, gpus=1)
    assert choose(tmp_path, BASE, "auto").new == "minilm-cuda-fp16"
    assert note_offer(tmp_path, BASE, "cpu") is None      # --device cpu: the GPU is not used


def test_a_control_or_slower_profile_is_never_offered(tmp_path, monkeypatch):
    _fake_machine(monkeypatch, AMX)
    raw, doc = _claim("minilm-rotated")                   # a control, not cheaper arithmetic
    record(tmp_path, raw, doc, AMX, {"old": 82.0, "new": 900.0})
    raw, doc = _claim("minilm-onnx")                      # certified, but slower here
    record(tmp_path, raw, doc, AMX, {"old": 82.0, "new": 70.0})
    assert note_offer(tmp_path, BASE, "auto") is None


def test_a_mixed_index_is_accepted_only_with_a_certificate_naming_both_labels(tmp_path):
    raw, doc = _claim()
    old, new = doc["models"]["old"]["label"], doc["models"]["new"]["label"]
    block = index_block({old: 3, new: 2}, 384, old)
    with pytest.raises(MixedEmbeddingSpace):
        refuse_mixed(certify_mixed(block, equivalent_pairs(tmp_path)))
    record(tmp_path, raw, doc, AMX)
    accepted = certify_mixed(block, equivalent_pairs(tmp_path))
    refuse_mixed(accepted)
    assert accepted["embedding_verdict"] == "certified_equivalent"
    assert accepted["embedding_certificates"] == [
        {"labels": sorted((old, new)), "certificate_sha256": hashlib.sha256(raw).hexdigest(),
         "machine": "cpu-amx", "decision": "equivalent_drop_in"}]
    third = index_block({old: 3, new: 2, "other@cccccccccccc": 1}, 384, old)
    with pytest.raises(MixedEmbeddingSpace):
        refuse_mixed(certify_mixed(third, equivalent_pairs(tmp_path)))
    assert certified.KIND == "harness.embedding_certificate"
