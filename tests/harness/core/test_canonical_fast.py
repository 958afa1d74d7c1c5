"""The fast canonical writer writes the bytes the previous writer wrote, and raises its errors.

The oracle is the previous implementation, frozen in ``canonical_reference.py``.  Values
are random (hypothesis, a fixed derandomised budget) plus hand-picked edge cases: floats
that round at the tenth decimal, ``-0.0``, subnormals, 1e-300 / 1e300, the boundaries of
the fixed-point range the column writer formats itself (1e-4, 1e5), ints against floats,
booleans, None, escapes and non-ASCII text, nesting, key order, :class:`Unrounded`.
"""

from __future__ import annotations

import math
import struct

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness.core import canonical
from harness.core.canonical import Unrounded, canonical_json, canonical_line, canonical_lines
from tests.harness.core import canonical_reference as ref

FUZZ = settings(max_examples=400, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

EDGE_FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.5, 1e-300, -1e-300, 1e300, -1e300, 5e-324, -5e-324,
    2.2250738585072014e-308, 2.225073858507201e-308,  # smallest normal, largest subnormal
    1.7976931348623157e308, 1e16, 1e15 + 0.3, 123456.78901234567, 99999.99999999999,
    99999.0, 99998.99999999999, 100000.0, 1e5 + 1e-10, 1e-4, 1.0001e-4, 9.999999999e-5,
    0.00009999999995, 0.00009999999994, 5e-11, 4.9999999999e-11, 5.0000000001e-11, -5e-11,
    1e-10, -1e-10, 1.5e-10, 2.5e-10, 0.12345678905, 0.12345678915, 0.99999999995,
    0.999999999949, -0.99999999995, 1 / 3, 2 / 3, 0.1 + 0.2, 0.1 + 0.2 - 0.3, 2.0 ** -54,
    0.30000000000000004, 12345.67890123456, -12345.67890123456, 1e-5, 2.5e-5, 0.001,
    0.0001, 0.00010000000001, 10.0, 100.0, 1000.00000000005, 0.8927648663520813,
    float.fromhex("0x1.fffffffffffffp-1"), float.fromhex("0x1p-1074"),
    # past the fixed range: 16 or more significant digits, where repr is shorter or longer
    987654.1234567891, 999999.9999999999, 1234567.1234567, 87654321.87654321,
    999999999.9999, 1234567890.1234567,
]
#: floats exactly halfway at the tenth decimal in their decimal text, and their neighbours
TIES = [k / 10 ** 10 + 5e-11 for k in (0, 1, 2, 12345, 99999999)]
TIES += [math.nextafter(x, math.inf) for x in TIES] + [math.nextafter(x, -math.inf) for x in TIES]

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.integers(-2 ** 70, 2 ** 70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(-1e6, 1e6, allow_nan=False), st.floats(-1e-3, 1e-3, allow_nan=False),
    st.sampled_from(EDGE_FLOATS + TIES),
    st.builds(lambda bits: struct.unpack("<d", struct.pack("<Q", bits))[0],
              st.integers(0, 2 ** 64 - 1)).filter(math.isfinite),
    st.text(), st.text(alphabet=st.characters(codec="utf-8")),
    st.sampled_from(["", "é", "\"", "\\", "\n", "\x00", "\x1f", "\u2028", "%s", "%",
                     "\ud800", "a\\nb", "日本語", "\U0001f600"]),
    st.floats(allow_nan=False, allow_infinity=False).map(Unrounded),
)
keys = st.one_of(st.text(max_size=8), st.sampled_from(["a", "b", "%", "%s", "é", "", "\\"]))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.tuples(inner, inner),
                            st.dictionaries(keys, inner, max_size=5)),
    max_leaves=20,
)


def same(fast, slow, *args):
    """Equal output, or the same exception type and message."""
    try:
        expected = slow(*args)
    except Exception as exc:  # noqa: BLE001 - compared below
        with pytest.raises(type(exc)) as info:
            fast(*args)
        assert str(info.value) == str(exc)
        return None
    assert fast(*args) == expected
    return expected


@FUZZ
@given(values)
def test_one_value_matches_the_previous_writer(value):
    same(canonical_line, ref.canonical_line, value)
    same(canonical_json, ref.canonical_json, value)


