"""The fast readers agree with the previous ones, line for line and error for error.

The oracle is the previous implementation, frozen in ``formats_reference.py``.  Files are
generated (hypothesis, a fixed derandomised budget) from valid lines and adversarial ones:
odd whitespace (tabs, runs, NBSP, file separators, CR), blank and whitespace-only lines,
byte-order marks, bytes that are not UTF-8, wrong column counts, duplicate pairs, ranks
out of order, queries that are not contiguous, every number syntax ``float`` and ``int``
accept or refuse, JSON that is not an object or not JSON.

Agreement means the same result, or a :class:`FormatError` with the same text, file, line
and field.  Lines carrying what only the new readers refuse (a label outside the 32-bit
range, an integer score beyond 2^53, a rank of more than 18 digits, JSON too deep or a
number too long to read, on which the old readers crashed or were silently wrong) are
marked by the generator: there the new reader must refuse, naming the file, and the line
of the first such mark or of the old reader's error, whichever comes first.
"""

from __future__ import annotations

import json
import re
from itertools import islice

import pytest
from hypothesis import given

from harness.core import formats
from harness.core.formats import beir, json_files, jsonl, runs, trec
from tests.harness.core import formats_reference as ref
from tests.harness.core.formats_fuzz import (
    _DIR,
    FUZZ,
    LABEL_VALUES,
    PLAIN_QRELS,
    PLAIN_RUN,
    SCORE_VALUES,
    _as_json,
    _columns_as_lists,
    _json_marks,
    _outcome,
    agree,
    beir_lines,
    files,
    json_lines,
    trec_qrels_lines,
    trec_qrels_trigger_lines,
    trec_run_lines,
    trec_run_trigger_lines,
)


@FUZZ
@given(files(trec_run_lines(), trec_run_trigger_lines(), plain=PLAIN_RUN))
def test_trec_run(case):
    agree(formats.read_trec_run, ref.read_trec_run, *case, ".txt")
    agree(_columns_as_lists, ref.read_trec_run, *case, ".txt")


@FUZZ
@given(files(trec_qrels_lines(), trec_qrels_trigger_lines(), plain=PLAIN_QRELS))
def test_trec_qrels(case):
    agree(formats.read_trec_qrels, ref.read_trec_qrels, *case, ".txt")


@FUZZ
@given(files(beir_lines(), beir_lines(trigger=True), header="query-id\tcorpus-id\tscore",
             plain=PLAIN_QRELS.map(lambda line: ("\t".join(line[0].split(" ")[::2][:1]
                                                           + line[0].split(" ")[2:]), None))))
def test_beir_qrels(case):
    agree(formats.read_beir_qrels, ref.read_beir_qrels, *case, ".tsv")


# --------------------------------------------------------------------------- JSONL

@FUZZ
@given(files(json_lines("score", SCORE_VALUES, [2 ** 53 + 1, 10 ** 30, -10 ** 400]),
             json_lines("score", SCORE_VALUES, [2 ** 53 + 1, 10 ** 30, -10 ** 400]),
             plain=PLAIN_RUN.map(_as_json("score"))))
def test_jsonl_run(case):
    data, trigger = case
    agree(formats.read_jsonl_run, ref.read_jsonl_run, data, _json_marks(data, trigger), ".jsonl")
    agree(_columns_as_lists, ref.read_jsonl_run, data, _json_marks(data, trigger), ".jsonl")


@FUZZ
@given(files(json_lines("relevance", LABEL_VALUES, [2 ** 31, 2 ** 32 - 1, 2 ** 63, -2 ** 31 - 1, 10 ** 30]),
             json_lines("relevance", LABEL_VALUES, [2 ** 31, 2 ** 32 - 1, 2 ** 63, 10 ** 30]),
             plain=PLAIN_QRELS.map(_as_json("relevance"))))
def test_jsonl_qrels(case):
    data, trigger = case
    agree(formats.read_jsonl_qrels, ref.read_jsonl_qrels, data, _json_marks(data, trigger), ".jsonl")


@FUZZ
@given(files(json_lines("value", SCORE_VALUES, [1]), json_lines("value", SCORE_VALUES, [1])))
def test_read_jsonl(case):
    data, _ = case
    agree(lambda p: list(formats.read_jsonl(p)), lambda p: list(ref.read_jsonl(p)),
          data, _json_marks(data, None), ".jsonl")


# --------------------------------------------------------------------------- by hand


