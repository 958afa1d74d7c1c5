"""Fingerprints, expiry on each change, degenerate and alarm states."""

from __future__ import annotations

import copy

import pytest

from harness.certificates.fingerprint import (
    diff_fingerprints, fingerprint_from_metrics, merge_fingerprints,
)
from harness.certificates.status import status

from .synth import metrics_doc

BASE = metrics_doc(10)


def cert(status_="valid", **extra):
    doc = {"kind": "certificate", "type": "coverage", "status": status_, "alpha": 0.1,
           "reason": "no threshold: too few queries" if status_ == "degenerate" else "ok",
           "fingerprint": fingerprint_from_metrics(BASE, stage="rerank")}
    doc.update(extra)
    return doc


def changed(mutate, stage="rerank"):
    metrics = copy.deepcopy(BASE)
    mutate(metrics)
    return fingerprint_from_metrics(metrics, stage=stage)


def set_in(path, value):
    def mutate(m):
        target = m
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


CHANGES = [
    ("corpus_version", set_in(["corpora", 0, "version"], "v2"), "corpora[synth].version"),
    ("corpus_checksum", set_in(["corpora", 0, "sha256"], "ef" * 32), "corpora[synth].sha256"),
    ("embedding_model", set_in(["index", "embedding_models"], ["bge-small"]), "embedding_models"),
    ("arm", set_in(["retrieval", "size"], 12), "arm.size"),
    ("arm", set_in(["retrieval", "fusion"], {"method": "normalization"}), "arm.fusion"),
    ("arm", set_in(["retrieval", "mode"], "bm25"), "arm.mode"),
    ("reranker", set_in(["retrieval", "reranker"], {"name": "other", "sha256": "00" * 32}),
     "reranker"),
    ("corpus_removed", set_in(["corpora", 0, "name"], "renamed"), "corpora[synth]"),
]


@pytest.mark.parametrize("kind,mutate,field", CHANGES, ids=[c[2] for c in CHANGES])
def test_each_fingerprint_change_expires_the_certificate(kind, mutate, field):
    current = changed(mutate)
    result = status(cert(), current)
    assert result.state == "expired"
    assert kind in {c.kind for c in result.changes}
    assert field in result.reason


def test_stage_and_added_corpus_expire_too():
    assert status(cert(), changed(lambda m: None, stage="retrieve")).changes[0].kind == "stage"
    def add(m):
        m["corpora"].append({**m["corpora"][0], "name": "extra"})
    kinds = {c.kind for c in status(cert(), changed(add)).changes}
    assert kinds == {"corpus_added"}


def test_unchanged_fingerprint_is_valid_and_says_what_was_checked():
    result = status(cert(), changed(lambda m: None))
    assert result.state == "valid" and result.changes == ()
    assert "fingerprint unchanged" in result.reason
    assert "not checked" in status(cert()).reason


def test_degenerate_and_expired_precedence():
    assert status(cert("degenerate"), changed(lambda m: None)).state == "degenerate"
    expired = status(cert("degenerate"), changed(set_in(["corpora", 0, "version"], "v9")))
    assert expired.state == "expired"


def test_alarm_once_the_promise_is_ruled_out():
    outcomes = [i % 20 < 7 for i in range(300)]        # 35% misses against a 10% promise
    result = status(cert(), changed(lambda m: None), outcomes=outcomes)
    assert result.state == "alarm"
    assert result.monitor["alarm_at"] < 100
    fine = [i % 20 == 0 for i in range(300)]           # 5% misses: within the promise
    assert status(cert(), changed(lambda m: None), outcomes=fine).state == "valid"


def test_risk_certificates_are_watched_at_their_target():
    risk = cert(type="risk", target=0.05)
    risk.pop("alpha")
    outcomes = [i % 10 == 0 for i in range(400)]       # 10% losses against a 5% target
    assert status(risk, None, outcomes=outcomes).state == "alarm"


def test_merge_refuses_different_procedures_and_conflicting_corpora():
    a = fingerprint_from_metrics(BASE, stage="rerank")
    b = changed(lambda m: m["corpora"].__setitem__(0, {**m["corpora"][0], "name": "other"}))
    merged = merge_fingerprints([a, b])
    assert [c["name"] for c in merged["corpora"]] == ["other", "synth"]
    with pytest.raises(ValueError, match="'arm'"):
        merge_fingerprints([a, changed(set_in(["retrieval", "size"], 12))])
    with pytest.raises(ValueError, match="different versions"):
        merge_fingerprints([a, changed(set_in(["corpora", 0, "version"], "v2"))])


def test_diff_is_empty_for_equal_prints():
    a = fingerprint_from_metrics(BASE, stage="rerank")
    assert diff_fingerprints(a, copy.deepcopy(a)) == []