@pytest.mark.parametrize("x", EDGE_FLOATS + TIES)
def test_edge_floats_match(x):
    for value in (x, -x, [x, -x], {"v": x}, Unrounded(x), {"u": Unrounded(-x)}):
        assert canonical_line(value) == ref.canonical_line(value)
    column = [{"v": x}, {"v": -x}] * 3
    assert canonical_lines(column) == ref.reference_lines(column)


def _rows(draw_keys, column):
    """Rows sharing one key set, each column drawn from one strategy (the column path)."""
    return st.tuples(st.lists(draw_keys, min_size=0, max_size=6, unique=True),
                     st.integers(1, 30)).flatmap(
        lambda kn: st.lists(st.fixed_dictionaries({k: column for k in kn[0]}),
                            min_size=kn[1], max_size=kn[1]))


column_values = st.one_of(
    st.sampled_from(EDGE_FLOATS + TIES), st.floats(-2e5, 2e5, allow_nan=False), scalars, values)


@settings(FUZZ, max_examples=150)
@given(st.one_of(_rows(keys, column_values), st.lists(values, max_size=8),
                 st.lists(st.dictionaries(keys, column_values, max_size=4), max_size=8)))
def test_lines_match_the_previous_writer(rows):
    same(canonical_lines, ref.reference_lines, rows)


@FUZZ
@given(st.lists(st.sampled_from(EDGE_FLOATS + TIES + [0.0, 1.0, 0.5]), min_size=1, max_size=300),
       st.lists(st.integers(0, 5), min_size=1, max_size=300))
def test_repeated_values_take_the_cached_column_path(floats, ints):
    rows = [{"value": f, "rank": ints[i % len(ints)], "measure": f"m{i % 3}", "answered": i % 2 == 0,
             "query_class": None if i % 5 else "lookup"} for i, f in enumerate(floats)]
    assert canonical_lines(rows) == ref.reference_lines(rows)


def test_column_of_distinct_floats_in_the_fixed_range():
    import random

    rng = random.Random(7)
    rows = [{"score": rng.uniform(-99998.0, 99998.0) * 10 ** -rng.randrange(9),
             "doc_id": f"d{i}"} for i in range(5000)]
    assert canonical_lines(rows) == ref.reference_lines(rows)
    # and just past it (a few values beyond the range send the column value by value)
    rows = [{"score": rng.uniform(0.0, 1.0) * 10 ** rng.randrange(10)} for i in range(5000)]
    assert canonical_lines(rows) == ref.reference_lines(rows)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_refused_with_the_same_error(bad):
    for value in (bad, [1.0, bad], {"a": 1.0, "b": bad}, Unrounded(bad)):
        with pytest.raises(ValueError) as info:
            canonical_line(value)
        assert str(info.value) == f"non-finite number {float(bad)!r} cannot be written to a results file"
    rows = [{"x": 0.5, "y": "a"}, {"x": 0.25, "y": {1: 2}}, {"x": bad, "y": "c"}]
    # the first bad row (in file order) decides the error, as it did row by row
    with pytest.raises(TypeError, match="keys must be strings"):
        canonical_lines(rows)
    rows[1]["y"] = "b"
    with pytest.raises(ValueError, match="non-finite number"):
        canonical_lines(rows)


def test_general_path_values_match():
    np = pytest.importorskip("numpy")
    rows = [{"a": np.float32(0.1), "b": np.int64(3), "c": np.bool_(True), "d": (1, 2.5)},
            {"a": np.float64(1e-12), "b": np.int64(-4), "c": np.bool_(False), "d": (0, -0.0)}]
    assert canonical_lines(rows) == ref.reference_lines(rows)
    for row in rows:
        assert canonical_json(row) == ref.canonical_json(row)
    for bad in ({"x": {1, 2}}, {1: "x"}, {"x": object()}):
        same(canonical_line, ref.canonical_line, bad)
        same(canonical_lines, ref.reference_lines, [bad])


def test_the_column_writer_is_the_one_taken_for_plain_rows(monkeypatch):
    """A regression guard on the fast path itself: plain rows never go value by value."""
    calls = []
    monkeypatch.setattr(canonical, "canonical_line", lambda v: calls.append(v) or ref.canonical_line(v))
    rows = [{"corpus": "c", "query_id": f"q{i}", "rank": i, "score": i / 7, "tier": None}
            for i in range(100)]
    assert canonical_lines(rows) == ref.reference_lines(rows)
    assert calls == []


