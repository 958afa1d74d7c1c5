"""harness.core.formats: strict readers (every error names file, line and field) and writers."""

from __future__ import annotations

import pytest

from harness.core.formats import (
    FormatError,
    read_beir_qrels,
    read_jsonl_qrels,
    read_jsonl_run,
    read_qrels,
    read_run,
    read_trec_qrels,
    read_trec_run,
    write_beir_qrels,
    write_jsonl,
    write_trec_qrels,
    write_trec_run,
)
from harness.core.records import Qrel, ScoredDoc
from harness.evaluation.scoring import score


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(reader, path, line, field, words):
    with pytest.raises(FormatError) as info:
        reader(path)
    err = info.value
    assert (err.path, err.line, err.field) == (str(path), line, field)
    where = f"{path}:{line}" if line is not None else str(path)
    assert str(err).startswith(where)
    if field:
        assert f"field '{field}'" in str(err)
    assert words in str(err)
    return err


# --------------------------------------------------------------------------- qrels


def test_trec_qrels_read_with_blank_lines_and_bom(tmp_path):
    path = write(tmp_path, "q.txt", "\ufeffq1 0 d1 2\n\nq1 0 d2 0\nq2 Q0 d1 -1\n")
    qrels = read_trec_qrels(path)
    assert qrels.judgements == {"q1": {"d1": 2, "d2": 0}, "q2": {"d1": -1}}
    assert qrels.negative_labels == 1
    assert qrels.qrels == [Qrel("q1", "d1", 2), Qrel("q1", "d2", 0), Qrel("q2", "d1", -1)]


def test_duplicate_judgement_names_both_lines(tmp_path):
    path = write(tmp_path, "q.txt", "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 0\n")
    err = refused(read_trec_qrels, path, 3, "doc_id", "duplicate judgement")
    assert "first seen on line 1" in str(err)


@pytest.mark.parametrize("label", ["1.0", "x", "1_0", "١", "", "+"])
def test_non_integer_relevance_is_refused(tmp_path, label):
    path = write(tmp_path, "q.txt", f"q1 0 d1 1\nq1 0 d2 {label}\n" if label else "q1 0 d1 1\nq1 0 d2\n")
    if label:
        refused(read_trec_qrels, path, 2, "relevance", "must be an integer")
    else:
        refused(read_trec_qrels, path, 2, "columns", "expected 4 columns")


def test_wrong_column_count_in_trec_qrels(tmp_path):
    path = write(tmp_path, "q.txt", "q1 0 d1 1\nq1 0 d1 1 extra\n")
    refused(read_trec_qrels, path, 2, "columns", "got 5")


