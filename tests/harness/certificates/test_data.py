"""The calibration.jsonl format: writer helpers and the strict reader."""

from __future__ import annotations

import json

import pytest

from harness.certificates.data import (K_MAX, calibration_row, calibration_text, read_calibration,
                                       write_calibration_rows)
from harness.evaluation.runs import load_calibration_run
from harness.core.formats import FormatError
from harness.evaluation.results import write_results

from .synth import make_run, metrics_doc


def row(**overrides):
    base = {"corpus": "synth", "tier": "A", "query_id": "q1", "query_class": None,
            "stage": "rerank", "scores": [0.9, 0.5, 0.1], "relevant": [False, True, False],
            "first_relevant_rank": 2}
    base.update(overrides)
    return base


def write_lines(path, objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def test_calibration_row_takes_the_rank_over_all_candidates_then_cuts_to_k_max():
    scores = [1.0 - i / 100 for i in range(70)]
    relevant = [i == 59 for i in range(70)]          # the 60th candidate is the first relevant
    r = calibration_row(corpus="c", tier="B", query_id="q", query_class="lookup",
                        stage="retrieve", scores=scores, relevant=relevant)
    assert len(r["scores"]) == len(r["relevant"]) == K_MAX == 50
    assert r["first_relevant_rank"] == 60
    assert not any(r["relevant"])


def test_round_trip_is_sorted_canonical_and_byte_stable(tmp_path):
    rows = [row(query_id="q2"), row(query_id="q1", first_relevant_rank=None,
                                    relevant=[False, False, False])]
    path = write_calibration_rows(tmp_path / "calibration.jsonl", rows)
    again = calibration_text(reversed(rows))
    assert path.read_text(encoding="utf-8") == again
    read = read_calibration(tmp_path)
    assert [r.query_id for r in read] == ["q1", "q2"]
    assert read[1].rank_in_list == 2 and read[0].rank_in_list is None
    assert read[1].top_score == 0.9 and read[1].line == 2


@pytest.mark.parametrize("obj,field", [
    (row(extra=1), "extra"),
    ({k: v for k, v in row().items() if k != "stage"}, "stage"),
    (row(tier="D"), "tier"),
    (row(stage="fuse"), "stage"),
    (row(query_id=""), "query_id"),
    (row(scores=[0.1] * 51, relevant=[False] * 51, first_relevant_rank=None), "scores"),
    (row(scores=[0.9, "x", 0.1]), "scores[1]"),
    (row(relevant=[False, True]), "relevant"),
    (row(relevant=[0, 1, 0]), "relevant[0]"),
    (row(first_relevant_rank=1), "first_relevant_rank"),
    (row(relevant=[False, False, False], first_relevant_rank=3), "first_relevant_rank"),
    (row(first_relevant_rank=0), "first_relevant_rank"),
    (row(query_class=""), "query_class"),
])
def test_reader_names_file_line_and_field(tmp_path, obj, field):
    path = write_lines(tmp_path / "calibration.jsonl", [row(query_id="q0"), obj])
    with pytest.raises(FormatError) as err:
        read_calibration(path)
    assert err.value.line == 2
    assert err.value.field == field
    assert str(path) in str(err.value)


def test_reader_refuses_nan_scores(tmp_path):
    path = tmp_path / "calibration.jsonl"
    path.write_text(json.dumps(row()).replace("0.5", "NaN") + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"scores\[1\]"):
        read_calibration(path)


def test_reader_refuses_duplicates_and_mixed_stages(tmp_path):
    dup = write_lines(tmp_path / "a.jsonl", [row(), row()])
    with pytest.raises(FormatError, match="first seen on line 1"):
        read_calibration(dup)
    mixed = write_lines(tmp_path / "b.jsonl", [row(), row(query_id="q2", stage="retrieve")])
    with pytest.raises(FormatError, match="one stage"):
        read_calibration(mixed)


def test_writer_refuses_nothing_and_duplicates(tmp_path):
    with pytest.raises(ValueError, match="no calibration rows"):
        calibration_text([])
    with pytest.raises(ValueError, match="duplicate"):
        calibration_text([row(), row()])


def _per_query(metrics):
    row = metrics["rows"][0]
    return [{"corpus": row["corpus"], "tier": row["tier"], "query_class": None,
             "query_id": "q0000", "measure": "ndcg_cut_10", "value": 0.5, "answered": True}]


def _run_with(tmp_path, metrics, rows):
    return write_results(tmp_path / "run", metrics, metrics_md="x\n", per_query=_per_query(metrics),
                         extra_files={"calibration.jsonl": calibration_text(rows)})


def test_run_rows_must_agree_with_metrics_json(tmp_path):
    out = _run_with(tmp_path, metrics_doc(1, tier="B"), [row(tier="A")])
    with pytest.raises(FormatError) as err:
        load_calibration_run(out)
    assert err.value.field == "tier" and err.value.line == 1

    out = _run_with(tmp_path, metrics_doc(1), [row(corpus="other")])
    with pytest.raises(FormatError, match="not listed"):
        load_calibration_run(out)

    out = _run_with(tmp_path, metrics_doc(1), [row(stage="retrieve")])
    with pytest.raises(FormatError, match="retrieval.stage"):
        load_calibration_run(out)


def test_run_without_calibration_file_is_refused(tmp_path):
    out = write_results(tmp_path / "run", metrics_doc(1), metrics_md="x\n",
                        per_query=_per_query(metrics_doc(1)))
    with pytest.raises(FormatError, match="no calibration data"):
        load_calibration_run(out)


def test_loaded_run_carries_its_id_and_checksum(tmp_path):
    out = make_run(tmp_path / "run", n=30)
    run = load_calibration_run(out)
    assert len(run.rows) == 30 and run.stage == "rerank"
    assert len(run.run_id) == 64 and len(run.calibration_sha256) == 64


@pytest.mark.parametrize("bad, field, shown", [
    (10 ** 400, "scores[1]", "must be a finite number, got 1000000000"),  # beyond any double
    (True, "scores[1]", "got True"), ("0.5", "scores[1]", "got '0.5'"),
    (float("inf"), "scores[1]", "got inf")])
def test_a_bad_score_is_named_by_its_index(bad, field, shown):
    from harness.claims.calibration import validate_row
    from harness.core.formats import FormatError

    row = {"corpus": "c", "tier": "A", "query_id": "q", "query_class": None, "stage": "retrieve",
           "scores": [0.5, bad], "relevant": [False, True], "first_relevant_rank": 2}
    with pytest.raises(FormatError, match=shown) as info:
        validate_row(row, "calibration.jsonl", 7)
    assert (info.value.line, info.value.field) == (7, field)
