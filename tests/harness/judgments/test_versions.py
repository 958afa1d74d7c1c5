"""Qrels versions (issue 38 item 5): consensus by hand, a content digest that names the
file and refuses an edited copy, deterministic bytes, TREC export."""

from __future__ import annotations

import json

import pytest

from harness.core.formats import FormatError
from harness.claims.labels import Label
from harness.judgments.versions import build_version, consensus, read_version, write_version

T = "2026-12-07T09:00:00Z"
LABELS = [Label("q1", "d1", "ana", T, 1), Label("q1", "d1", "bo", T, 2),
          Label("q1", "d2", "ana", T, 3), Label("q2", "d9", "bo", T, 0),
          Label("q2", "d9", "bo", "2026-12-07T10:00:00Z", 2)]  # bo changed their mind


def test_consensus_is_the_lower_median():
    assert consensus([3]) == 3
    assert consensus([1, 2]) == 1
    assert consensus([0, 2, 3]) == 2
    assert consensus([3, 0, 3, 1]) == 1


def test_version_content_digest_and_file(tmp_path):
    version = build_version(LABELS, corpus="mine", tier="B")
    assert version.judgements == {"q1": {"d1": 1, "d2": 3}, "q2": {"d9": 2}}
    assert version.content["raters"] == ["ana", "bo"]
    assert len(version.content["labels"]) == 4  # bo's earlier q2 label was replaced
    assert build_version(list(reversed(LABELS)), corpus="mine", tier="B").text() == version.text()
    assert build_version(LABELS, corpus="mine", tier="A").digest != version.digest
    out = write_version(version, tmp_path)
    assert out.name == f"qrels-{version.digest[:12]}.json"
    import hashlib

    doc = json.loads(out.read_text())
    digest = doc.pop("digest")
    from harness.core.canonical import canonical_json

    assert hashlib.sha256(canonical_json(doc).encode()).hexdigest() == digest
    assert read_version(out).judgements == version.judgements
    assert write_version(version, tmp_path) == out  # the same version again is a no-op
    assert version.trec() == "q1 0 d1 1\nq1 0 d2 3\nq2 0 d9 2\n"


def test_an_edited_version_is_refused(tmp_path):
    out = write_version(build_version(LABELS, tier="B"), tmp_path)
    doc = json.loads(out.read_text())
    doc["judgements"][0]["relevance"] = 3
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="edited.json: field 'digest'"):
        read_version(edited)
    doc["tier"] = "A"  # claiming a more open tier is an edit too
    edited.write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="digest"):
        read_version(edited)
    out.write_text(out.read_text().replace('"B"', '"A"'))
    with pytest.raises(ValueError, match="different file already holds"):
        write_version(build_version(LABELS, tier="B"), tmp_path)


def test_no_labels_is_refused():
    with pytest.raises(ValueError, match="no labels"):
        build_version([], tier="B")


def _resealed(tmp_path, change):
    """A version file edited by ``change`` and given a fresh digest (a crafted file)."""
    import hashlib

    from harness.core.canonical import canonical_json

    doc = build_version(LABELS, tier="B").document()
    doc.pop("digest")
    change(doc)
    doc["digest"] = hashlib.sha256(canonical_json(doc).encode()).hexdigest()
    path = tmp_path / "crafted.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("change, message", [
    (lambda d: d["labels"][1].update(query_id=None), r"field 'labels\[1\]\.query_id'"),
    (lambda d: d["labels"][0].update(label=4), r"field 'labels\[0\]\.label'"),
    (lambda d: d["labels"].__setitem__(2, [1]), r"field 'labels\[2\]': expected a label object"),
    (lambda d: d.update(labels=[]), "field 'labels': expected a non-empty list"),
    (lambda d: d["judgements"][0].update(relevance=3), "field 'judgements': do not follow"),
    (lambda d: d["labels"].reverse(), "field 'labels': expected each rater's latest label"),
])
def test_a_crafted_version_with_a_fresh_digest_is_still_refused(tmp_path, change, message):
    with pytest.raises(FormatError, match=message):
        read_version(_resealed(tmp_path, change))


def test_ids_trec_qrels_cannot_hold_are_refused(tmp_path):
    from harness.claims.labels import read_labels

    path = tmp_path / "l.jsonl"
    path.write_text(json.dumps({"query_id": "q 1", "doc_id": "d", "label": 1, "rater": "a",
                                "at": T}) + "\n")
    with pytest.raises(FormatError, match="l.jsonl:1: field 'query_id': 'q 1' holds whitespace"):
        read_labels([path])
