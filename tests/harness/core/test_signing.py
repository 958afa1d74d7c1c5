"""Signed claims: ``$HARNESS_SIGNING_KEY`` makes every results directory carry a detached
Ed25519 signature over its claim files' sha256; verification against trusted keys."""

from __future__ import annotations

import base64
import json

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519, rsa

from harness.core.canonical import canonical_json
from harness.core.signing import (SIGNATURE_FILE, load_trusted_keys, message, verify_directory)
from tests.harness.core.keys import public_pem, write_key
from tests.warehouse.builders import simple_run


@pytest.fixture
def signer(tmp_path, monkeypatch):
    key = write_key(tmp_path / "ci.pem")
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(tmp_path / "ci.pem"))
    (tmp_path / "trusted.pem").write_bytes(public_pem(key))
    return key, load_trusted_keys(tmp_path / "trusted.pem")


def test_unsigned_by_default_and_then_untrusted(tmp_path, monkeypatch):
    monkeypatch.delenv("HARNESS_SIGNING_KEY", raising=False)
    run = simple_run(tmp_path / "run")
    assert not (run / SIGNATURE_FILE).exists()
    verdict = verify_directory(run, {})
    assert not verdict.trusted and verdict.reason == "unsigned: no signature.json"


def test_a_signed_directory_verifies_and_covers_every_claim_file(tmp_path, signer):
    key, trusted = signer
    run = simple_run(tmp_path / "run")
    doc = json.loads((run / SIGNATURE_FILE).read_text())
    claim_files = sorted(p.name for p in run.iterdir()
                         if p.name not in ("runinfo.json", SIGNATURE_FILE, ".harness-output.json"))
    assert sorted(doc["files"]) == claim_files and "metrics.json" in claim_files
    # an independent check of the signature with the public key alone
    key.public_key().verify(base64.b64decode(doc["signature"]), canonical_json(
        {"files": doc["files"], "purpose": "retrieval-eval results directory: sha256 of each "
                                           "claim file"}).encode())
    verdict = verify_directory(run, trusted)
    assert verdict.trusted, verdict.reason
    marker = json.loads((run / ".harness-output.json").read_text())
    assert SIGNATURE_FILE in json.dumps(marker)


def test_signing_is_deterministic_and_never_writes_the_key(tmp_path, signer):
    key, _ = signer
    a = simple_run(tmp_path / "a")
    b = simple_run(tmp_path / "b")
    assert (a / SIGNATURE_FILE).read_bytes() == (b / SIGNATURE_FILE).read_bytes()
    assert (a / "metrics.json").read_bytes() == (b / "metrics.json").read_bytes()
    secret = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                               serialization.NoEncryption())
    pem = (tmp_path / "ci.pem").read_bytes()
    for path in a.iterdir():
        data = path.read_bytes()
        assert secret not in data and base64.b64encode(secret) not in data and pem not in data


def test_a_changed_file_an_added_file_and_a_missing_file_are_not_trusted(tmp_path, signer):
    _, trusted = signer
    run = simple_run(tmp_path / "run")
    (run / "metrics.md").write_text("# edited\n")
    assert "metrics.md: changed since it was signed" in verify_directory(run, trusted).reason
    run = simple_run(tmp_path / "run2")
    (run / "intervals.json").write_text("{}")
    assert "intervals.json: not covered" in verify_directory(run, trusted).reason
    run = simple_run(tmp_path / "run3")
    (run / "metrics.md").unlink()
    assert "metrics.md: listed in signature.json but missing" in \
        verify_directory(run, trusted).reason
    # runinfo.json is outside the claim: changing it changes nothing
    run = simple_run(tmp_path / "run4")
    (run / "runinfo.json").write_text("{}")
    assert verify_directory(run, trusted).trusted


def test_relisted_digests_or_another_key_are_not_trusted(tmp_path, signer):
    _, trusted = signer
    run = simple_run(tmp_path / "run")
    (run / "metrics.md").write_text("# edited\n")
    doc = json.loads((run / SIGNATURE_FILE).read_text())
    import hashlib

    doc["files"]["metrics.md"] = hashlib.sha256(b"# edited\n").hexdigest()
    (run / SIGNATURE_FILE).write_text(json.dumps(doc))
    verdict = verify_directory(run, trusted)
    assert not verdict.trusted and "does not verify" in verdict.reason
    # a forger's own key, consistent signature: the key is not trusted
    forger = ed25519.Ed25519PrivateKey.generate()
    from harness.core.signing import signature_text

    (run / SIGNATURE_FILE).write_text(signature_text(doc["files"], forger))
    verdict = verify_directory(run, trusted)
    assert not verdict.trusted and "not among the trusted keys" in verdict.reason
    assert message(doc["files"]) == canonical_json({
        "files": doc["files"],
        "purpose": "retrieval-eval results directory: sha256 of each claim file"}).encode()


def test_a_keys_file_holds_several_keys_and_refuses_other_kinds(tmp_path):
    keys = [ed25519.Ed25519PrivateKey.generate() for _ in range(2)]
    (tmp_path / "two.pem").write_bytes(b"\n".join(public_pem(k) for k in keys))
    assert len(load_trusted_keys(tmp_path / "two.pem")) == 2
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    (tmp_path / "rsa.pem").write_bytes(public_pem(other))
    with pytest.raises(ValueError, match="public key 1: not an Ed25519 key"):
        load_trusted_keys(tmp_path / "rsa.pem")
    (tmp_path / "none.pem").write_text("hello")
    with pytest.raises(ValueError, match="no PEM 'PUBLIC KEY' block"):
        load_trusted_keys(tmp_path / "none.pem")


def test_a_bad_signing_key_is_a_clear_error_that_shows_no_key(tmp_path, monkeypatch):
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption())
    (tmp_path / "rsa.pem").write_bytes(pem)
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(tmp_path / "rsa.pem"))
    with pytest.raises(ValueError, match="not an Ed25519 key") as info:
        simple_run(tmp_path / "run")
    assert "PRIVATE" not in str(info.value)
    assert not (tmp_path / "run").exists()
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(tmp_path / "absent.pem"))
    with pytest.raises(ValueError, match="cannot read the signing key"):
        simple_run(tmp_path / "run")


def test_files_added_by_harness_intervals_are_signed_by_the_same_key(tmp_path, signer,
                                                                      monkeypatch):
    from harness.cli import main as harness

    key, trusted = signer
    run = simple_run(tmp_path / "run", n_queries=5)
    assert harness(["intervals", str(run)]) == 0
    verdict = verify_directory(run, trusted)
    assert verdict.trusted, verdict.reason
    assert "intervals.json" in json.loads((run / SIGNATURE_FILE).read_text())["files"]
    # another key in the environment does not vouch for what the first one signed
    other = simple_run(tmp_path / "other", n_queries=5)
    write_key(tmp_path / "other.pem")
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(tmp_path / "other.pem"))
    assert harness(["intervals", str(other)]) == 0
    assert "intervals.json: not covered" in verify_directory(other, trusted).reason
    # nor is a directory whose listed files changed re-signed over the change
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(tmp_path / "ci.pem"))
    changed = simple_run(tmp_path / "changed", n_queries=5)
    (changed / "metrics.md").write_text("# edited\n")
    assert harness(["intervals", str(changed)]) == 0
    assert "metrics.md: changed since it was signed" in verify_directory(changed, trusted).reason