def test_beir_header_in_a_trec_qrels_file(tmp_path):
    path = write(tmp_path, "q.txt", "query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    refused(read_trec_qrels, path, 1, "header", "BEIR header")


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_files_are_refused(tmp_path, text):
    for reader, name in [(read_trec_qrels, "q.txt"), (read_trec_run, "r.txt"),
                         (read_beir_qrels, "q.tsv"), (read_jsonl_qrels, "q.jsonl"),
                         (read_jsonl_run, "r.jsonl")]:
        refused(reader, write(tmp_path, name, text), None, None, "empty file")


def test_missing_file_is_named(tmp_path):
    refused(read_qrels, tmp_path / "nope.txt", None, None, "no such file")


def test_non_utf8_line_is_named(tmp_path):
    path = tmp_path / "q.txt"
    path.write_bytes(b"q1 0 d1 1\nq1 0 d\xff 1\n")
    refused(read_trec_qrels, path, 2, None, "not UTF-8")


def test_beir_qrels(tmp_path):
    path = write(tmp_path, "q.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t0\n")
    assert read_qrels(path).judgements == {"q1": {"d1": 1, "d2": 0}}


def test_beir_qrels_errors(tmp_path):
    refused(read_beir_qrels, write(tmp_path, "a.tsv", "q1\td1\t1\n"), 1, "header", "expected header")
    refused(read_beir_qrels, write(tmp_path, "b.tsv", "query-id\tcorpus-id\tscore\n"),
            None, None, "header but no judgements")
    refused(read_beir_qrels, write(tmp_path, "c.tsv", "query-id\tcorpus-id\tscore\nq1\td1\n"),
            2, "columns", "expected 3 tab-separated columns")
    refused(read_beir_qrels, write(tmp_path, "d.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t0.5\n"),
            2, "score", "must be an integer")
    refused(read_beir_qrels, write(tmp_path, "e.tsv", "query-id\tcorpus-id\tscore\nq1\t\t1\n"),
            2, "corpus-id", "empty")
    refused(read_beir_qrels,
            write(tmp_path, "f.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td1\t2\n"),
            3, "doc_id", "duplicate judgement")


def test_jsonl_qrels(tmp_path):
    path = write(tmp_path, "q.jsonl", '{"query_id": "q1", "doc_id": "d1", "relevance": 2}\n'
                                      '{"query_id": 7, "doc_id": "d1", "relevance": -1}\n')
    qrels = read_qrels(path)
    assert qrels.judgements == {"q1": {"d1": 2}, "7": {"d1": -1}}
    assert qrels.negative_labels == 1


@pytest.mark.parametrize("line, field, words", [
    ('{"doc_id": "d1", "relevance": 1}', "query_id", "missing"),
    ('{"query_id": "q1", "relevance": 1}', "doc_id", "missing"),
    ('{"query_id": "q1", "doc_id": "d1"}', "relevance", "missing"),
    ('{"query_id": "q1", "doc_id": "d1", "relevance": 1.0}', "relevance", "must be an integer"),
    ('{"query_id": "q1", "doc_id": "d1", "relevance": true}', "relevance", "must be an integer"),
    ('{"query_id": "", "doc_id": "d1", "relevance": 1}', "query_id", "empty"),
    ('{"query_id": ["q"], "doc_id": "d1", "relevance": 1}', "query_id", "expected a string"),
])
def test_jsonl_qrels_field_errors(tmp_path, line, field, words):
    path = write(tmp_path, "q.jsonl", '{"query_id": "q0", "doc_id": "d", "relevance": 1}\n' + line + "\n")
    refused(read_jsonl_qrels, path, 2, field, words)


def test_jsonl_line_that_is_not_an_object(tmp_path):
    refused(read_jsonl_qrels, write(tmp_path, "a.jsonl", "[1, 2]\n"), 1, None, "expected a JSON object")
    refused(read_jsonl_qrels, write(tmp_path, "b.jsonl", "{oops\n"), 1, None, "not valid JSON")


# --------------------------------------------------------------------------- runs


def test_trec_run_kept_in_rank_column_order(tmp_path):
    path = write(tmp_path, "r.txt", "q1 Q0 d2 2 0.5 t\nq1 Q0 d1 1 0.5 t\nq2 Q0 d1 1 -3e2 t\n")
    run = read_run(path)
    assert run == {"q1": [ScoredDoc("q1", "d1", 0.5), ScoredDoc("q1", "d2", 0.5)],
                   "q2": [ScoredDoc("q2", "d1", -300.0)]}


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "1e999"])
def test_non_finite_scores_are_refused(tmp_path, value):
    path = write(tmp_path, "r.txt", f"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 {value} t\n")
    refused(read_trec_run, path, 2, "score", "must be finite")


@pytest.mark.parametrize("value", ["high", "1_0.5", "0x10"])
def test_non_numeric_scores_are_refused(tmp_path, value):
    path = write(tmp_path, "r.txt", f"q1 Q0 d1 1 {value} t\n")
    refused(read_trec_run, path, 1, "score", "must be a number")


def test_trec_run_errors(tmp_path):
    refused(read_trec_run, write(tmp_path, "a.txt", "q1 Q0 d1 1 0.5\n"), 1, "columns", "expected 6 columns")
    refused(read_trec_run, write(tmp_path, "b.txt", "q1 Q0 d1 one 0.5 t\n"), 1, "rank", "must be an integer")
    err = refused(read_trec_run, write(tmp_path, "c.txt", "q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.4 t\n"),
                  2, "doc_id", "duplicate (query_id='q1', doc_id='d1')")
    assert "first seen on line 1" in str(err)


