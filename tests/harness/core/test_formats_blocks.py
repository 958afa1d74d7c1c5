"""The run readers read a file a block of lines at a time: they agree with the previous
readers (``formats_reference.py``) wherever the blocks end.

Blocks are made small (down to one line each) so that a query's lines, a duplicate pair,
ranks that count or stop counting, and bad lines fall on either side of block ends.  The
fuzzed files of ``test_formats_fast`` are read so too, and so are runs numbered in file
order with a few lines changed.
"""

from __future__ import annotations

import json
from contextlib import contextmanager

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness.core import formats
from harness.core.formats import base, json_files
from harness.core.formats import jsonl as jsonl_module, trec as trec_module
from tests.harness.core import formats_reference as ref
from tests.harness.core.formats_fuzz import (
    _DIR,
    FUZZ,
    PLAIN_RUN,
    SCORE_VALUES,
    _as_json,
    _columns_as_lists,
    _json_marks,
    agree,
    files,
    json_lines,
    trec_run_lines,
    trec_run_trigger_lines,
)

#: bytes per block: 1 makes every line a block of its own
SIZES = st.sampled_from([1, 20, 64, 150, 400, 1 << 18])


@contextmanager
def blocks_of(size: int):
    saved = base._TEXT_BLOCK, json_files._JSONL_BLOCK
    base._TEXT_BLOCK = json_files._JSONL_BLOCK = size
    try:
        yield
    finally:
        base._TEXT_BLOCK, json_files._JSONL_BLOCK = saved


# what both the previous and the current readers accept or refuse alike
RANK_CHANGES = ["0", "1", "2", "5", "01", "+1", "-1", "x", "1_0", "1.0", "٣"]
SCORE_CHANGES = ["1", "-0", "0.25", "nan", "1e400", "abc", "0x10", "1_0", "+.5"]


@st.composite
def counting_runs(draw):
    """Rows ``[query, Q0, doc, rank, score, tag]`` of runs numbered 1, 2, 3 (or from 0) in
    file order, queries perhaps met again, and a few rows changed."""
    rows = []
    for _ in range(draw(st.integers(1, 6))):
        query = f"q{draw(st.integers(1, 4))}"
        first = draw(st.sampled_from([0, 1, 1, 1]))
        docs = draw(st.lists(st.integers(0, 60), min_size=1, max_size=30, unique=True))
        rows += [[query, "Q0", f"d{doc}", str(first + i), repr(0.5 - i / 64), "run"]
                 for i, doc in enumerate(docs)]
    for _ in range(draw(st.integers(0, 2))):
        row = rows[draw(st.integers(0, len(rows) - 1))]
        column = draw(st.sampled_from([2, 3, 3, 4, 5]))
        row[column] = draw(st.sampled_from({
            2: ["d0", "d1", "d2"], 3: RANK_CHANGES, 4: SCORE_CHANGES, 5: ["run2", "t"]}[column]))
    return rows


def _text(draw, rows) -> bytes:
    gap = draw(st.sampled_from([" ", " ", " ", "\t", "  "]))
    ending = draw(st.sampled_from(["\n", "\n", "\r\n"]))
    text = ending.join(gap.join(row) for row in rows)
    return (text + draw(st.sampled_from([ending, ""]))).encode()


@st.composite
def counting_files(draw):
    return _text(draw, draw(counting_runs()))


@st.composite
def counting_jsonl(draw):
    rows = draw(counting_runs())
    lines = []
    for query, _, doc, _, score, _ in rows:
        try:
            value = json.loads(score)
        except ValueError:
            value = score
        lines.append(json.dumps({"query_id": query, "doc_id": doc, "score": value}))
    return ("\n".join(lines) + "\n").encode()


def agree_in_blocks(size, reader, data, trigger, suffix):
    """``reader`` and ``read_run_columns`` agree with the previous ``reader`` on ``data``
    read in blocks of ``size`` bytes."""
    with blocks_of(size):
        agree(getattr(formats, reader), getattr(ref, reader), data, trigger, suffix)
        agree(_columns_as_lists, getattr(ref, reader), data, trigger, suffix)


@FUZZ
@given(files(trec_run_lines(), trec_run_trigger_lines(), plain=PLAIN_RUN), SIZES)
def test_trec_run_in_blocks(case, size):
    agree_in_blocks(size, "read_trec_run", *case, ".txt")


@FUZZ
@given(counting_files(), SIZES)
def test_counting_trec_runs_in_blocks(data, size):
    agree_in_blocks(size, "read_trec_run", data, None, ".txt")


@FUZZ
@given(files(json_lines("score", SCORE_VALUES, [2 ** 53 + 1, 10 ** 30]),
             json_lines("score", SCORE_VALUES, [2 ** 53 + 1, 10 ** 30]),
             plain=PLAIN_RUN.map(_as_json("score"))), SIZES)
