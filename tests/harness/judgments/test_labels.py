"""Labels files (issue 38 item 3): strict reading with located errors, a rater's later
label replacing the earlier one (undo)."""

from __future__ import annotations

import json

import pytest

from harness.core.formats import FormatError
from harness.claims.labels import Label, labels_text, latest, read_labels


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


GOOD = {"query_id": "q1", "doc_id": "d1", "label": 2, "rater": "ana", "at": "2026-12-07T09:00:00Z"}


def test_reads_and_round_trips(tmp_path):
    path = _write(tmp_path / "l.jsonl", [GOOD, {**GOOD, "rater": "bo", "label": 0}])
    labels = read_labels([path])
    assert labels == [Label("q1", "d1", "ana", "2026-12-07T09:00:00Z", 2),
                      Label("q1", "d1", "bo", "2026-12-07T09:00:00Z", 0)]
    again = tmp_path / "again.jsonl"
    again.write_text(labels_text(labels))
    assert read_labels([again]) == labels


@pytest.mark.parametrize("change, field", [
    ({"label": 4}, "label"), ({"label": 1.0}, "label"), ({"label": True}, "label"),
    ({"at": "2026-12-07T09:00:00"}, "at"), ({"at": "yesterday"}, "at"),
    ({"rater": " ana"}, "rater"), ({"scale": "0-1"}, "scale"), ({"doc_id": ""}, "doc_id"),
])
def test_bad_lines_name_file_line_and_field(tmp_path, change, field):
    path = _write(tmp_path / "bad.jsonl", [GOOD, {**GOOD, **change}])
    with pytest.raises(FormatError, match=rf"bad.jsonl:2: field '{field}'"):
        read_labels([path])


def test_a_later_label_replaces_the_earlier():
    early = Label("q1", "d1", "ana", "2026-12-07T09:00:00Z", 1)
    late = Label("q1", "d1", "ana", "2026-12-07T10:00:00+01:00", 3)  # same instant, later line
    later = Label("q1", "d1", "ana", "2026-12-07T09:30:00Z", 0)
    other = Label("q1", "d1", "bo", "2026-12-07T08:00:00Z", 2)
    assert latest([early, late]) == [late]
    assert latest([later, early]) == [later]  # by time, not by line
    assert latest([early, other, later]) == [later, other]