@pytest.mark.parametrize("line, field, words", [
    ('{"doc_id": "d1", "score": 1}', "query_id", "missing"),
    ('{"query_id": "q1", "score": 1}', "doc_id", "missing"),
    ('{"query_id": "q1", "doc_id": "d1"}', "score", "missing"),
    ('{"query_id": "q1", "doc_id": "d1", "score": NaN}', "score", "must be finite"),
    ('{"query_id": "q1", "doc_id": "d1", "score": "x"}', "score", "must be a number"),
    ('{"query_id": "q1", "doc_id": "d1", "score": true}', "score", "must be a number"),
    ('{"query_id": "q0", "doc_id": "d0", "score": 2}', "doc_id", "duplicate"),
])
def test_jsonl_run_field_errors(tmp_path, line, field, words):
    path = write(tmp_path, "r.jsonl", '{"query_id": "q0", "doc_id": "d0", "score": 1}\n' + line + "\n")
    refused(read_jsonl_run, path, 2, field, words)


# --------------------------------------------------------------------------- a file's unjudgeable query


def test_unjudgeable_query_from_a_file_is_dropped_and_counted(tmp_path):
    qrels = read_qrels(write(tmp_path, "q.txt", "q1 0 d1 1\nq2 0 d1 0\nq2 0 d2 -1\n"))
    run = read_run(write(tmp_path, "r.txt", "q1 Q0 d1 1 1.0 t\nq2 Q0 d1 1 1.0 t\n"))
    result = score(qrels.judgements, run, ["nDCG@10"])
    assert result.queries_dropped_unjudgeable == ("q2",)
    assert qrels.negative_labels == 1 and result.negative_labels == 1
    assert result.mean("nDCG@10") == 1.0


# --------------------------------------------------------------------------- writers


def test_writers_round_trip_sorted(tmp_path):
    qrels = [Qrel("q2", "d1", 1), Qrel("q1", "d9", -1), Qrel("q1", "d10", 3)]
    write_trec_qrels(tmp_path / "q.txt", qrels)
    assert (tmp_path / "q.txt").read_text() == "q1 0 d10 3\nq1 0 d9 -1\nq2 0 d1 1\n"
    assert read_qrels(tmp_path / "q.txt").qrels == sorted(qrels)
    write_beir_qrels(tmp_path / "q.tsv", {"q1": {"d1": 1}})
    assert (tmp_path / "q.tsv").read_text() == "query-id\tcorpus-id\tscore\nq1\td1\t1\n"
    run = {"q2": [ScoredDoc("q2", "b", 2.0)], "q1": [ScoredDoc("q1", "z", 0.1), ScoredDoc("q1", "a", 0.1)]}
    write_trec_run(tmp_path / "r.txt", run, tag="sys")
    assert (tmp_path / "r.txt").read_text() == (
        "q1 Q0 z 1 0.1 sys\nq1 Q0 a 2 0.1 sys\nq2 Q0 b 1 2.0 sys\n")
    assert read_run(tmp_path / "r.txt") == run
    write_jsonl(tmp_path / "x.jsonl", [{"b": 1.0, "a": "é"}])
    assert (tmp_path / "x.jsonl").read_text(encoding="utf-8") == '{"a":"é","b":1.0}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.tsv", "q.txt", "r.txt", "x.jsonl"]


