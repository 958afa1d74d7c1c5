"""The run reader's RunColumns: each list's ``{doc_id: score}`` built while finding repeated
documents is what the scorer hands trec_eval, and only while the list is the one read."""

from __future__ import annotations

from harness.core.formats import read_run_columns
from harness.core.records import RankedDocs, RunColumns
from harness.evaluation import ordering
from harness.evaluation.scoring import score


def _run(tmp_path, lines):
    path = tmp_path / "run.txt"
    path.write_text("".join(lines), encoding="utf-8")
    return read_run_columns(path)


def test_the_reader_keeps_each_lists_mapping_in_file_order(tmp_path):
    run = _run(tmp_path, ["q1 Q0 b 1 0.9 t\n", "q1 Q0 a 2 0.5 t\n", "q2 Q0 c 1 0.3 t\n"])
    assert isinstance(run, RunColumns)
    assert run["q1"] == RankedDocs(["b", "a"], [0.9, 0.5])
    taken = run.take_mappings()
    assert list(taken) == ["q1", "q2"]
    assert list(taken["q1"].items()) == [("b", 0.9), ("a", 0.5)]
    assert taken["q2"] == {"c": 0.3}
    assert run.take_mappings() == {}  # handed over once


def test_a_list_spanning_read_blocks_has_one_mapping(tmp_path, monkeypatch):
    from harness.core.formats import base

    monkeypatch.setattr(base, "_TEXT_BLOCK", 64)  # a few lines a block
    lines = [f"q1 Q0 d{i} {i + 1} {1 - i / 100} t\n" for i in range(40)]
    run = _run(tmp_path, lines + ["q2 Q0 x 1 0.5 t\n"])
    taken = run.take_mappings()
    assert list(taken["q1"]) == [f"d{i}" for i in range(40)]
    assert taken["q2"] == {"x": 0.5}


def test_a_list_changed_after_reading_has_no_mapping(tmp_path):
    run = _run(tmp_path, ["q1 Q0 b 1 0.9 t\n", "q1 Q0 a 2 0.5 t\n", "q2 Q0 c 1 0.3 t\n"])
    run["q1"].scores[0] = 0.1  # changed in place
    run["q2"] = RankedDocs(["c", "e"], [0.3, 0.2])  # replaced by another list
    assert run.take_mappings() == {}
    # and the scorer then builds its own from the list as it now is
    assert ordering.as_dict(run["q1"], "q1", None) == {"b": 0.1, "a": 0.5}


def test_scoring_the_reader_columns_equals_scoring_a_plain_copy(tmp_path, monkeypatch):
    lines = [f"q{q} Q0 d{d} {d + 1} {round(1 - d / 7 - q / 100, 6)} t\n"
             for q in range(5) for d in range(7)]
    run = _run(tmp_path, lines)
    qrels = {f"q{q}": {f"d{d}": (q + d) % 3 for d in range(0, 7, 2)} for q in range(5)}
    built = []
    real = ordering.as_dict
    monkeypatch.setattr("harness.evaluation.scoring.as_dict",
                        lambda docs, q, read=None: built.append(read is None) or real(docs, q, read))
    measures = ["nDCG@10", "AP", "MRR", "P@5"]
    from_reader = score(qrels, run, measures, keep_rankings=10)
    assert built == [False] * 5  # every list's mapping came from the reader
    built.clear()
    plain = score(qrels, {q: RankedDocs(list(d.doc_ids), list(d.scores)) for q, d in run.items()},
                  measures, keep_rankings=10)
    assert built == [True] * 5
    assert from_reader.per_query == plain.per_query
    assert dict(from_reader.rankings.items()) == dict(plain.rankings.items())
    built.clear()
    again = score(qrels, run, measures, keep_rankings=10)  # the mappings were handed over
    assert built == [True] * 5 and again.per_query == plain.per_query