def test_the_fast_path_is_taken_for_plain_files(monkeypatch):
    """A guard on the fast path itself: plain files never go line by line."""
    def located(*_):
        raise AssertionError("the line-by-line reader ran on a plain file")

    for module, name in ((trec, "_located_trec_run"), (trec, "_located_trec_qrels"),
                         (beir, "_located_beir_qrels"), (jsonl, "_located_jsonl_run"),
                         (jsonl, "_located_jsonl_qrels")):
        monkeypatch.setattr(module, name, located)
    run = _DIR / "plain-run.txt"
    run.write_text("q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.25 t\nq2 Q0 d1 1 3 t\n")
    assert formats.read_trec_run(run) == ref.read_trec_run(run)
    tabs = _DIR / "tabs-run.txt"  # the line-by-line split, still the fast reader
    tabs.write_text("q1\tQ0\td1\t2\t0.5\tt\r\n\nq1 Q0  d2 1 0.25 t\nq2 Q0 d1 1 3 t\nq1 Q0 d3 1 1 t\n")
    assert formats.read_trec_run(tabs) == ref.read_trec_run(tabs)
    qrels = _DIR / "plain-qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 -1\nq1 0 d2 0\n")
    assert formats.read_trec_qrels(qrels).judgements == ref.read_trec_qrels(qrels).judgements
    tsv = _DIR / "plain.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td1\t2\n")
    assert formats.read_beir_qrels(tsv).judgements == ref.read_beir_qrels(tsv).judgements
    jrun = _DIR / "plain-run.jsonl"
    jrun.write_text('{"query_id": "q1", "doc_id": "d1", "score": 0.5}\n'
                    '{"query_id": 2, "doc_id": "d1", "score": 1}\n')
    assert formats.read_jsonl_run(jrun) == ref.read_jsonl_run(jrun)
    jqrels = _DIR / "plain-qrels.jsonl"
    jqrels.write_text('{"query_id": "q1", "doc_id": "d1", "relevance": 2}\n')
    assert formats.read_jsonl_qrels(jqrels).judgements == ref.read_jsonl_qrels(jqrels).judgements


@pytest.mark.parametrize("label", ["4294967295", "2147483648", "-2147483649", "9223372036854775808",
                                   "1" * 5000])
def test_labels_outside_the_range_are_refused_by_every_qrels_reader(label):
    trec = _DIR / "range.txt"
    trec.write_text(f"q1 0 d1 1\nq1 0 d2 {label}\n")
    with pytest.raises(formats.FormatError) as info:
        formats.read_trec_qrels(trec)
    assert (info.value.path, info.value.line, info.value.field) == (str(trec), 2, "relevance")
    assert "outside the supported range -2147483648 .. 2147483647" in str(info.value)
    tsv = _DIR / "range.tsv"
    tsv.write_text(f"query-id\tcorpus-id\tscore\nq1\td1\t{label}\n")
    with pytest.raises(formats.FormatError) as info:
        formats.read_beir_qrels(tsv)
    assert (info.value.line, info.value.field) == (2, "score")
    if len(label) < 4000:
        jsonl = _DIR / "range.jsonl"
        jsonl.write_text(f'{{"query_id": "q1", "doc_id": "d1", "relevance": 1}}\n\n'
                         f'{{"query_id": "q1", "doc_id": "d2", "relevance": {label}}}\n')
        with pytest.raises(formats.FormatError) as info:
            formats.read_jsonl_qrels(jsonl)
        assert (info.value.line, info.value.field) == (3, "relevance")


def test_labels_at_the_edges_of_the_range_are_read():
    path = _DIR / "edges.txt"
    path.write_text("q1 0 d1 2147483647\nq1 0 d2 -2147483648\nq1 0 d3 00000000000000000000001\n")
    assert formats.read_trec_qrels(path).judgements == {
        "q1": {"d1": 2 ** 31 - 1, "d2": -2 ** 31, "d3": 1}}


@pytest.mark.parametrize("score, words", [
    ("9007199254740993", "beyond +-2^53"), ("1" + "0" * 30, "beyond +-2^53"),
    ("1e400", "must be finite"), ("-1e400", "must be finite"),
])
def test_unrepresentable_scores_are_refused_in_trec_runs(score, words):
    path = _DIR / "scores.txt"
    path.write_text(f"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 {score} t\n")
    with pytest.raises(formats.FormatError, match=re.escape(words)) as info:
        formats.read_trec_run(path)
    assert (info.value.line, info.value.field) == (2, "score")


@pytest.mark.parametrize("score", ["9007199254740993", "1" + "0" * 30, "-" + "1" * 400])
def test_integer_json_scores_beyond_2_53_are_refused(score):
    path = _DIR / "scores.jsonl"
    path.write_text(f'{{"query_id": "q1", "doc_id": "d1", "score": {score}}}\n')
    with pytest.raises(formats.FormatError, match=r"beyond \+-2\^53") as info:
        formats.read_jsonl_run(path)
    assert (info.value.line, info.value.field) == (1, "score")
    # a decimal of the same size is a double, and is read as one
    path.write_text(f'{{"query_id": "q1", "doc_id": "d1", "score": {score}.0}}\n')
    if len(score) < 300:
        assert formats.read_jsonl_run(path)["q1"][0].score == float(score)