def test_writers_refuse_what_trec_files_cannot_hold(tmp_path):
    with pytest.raises(FormatError, match="field 'doc_id'"):
        write_trec_qrels(tmp_path / "q.txt", [Qrel("q1", "two words", 1)])
    with pytest.raises(FormatError, match="field 'score'"):
        write_trec_run(tmp_path / "r.txt", {"q1": [ScoredDoc("q1", "d", float("nan"))]})
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_pausing_the_collector_keeps_it_working_and_others_frozen_objects_frozen():
    """``gc_paused``: the collector is back on afterwards, cyclic garbage made meanwhile is
    still collected, and objects someone else froze stay frozen."""
    import gc
    import weakref

    from harness.core.formats import gc_paused

    class Node:
        pass

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        node = Node()
        node.self = node  # a cycle only the collector frees
        gone = weakref.ref(node)
        del node
    assert gc.isenabled() and gone() is not None
    gc.collect()
    assert gone() is None
    kept = [Node() for _ in range(3)]
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            pass
        assert gc.get_freeze_count() == frozen and gc.isenabled()
    finally:
        gc.unfreeze()
    del kept


# a space str.split() splits on but trec_eval (C isspace) does not: part of an id
UNICODE_SPACES = ["\u00a0", "\u2003", "\u0085", "\x1c", "\x1d", "\x1e", "\x1f", "\u3000", "\u2028"]


def test_the_other_spaces_are_every_space_python_splits_on_but_ascii():
    import sys

    from harness.core.formats.base import _OTHER_SPACE, ASCII_SPACE

    python = {chr(i) for i in range(sys.maxunicode + 1) if chr(i).isspace()}
    assert python - set(ASCII_SPACE) == {c for c in python if _OTHER_SPACE.fullmatch(c)}
    assert set(ASCII_SPACE) == {" ", "\t", "\n", "\r", "\x0b", "\x0c"}


@pytest.mark.parametrize("space", UNICODE_SPACES)
def test_an_id_holding_a_unicode_space_is_read_as_trec_eval_reads_it(tmp_path, space):
    """Such an id was refused as 'expected 6 columns, got 7' on a line showing 6."""
    import json

    from harness.core.formats import beir, jsonl, trec

    doc = f"d{space}1"
    run = write(tmp_path, "run.txt", f"q1 Q0 {doc} 1 0.5 t\nq1 Q0 d2 2 0.25 t\n")
    qrels = write(tmp_path, "qrels.txt", f"q1 0 {doc} 1\nq1 0 d2 0\n")
    tsv = write(tmp_path, "qrels.tsv", f"query-id\tcorpus-id\tscore\nq1\t{doc}\t1\nq1\td2\t0\n")
    jrun = write(tmp_path, "run.jsonl", "".join(json.dumps({"query_id": "q1", "doc_id": d, "score": s}) + "\n"
                                                for d, s in ((doc, 0.5), ("d2", 0.25))))
    jqrels = write(tmp_path, "qrels.jsonl", "".join(
        json.dumps({"query_id": "q1", "doc_id": d, "relevance": r}) + "\n" for d, r in ((doc, 1), ("d2", 0))))
    expected_run = {"q1": [ScoredDoc("q1", doc, 0.5), ScoredDoc("q1", "d2", 0.25)]}
    expected_qrels = {"q1": {doc: 1, "d2": 0}}
    for path, reader, located in ((run, read_trec_run, trec._located_trec_run),
                                  (jrun, read_jsonl_run, jsonl._located_jsonl_run)):
        assert reader(path) == located(path) == expected_run
    for path, reader, located in ((qrels, read_trec_qrels, trec._located_trec_qrels),
                                  (tsv, read_beir_qrels, beir._located_beir_qrels),
                                  (jqrels, read_jsonl_qrels, jsonl._located_jsonl_qrels)):
        assert reader(path).judgements == located(path) == expected_qrels
    again = tmp_path / "again.txt"  # the writers keep it too
    write_trec_run(again, expected_run, tag="t")
    assert again.read_text(encoding="utf-8") == run.read_text(encoding="utf-8")
    # a line holding only such a space is no blank line: one field, refused as such
    refused(read_trec_run, write(tmp_path, "only.txt", f"q1 Q0 d1 1 0.5 t\n{space}\n"), 2, "columns",
            "expected 6 columns 'query_id Q0 doc_id rank score tag', got 1")
