"""orjson's reads agree with the standard library's wherever the readers take them.

The oracles are ``json.loads`` of each line and ``float`` of each text; the readers'
agreement with their previous versions on adversarial files is ``test_formats_fast.py``.
"""

from __future__ import annotations

import json
import math
import struct
import sys

import pytest
from hypothesis import given, settings, strategies as st

from harness.core import fast_json, formats
from tests.harness.core import formats_reference as ref

SETTINGS = settings(max_examples=300, deadline=None, database=None, derandomize=True)

#: number texts of every syntax float() or JSON accepts or refuses
NUMBER_TEXTS = ["0.5", "-0.25", "1e-5", "1E5", "1e+5", "-0.0", "0.0", "1e400", "-1e400",
                "1e-400", "nan", "NaN", "inf", "Infinity", ".5", "5.", "+0.5", "00.5",
                "1_0.5", "0x1p3", "1,5", "[1.5", "1.5]", "{}", '"1.5"', "true", "-0", "0",
                "7", "1.7976931348623157e308", "4.9e-324", "2.2250738585072011e-308",
                "9007199254740993.0", "0." + "1" * 40, "١.٥"]


def _floats(texts):
    try:
        return [float(t) for t in texts]
    except ValueError:
        return None


@SETTINGS
@given(st.lists(st.one_of(st.sampled_from(NUMBER_TEXTS),
                          st.floats(allow_nan=False, allow_infinity=False).map(repr),
                          st.integers(0, 2 ** 64).map(lambda b: repr(struct.unpack(
                              "d", (b % 2 ** 64).to_bytes(8, "little"))[0]))),
                min_size=1, max_size=12))
def test_decimal_floats_are_float_of_each_text_or_none(texts):
    got = fast_json.decimal_floats(texts)
    if got is None:
        return
    expected = _floats(texts)
    assert expected is not None, texts
    assert list(map(repr, got)) == list(map(repr, expected))  # -0.0 kept apart from 0.0


@pytest.mark.parametrize("texts", [["-0"], ["0", "0.5"], ["1,5"], ["[1.5", "1.5]"],
                                   ["[1.5", "2.5]", "3.5,4.5"], ["nan"], ["1e400"], [".5"],
                                   ["5."], ["+0.5"], ['"a,b"'], ["1_0.5"]])
def test_texts_that_are_not_one_json_float_each_get_none(texts):
    assert fast_json.decimal_floats(texts) is None


LINE_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6),
              st.sampled_from(["", "harness-jsonl-joint-7f3a9c", "\ud800", "\x01"])),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                  max_size=3),
    max_leaves=6)
RAW_LINES = st.sampled_from(["", "  ", "{", "}", '{"a": 1} {"b": 2}', '{"a": 1},{"b": 2}',
                             "NaN", '{"a": NaN}', '{"a": 1e400}', '[1,', '2]', '"\\u0068"',
                             '{"a": ""}', '{"a": "x\\"y"}', "\ufeff{}", '{"a": 1}\r',
                             '{"a": 1, "a": 2}', "[" * 1100 + "]" * 1100])


@SETTINGS
@given(st.lists(st.one_of(LINE_VALUES.map(lambda v: json.dumps(v, ensure_ascii=False)),
                          LINE_VALUES.map(json.dumps), RAW_LINES), min_size=1, max_size=8),
       st.booleans())
def test_block_values_are_json_loads_of_each_line_or_none(lines, final_newline):
    data = ("\n".join(lines) + ("\n" if final_newline else "")).encode("utf-8",
                                                                       "surrogatepass")
    got = fast_json.block_values(data)
    if got is None:
        return
    expected = [json.loads(line) for line in data.decode("utf-8").removesuffix("\n").split("\n")]
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        # the one documented difference: integers beyond 64 bits come back as floats
        assert a == b or _big_ints_as_floats(a, b), (a, b)


def _big_ints_as_floats(a, b) -> bool:
    if isinstance(b, int) and not isinstance(b, bool) and abs(b) >= 2 ** 63:
        return isinstance(a, float) and a == float(b)
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return all(x == y or _big_ints_as_floats(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict) and list(a) == list(b):
        return all(a[k] == b[k] or _big_ints_as_floats(a[k], b[k]) for k in a)
    return isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)


def test_a_line_of_two_values_or_two_lines_of_one_get_none():
    assert fast_json.block_values(b'{"a": [1\n2]}\n{},{}\n') is None
    assert fast_json.block_values(b'{"s": "a}\n{b"}\n{},{}\n') is None
    assert fast_json.block_values(b'{}\n\n{}\n') is None  # a blank line
    assert fast_json.block_values(b'{"a": ""}\n{"b": "\\u0068arness-jsonl-joint-7f3a9c"}\n') is None
    assert fast_json.block_values(b'{"a": ""}\n{"b": 2}\n') == [{"a": ""}, {"b": 2}]


def test_readers_read_the_same_without_orjson(tmp_path, monkeypatch):
    run, qrels, trec = tmp_path / "run.jsonl", tmp_path / "qrels.jsonl", tmp_path / "run.txt"
    run.write_text("".join(json.dumps({"query_id": f"q{i % 3}", "doc_id": f"d{i}",
                                       "score": 1.0 / (i + 1)}) + "\n" for i in range(30)))
    qrels.write_text("".join(json.dumps({"query_id": f"q{i % 3}", "doc_id": f"d{i}",
                                         "relevance": i % 3 - 1}) + "\n" for i in range(30)))
    trec.write_text("".join(f"q{i // 10} Q0 d{i} {i % 10 + 1} {-0.5 * i} t\n" for i in range(30)))
    with_orjson = (formats.read_jsonl_run(run), formats.read_jsonl_qrels(qrels),
                   formats.read_trec_run(trec))
    monkeypatch.setitem(sys.modules, "orjson", None)  # import orjson raises ImportError
    assert fast_json.block_values(b"{}\n") is None and fast_json.decimal_floats(["0.5"]) is None
    without = (formats.read_jsonl_run(run), formats.read_jsonl_qrels(qrels),
               formats.read_trec_run(trec))
    assert with_orjson == without
    assert with_orjson[0] == ref.read_jsonl_run(run)
    assert with_orjson[1].judgements == ref.read_jsonl_qrels(qrels).judgements
    assert with_orjson[1].negative_labels == sum(i % 3 == 0 for i in range(30)) == 10
    assert with_orjson[2] == ref.read_trec_run(trec)
