"""The judging task and labels batch formats (issue 38 items 3, 7): every field checked with
the file and field named; the tier recomputed from the licence record, never trusted."""

from __future__ import annotations

import json

import pytest

from harness.claims.judging import read_labels_batch, read_task
from harness.core.formats import FormatError
from tests.pages.judge_fixture import PRIVATE, PUBLIC, write_task


def _task(tmp_path, record=PUBLIC, **changes):
    folder = tmp_path / "task"
    write_task(folder, record, "pool")
    doc = json.loads((folder / "task.json").read_text())
    for key, value in changes.items():
        doc[key] = value
    (folder / "task.json").write_text(json.dumps(doc))
    return folder


def test_a_task_reads_back_with_its_pairs_texts_and_tier(tmp_path):
    task = read_task(_task(tmp_path))
    assert task.tier == "A" and [(p.query_id, p.doc_id) for p in task.pairs] == [
        ("q1", "d1"), ("q1", "d2"), ("q2", "d3")]
    assert task.documents["d2"] == "Lunch <b>menu</b> & more." and task.pairs[0].sampled
    assert read_task(_task(tmp_path / "b", PRIVATE)).tier == "B"


@pytest.mark.parametrize("change, field, words", [
    ({"corpus": {**PRIVATE, "tier": "A"}}, "corpus.tier", "tier A needs a publishable licence"),
    ({"overlap": 1.5}, "overlap", "[0, 1]"),
    ({"pairs": []}, "pairs", "1 to"),
    ({"pairs": [{"query_id": "q 1", "doc_id": "d1"}]}, "pairs[0].query_id", "whitespace"),
    ({"pairs": [{"query_id": "q1", "doc_id": "d1"}] * 2}, "pairs[1]", "appears twice"),
    ({"documents": {"d1": "x"}}, "documents.d2", "missing"),
    ({"kind": "pool"}, "kind", "judging-task"),
    # the warehouse's columns: a depth past INTEGER, a seed past BIGINT, no corpus name
    ({"pool": {"sha256": "0" * 64, "depth": 1 << 40}}, "pool", "depth"),
    ({"seed": 1 << 70}, "seed", "64-bit"),
    ({"corpus": {**PUBLIC, "name": None}}, "corpus.name", "name"),
    ({"pairs": [{"query_id": "q1", "doc_id": "d1", "sampled": "yes"}]}, "pairs[0].sampled",
     "true or false"),
])
def test_a_bad_task_is_refused_naming_the_field(tmp_path, change, field, words):
    folder = _task(tmp_path, **change)
    with pytest.raises(FormatError) as caught:
        read_task(folder)
    assert caught.value.field == field and words in caught.value.message
    assert str(folder / "task.json") in str(caught.value)


def test_non_json_numbers_and_deep_nesting_are_refused_located(tmp_path):
    folder = _task(tmp_path)
    text = (folder / "task.json").read_text()
    (folder / "task.json").write_text(text.replace('"seed": 0', '"seed": NaN'))
    with pytest.raises(FormatError, match="NaN is not a JSON number"):
        read_task(folder)
    (folder / "task.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(FormatError, match="nested too deeply|expected a JSON object"):
        read_task(folder)


def test_a_labels_batch_is_checked_label_by_label(tmp_path):
    folder = tmp_path / "batch"
    folder.mkdir()
    good = {"query_id": "q1", "doc_id": "d1", "label": 2, "rater": "ana",
            "at": "2026-12-07T09:00:00.5Z"}
    doc = {"kind": "judgment-labels", "schema": 1, "task": "a" * 64,
           "labels": [good, {**good, "label": 4}]}
    (folder / "labels.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError) as caught:
        read_labels_batch(folder)
    assert caught.value.field == "labels[1].label"
    doc["labels"] = [good]
    doc["task"] = "not a task"
    (folder / "labels.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="task id"):
        read_labels_batch(folder)
    doc["task"] = "a" * 64
    doc["labels"] = [good, good]
    (folder / "labels.json").write_text(json.dumps(doc))
    with pytest.raises(FormatError, match="appears twice") as caught:
        read_labels_batch(folder)
    assert caught.value.field == "labels[1]"
    doc["labels"] = [good]
    (folder / "labels.json").write_text(json.dumps(doc))
    assert read_labels_batch(folder).labels[0].label == 2