def test_key_order_of_the_rows_does_not_matter():
    rows = [{"b": 1, "a": 2.0}, {"a": 3.0, "b": 4}]
    assert canonical_lines(rows) == '{"a":2.0,"b":1}\n{"a":3.0,"b":4}\n'


# --------------------------------------------------------------------------- Columns


@settings(FUZZ, max_examples=150)
@given(_rows(keys, column_values))
def test_columns_write_the_bytes_of_their_rows(rows):
    """Rows held as columns write what the same rows as dicts write, errors included."""
    names = list(rows[0]) if rows else []
    table = canonical.Columns({name: [row[name] for row in rows] for name in names})
    if rows and names:
        same(canonical_lines, ref.reference_lines, rows)
        same(lambda _: canonical_lines(table), ref.reference_lines, rows)
    assert list(table) == (rows if names else [])


def test_columns_are_a_sequence_of_their_rows():
    table = canonical.Columns({"b": [1, 2, 3], "a": ["x", "y", "z"]})
    assert len(table) == 3 and table[1] == {"b": 2, "a": "y"} and table[-1] == {"b": 3, "a": "z"}
    assert table[1:] == [{"b": 2, "a": "y"}, {"b": 3, "a": "z"}]
    assert table == [{"b": 1, "a": "x"}, {"b": 2, "a": "y"}, {"b": 3, "a": "z"}]
    assert table != [{"b": 1, "a": "x"}]
    assert canonical_lines(table) == '{"a":"x","b":1}\n{"a":"y","b":2}\n{"a":"z","b":3}\n'
    assert canonical_lines(canonical.Columns({"a": []})) == ""
    with pytest.raises(ValueError, match="different lengths"):
        canonical.Columns({"a": [1], "b": [1, 2]})


@pytest.mark.parametrize("text", ["plain", "", "é", "日本", "\U0001f600", 'q"', "b\\", "\n", "\t",
                                  "\x00", "\x1f", "\x7f", "\u2028", "\u00a0", "\ud800", "%s"])
def test_string_columns_escape_as_json_does(text):
    column = [text, "id-1", text + "x"]
    assert canonical._strings(column) == [ref.canonical_line(v) for v in column]


def test_long_columns_of_few_values_match():
    """Ranks 1..100 over 20,000 rows: few distinct values, judged on a spread sample."""
    rows = [{"rank": i % 100 + 1, "score": 1 - i / 20000, "query_id": f"q{i // 100}",
             "corpus": "c", "doc_id": f"d{i}"} for i in range(20000)]
    assert canonical_lines(rows) == ref.reference_lines(rows)


@FUZZ
@given(st.lists(st.tuples(st.lists(st.sampled_from(EDGE_FLOATS + TIES), max_size=6),
                          st.lists(st.booleans(), max_size=6),
                          st.lists(st.one_of(st.booleans(), st.floats(allow_nan=False),
                                             st.integers()), max_size=3)),
                min_size=1, max_size=20))
def test_list_columns_match(lists):
    """Columns of float lists, of boolean lists and of mixed lists (a certificate's
    calibration rows), formatted a column at a time, against the previous writer."""
    rows = [{"scores": a, "relevant": b, "mixed": c} for a, b, c in lists]
    same(canonical_lines, ref.reference_lines, rows)
    floats_and_flags = [{"scores": a, "relevant": b} for a, b, _ in lists]
    assert canonical_lines(floats_and_flags) == ref.reference_lines(floats_and_flags)


@pytest.mark.parametrize("column", [
    ["B"] * 50, [None] * 50, [True] * 50, [False] * 50,
    [True] * 49 + [1], [1] + [True] * 49, [1] * 49 + [1.0], [False] * 49 + [0],
    ["B"] * 49 + ["b"], [None] * 49 + [False], ["1"] * 49 + [1], [0.0] * 49 + [-0.0],
])
def test_columns_of_one_value_match(column):
    """A column whose values all compare equal to the first is one text only when they are
    one value of one type (True == 1 == 1.0 for ``==``)."""
    rows = [{"a": value, "i": i} for i, value in enumerate(column)]
    assert canonical_lines(rows) == ref.reference_lines(rows)
    assert canonical_lines(canonical.Columns({"a": column, "i": list(range(len(column)))})) \
        == ref.reference_lines(rows)