def test_jsonl_run_in_blocks(case, size):
    data, trigger = case
    agree_in_blocks(size, "read_jsonl_run", data, _json_marks(data, trigger), ".jsonl")


@FUZZ
@given(counting_jsonl(), SIZES)
def test_counting_jsonl_runs_in_blocks(data, size):
    agree_in_blocks(size, "read_jsonl_run", data, None, ".jsonl")


# --------------------------------------------------------------------------- by hand


def _rows(queries, docs, first=1, names=0):
    return [[f"q{q}", "Q0", f"d{names + d}", str(first + d), repr(1 - d / docs), "run"]
            for q in queries for d in range(docs)]


CASES = {
    "counting": _rows(range(40), 50),
    "counting from 0": _rows(range(40), 50, first=0),
    "one long query": _rows([1], 2000),
    "a query met again": _rows(range(20), 50) + _rows([3], 50, first=0, names=50),
    "ranks out of file order": _rows(range(30), 50)[::-1],
    "a query numbered twice": _rows([1], 50) + _rows([1], 50, names=50),  # ties interleave
    "ties in the last block": _rows(range(40), 50)[:-1] + [["q39", "Q0", "d49", "48", "0", "run"]],
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("size", [1, 100, 4096])
def test_runs_over_many_blocks_take_the_fast_path(name, size, monkeypatch):
    """Runs of many blocks (a query's lines on both sides of block ends) are read without
    the line-by-line reader, and as the previous reader reads them."""
    def located(*_):
        raise AssertionError("the line-by-line reader ran on a plain run")

    for module, reader in ((trec_module, "_located_trec_run"), (jsonl_module, "_located_jsonl_run")):
        monkeypatch.setattr(module, reader, located)
    rows = CASES[name]
    trec = _DIR / "blocks-run.txt"
    trec.write_text("".join(" ".join(row) + "\n" for row in rows))
    jsonl = _DIR / "blocks-run.jsonl"
    jsonl.write_text("".join(json.dumps({"query_id": q, "doc_id": d, "score": float(s)}) + "\n"
                             for q, _, d, _, s, _ in rows))
    with blocks_of(size):
        assert formats.read_trec_run(trec) == ref.read_trec_run(trec)
        assert formats.read_jsonl_run(jsonl) == ref.read_jsonl_run(jsonl)
        assert _columns_as_lists(trec) == ref.read_trec_run(trec)
        assert _columns_as_lists(jsonl) == ref.read_jsonl_run(jsonl)


@pytest.mark.parametrize("size", [1, 100, 4096, 1 << 18])
@pytest.mark.parametrize("where", [1, 777, 1999])
def test_a_duplicate_across_block_ends_is_located(size, where):
    rows = _rows([1], 2000)
    rows[where][2] = rows[where - 1][2]  # the line before's document, perhaps a block before
    trec = _DIR / "duplicate-run.txt"
    trec.write_text("".join(" ".join(row) + "\n" for row in rows))
    with blocks_of(size), pytest.raises(formats.FormatError) as new:
        formats.read_trec_run(trec)
    with pytest.raises(ref.FormatError) as old:
        ref.read_trec_run(trec)
    assert (str(new.value), new.value.line, new.value.field) == (
        str(old.value), where + 1, "doc_id")


@pytest.mark.parametrize("again", [1, 0, 51])
def test_a_query_numbered_again_from_a_block_start(again):
    """A query's numbering that starts over where a block starts is no count: the lines
    are ordered by rank (ties in file order), as the previous reader orders them."""
    head = "".join(" ".join(row) + "\n" for row in _rows([1], 50))
    tail = "".join(" ".join(row) + "\n" for row in _rows([1], 50, first=again, names=50))
    path = _DIR / "numbered-again.txt"
    path.write_text(head + tail)
    with blocks_of(len(head.encode())):
        assert list(base._text_blocks(path)) == [head, tail]
        assert formats.read_trec_run(path) == ref.read_trec_run(path)
        assert _columns_as_lists(path) == ref.read_trec_run(path)


def test_blocks_of_blank_lines_are_passed_over(monkeypatch):
    def located(*_):
        raise AssertionError("the line-by-line reader ran on a run with blank lines")

    monkeypatch.setattr(trec_module, "_located_trec_run", located)
    lines = [" ".join(row) + "\n" for row in _rows([1, 2], 20)]
    path = _DIR / "blank-blocks.txt"
    path.write_text("".join(lines[:25]) + "\n" * 50 + " \t \n" * 20 + "".join(lines[25:]) + "\n\n")
    with blocks_of(40):
        assert formats.read_trec_run(path) == ref.read_trec_run(path)
    path.write_text("\n" * 50 + " \n")
    with blocks_of(40), pytest.raises(AssertionError):  # no record: the line-by-line reader
        formats.read_trec_run(path)