def test_deep_and_long_json_is_located(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n' + "[" * 100000 + "]" * 100000 + "\n")
    with pytest.raises(formats.FormatError, match="nested too deeply") as info:
        list(formats.read_jsonl(path))
    assert (info.value.path, info.value.line) == (str(path), 2)
    path.write_text('{"a": 1}\n{"a": 2}\n{"a": ' + "1" * 5000 + "}\n")
    with pytest.raises(formats.FormatError, match="more digits than can be read") as info:
        list(formats.read_jsonl(path))
    assert info.value.line == 3
    doc = tmp_path / "x.json"
    doc.write_text('{\n"a": [\n' + "[" * 100000 + "]" * 100000 + "]}\n")
    with pytest.raises(formats.FormatError, match="nested too deeply") as info:
        formats.read_json_object(doc)
    assert (info.value.path, info.value.line) == (str(doc), 3)
    doc.write_text('{\n"a":\n' + "9" * 5000 + "}\n")
    with pytest.raises(formats.FormatError, match="more digits") as info:
        formats.read_json_object(doc)
    assert info.value.line == 3


@pytest.mark.parametrize("text", [
    "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.5 ",  # the last line: five columns and a space
    "q1\tQ0 d1 1 0.5 t x\nq1 Q0 d2 2 0.5 t\n",  # a tab and five spaces: seven columns
    "q1 Q0 d1 1 0.5 t\tx\nq1 Q0 \t 2 0.5 t\n",  # seven and five columns: twelve fields
    # the same with every other ASCII space
    *(f"q1 Q0 d1 1 0.5 t{c}x\nq1 Q0 {c} 2 0.5 t\n" for c in "\r\x0b\x0c\x1c\x1d\x1e\x1f"),
    "q1 Q0 d1 1 0.5 t\n\nq1 Q0 d2 2 0.5 t\n",  # a blank line
    "q1 Q0 d1 1 0.5 t\n \nq1 Q0 d2 2 0.5 t\n",  # a line of one space
    "q1 Q0 d1 1_0 0.5 t\nq1 Q0 d2 2 0.5 t\n",  # int() reads 1_0, a TREC reader does not
    "q1 Q0 d1 ٣ 0.5 t\nq1 Q0 d2 2 0.5 t\n",  # nor an Arabic-Indic digit
    "q1 Q0 d1 1 0.5 t\nq1 Q0 d1 2 0.5 t\n",  # a duplicate pair in one block
    "q1 Q0 d1 1 0.5 t\nq2 Q0 d1 2 0.5 t\nq1 Q0 d1 2 0.5 t\n",  # ... across blocks
])
def test_plain_looking_runs_agree(text):
    path = _DIR / "plain-looking.txt"
    path.write_text(text, encoding="utf-8")
    assert _outcome(formats.read_trec_run, path)[0] == _outcome(ref.read_trec_run, path)[0]
    new, old = _outcome(formats.read_trec_run, path)[1], _outcome(ref.read_trec_run, path)[1]
    assert str(new) == str(old)


def test_long_ranks_are_refused():
    path = _DIR / "ranks.txt"
    path.write_text("q1 Q0 d1 " + "1" * 19 + " 0.5 t\n")
    with pytest.raises(formats.FormatError, match="more than 18 digits") as info:
        formats.read_trec_run(path)
    assert (info.value.line, info.value.field) == (1, "rank")
    path.write_text("q1 Q0 d1 " + "0" * 30 + "7 0.5 t\n")  # leading zeros are not digits of size
    assert formats.read_trec_run(path)["q1"][0].doc_id == "d1"


def test_blocks_of_a_long_jsonl_file_keep_their_line_numbers(monkeypatch):
    monkeypatch.setattr(json_files, "_JSONL_BLOCK", 64)  # a block every few lines
    path = _DIR / "blocks.jsonl"
    lines = [json.dumps({"query_id": f"q{i % 7}", "doc_id": f"d{i}", "score": i / 3})
             for i in range(200)]
    lines[3] = ""
    lines[150] = '{"query_id": "q1", "doc_id": "d1", "score": 0.5}'  # a duplicate pair
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(formats.FormatError) as info:
        formats.read_jsonl_run(path)
    assert str(info.value) == str(_outcome(ref.read_jsonl_run, path)[1])
    assert info.value.line == 151
    lines[150] = "[]"
    path.write_text("\n".join(lines) + "\n")
    assert [n for n, _ in islice(formats.read_jsonl(path), 5)] == [1, 2, 3, 5, 6]
    with pytest.raises(formats.FormatError, match="expected a JSON object") as info:
        list(formats.read_jsonl(path))
    assert info.value.line == 151
    path.write_bytes("\n".join(lines[:100]).encode() + b"\n\xff\n")
    with pytest.raises(formats.FormatError, match="not UTF-8") as info:
        list(formats.read_jsonl(path))
    assert info.value.line == 101


@pytest.mark.parametrize("lines", [
    ['{"a": [1', '2]}', '{}, {}'],  # a value across two lines, two values on one
    ['{"x": "]}", "y": [1', '2], "w": "[{"}', '{}, {}'],
    ['{}', '"harness-jsonl-joint-7f3a9c"', '{}'],  # the joint itself on a line
    ['{}, "\\u0068arness-jsonl-joint-7f3a9c", {}', '{}'],  # ... or spelled with an escape
    ['{}', '], [{}'],
    # each of these passes every check of the joined read but one
    ['{"a": [1', '2]}, "harness-jsonl-joint-7f3a9c", {}'],  # the joint written on a line
    ['{"a": [1', '2]}, "\\u0068arness-jsonl-joint-7f3a9c", {}'],  # ... with an escape
    ['{}', '{}, {}'],  # every joint in place, one value too many
    ['{}, {}, {}', '{"a": [1', '2]}'],  # as many values as expected, a joint inside one
    # the empty-string joint, where no line holds "": the same forgeries with it
    ['{"a": [1', '2]}, "", {}'],
    ['{}', '""', '{}'],
    ['{}, "", {}', '{}'],
    ['{"k": ""}', '{"a": [1', '2]}, {}'],  # a line holds "": the long joint is used
    ['{"k": "", "e": "\u00e9"}', '{}'],  # "" and an escape: line by line
])
def test_lines_that_only_read_together_are_refused(lines):
    path = _DIR / "together.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    new, old = _outcome(lambda p: list(formats.read_jsonl(p)), path), _outcome(
        lambda p: list(ref.read_jsonl(p)), path)
    assert new[0] == old[0] and str(new[1]) == str(old[1])
    assert (new[1] is None) == (old[1] is None)


@pytest.mark.parametrize("ranks", [
    ["1", "2", "3"], ["0", "1", "2"], ["1", "2", "2"], ["1", "3", "4"], ["01", "2", "3"],
    ["3", "2", "1"], ["+1", "2", "3"], ["1", "2", "3" + "0" * 17], ["0", "0", "1"], ["2", "3", "4"]])
def test_runs_numbered_in_file_order_agree(ranks):
    """A run whose ranks count 1, 2, 3 (or 0, 1, 2) in file order skips converting its rank
    column; any other numbering takes the converting path, and both agree with the
    previous reader (list order, scores, errors)."""
    lines = [f"q{q} Q0 d{i} {rank} {1 - i / 10} t" for q in (1, 2) for i, rank in enumerate(ranks)]
    agree(formats.read_trec_run, ref.read_trec_run, ("\n".join(lines) + "\n").encode(), None,
          ".txt")
    assert runs._counting([r for _ in (1, 2) for r in ranks], [0, 3]) == (
        ranks in (["1", "2", "3"], ["0", "1", "2"]))


def test_counting_runs_skip_the_rank_conversion(monkeypatch):
    def converted(_):
        raise AssertionError("the rank column of a counting run was converted")

    monkeypatch.setattr(runs, "_ranks", converted)
    path = _DIR / "counting-run.txt"
    path.write_text("".join(f"q{q} Q0 d{i} {i + 1} {0.5 - i / 100} t\n"
                            for q in range(3) for i in range(1200)))  # past the first 1024 texts
    run = formats.read_trec_run(path)
    assert [d.doc_id for d in run["q2"][:3]] == ["d0", "d1", "d2"] and len(run["q2"]) == 1200


@pytest.mark.parametrize("body", [
    '{"query_id":"q1","doc_id":"d1","score":1}\n{"query_id":"q1","doc_id":"d2","score":0.5}\n',
    '{"query_id":"q1","doc_id":"d1","score":1}\n\n{"query_id":"q1","doc_id":"d2","score":0.5}\n',
    '{"query_id":"q1","doc_id":"d1","score":1}\n   \n{"query_id":"q1","doc_id":"d2","score":0.5}',
    '{"query_id":"q1","doc_id":"d1","score":1}\n {"query_id":"q1","doc_id":"d2","score":0.5}\n',
    '{"query_id":"q1","doc_id":"d1","score":1}\n\t\n',
    '{"query_id":"q1",\n"doc_id":"d1","score":1}\n'])
def test_jsonl_lines_that_all_open_an_object_agree(body):
    """Blocks whose every line starts with "{" are split without looking for blank lines;
    a blank or indented line anywhere takes the general split, and both agree."""
    agree(formats.read_jsonl_run, ref.read_jsonl_run, body.encode(), None, ".jsonl")
