"""harness.core.canonical: one byte form for every claim."""

from __future__ import annotations

import json
import math

import pytest

from harness.core.canonical import (
    FLOAT_DECIMALS,
    canonical_float,
    canonical_json,
    canonical_line,
    sha256_file,
    sha256_text,
)


@pytest.mark.parametrize("value, text", [
    (0.1 + 0.2, "0.3"),  # 0.30000000000000004 rounded to 10 decimals
    (2 / 3, "0.6666666667"),
    (1.0, "1.0"),
    (-0.0, "0.0"),
    (-1e-12, "0.0"),  # below the last kept decimal: zero, and never "-0.0"
    (1 / 3 * 3, "1.0"),
    (123456.0, "123456.0"),
    (2.5e-5, "2.5e-05"),
])
def test_float_form(value, text):
    assert canonical_float(value) == text
    assert json.loads(text) == round(value, FLOAT_DECIMALS) + 0.0


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_is_refused(value):
    with pytest.raises(ValueError, match="non-finite"):
        canonical_json({"x": value})


def test_keys_sorted_and_layout_fixed():
    doc = {"b": [1, 2.0, None, True], "a": {"y": "é", "x": []}, "c": {}}
    assert canonical_json(doc) == (
        '{\n  "a": {\n    "x": [],\n    "y": "é"\n  },\n  "b": [\n    1,\n    2.0,\n'
        '    null,\n    true\n  ],\n  "c": {}\n}\n'
    )
    assert canonical_line(doc) == '{"a":{"x":[],"y":"é"},"b":[1,2.0,null,true],"c":{}}'
    assert json.loads(canonical_json(doc)) == json.loads(canonical_line(doc))


def test_insertion_order_does_not_matter():
    a = {"x": 1, "y": {"p": 0.5, "q": 0.25}}
    b = {"y": {"q": 0.25, "p": 0.5}, "x": 1}
    assert canonical_json(a) == canonical_json(b)


def test_numpy_scalars_and_tuples():
    np = pytest.importorskip("numpy")
    line = canonical_line({"a": np.float32(0.5), "b": np.int64(3), "c": (1, 2)})
    assert line == '{"a":0.5,"b":3,"c":[1,2]}'


def test_unsupported_values_and_keys_are_refused():
    with pytest.raises(TypeError, match="keys must be strings"):
        canonical_json({1: "x"})
    with pytest.raises(TypeError, match="cannot write set"):
        canonical_json({"x": {1, 2}})


def test_sha256(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"abc")
    expected = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # FIPS 180-2 "abc"
    assert sha256_file(path) == expected == sha256_text("abc")


def test_unrounded_floats_keep_every_digit_and_plain_floats_do_not():
    from harness.core.canonical import Unrounded

    tiny = 2.0 ** -54  # 5.55e-17: rounded to 10 decimals it would read as 0
    assert canonical_float(tiny) == "0.0"  # the ordinary rule is unchanged
    assert canonical_line({"p": Unrounded(tiny)}) == '{"p":5.551115123125783e-17}'
    assert json.loads(canonical_json([Unrounded(tiny)]))[0] == tiny
    assert canonical_line([Unrounded(0.25), Unrounded(-0.0), 1 / 3]) == "[0.25,0.0,0.3333333333]"
    with pytest.raises(ValueError, match="non-finite"):
        canonical_line(Unrounded(math.inf))


def test_parts_join_to_the_lines_and_hash_as_the_joined_text(monkeypatch):
    """A large JSONL file is held as parts: the same bytes and the same sha256 as one
    string, whatever the part and slice sizes (set tiny here so every boundary is crossed)."""
    import hashlib

    import harness.core.canonical as canonical
    from harness.core.canonical import Columns, Parts, canonical_lines, canonical_parts, joined

    monkeypatch.setattr(canonical, "PART_ROWS", 3)
    monkeypatch.setattr(canonical, "SLICE_CHARS", 7)
    rows = [{"q": f"q{i}", "v": i / 7, "s": "é✓" * (i % 3), "n": None if i % 2 else i}
            for i in range(10)]
    columns = Columns({k: [r[k] for r in rows] for k in ("q", "v", "s", "n")})
    for given in (rows, columns):
        parts = canonical_parts(given)
        assert isinstance(parts, Parts) and len(parts) == 4  # 3 + 3 + 3 + 1 rows
        assert joined(parts) == canonical_lines(given) == canonical_lines(rows)
        expected = hashlib.sha256(canonical_lines(rows).encode("utf-8")).hexdigest()
        assert sha256_text(parts) == expected == sha256_text(canonical_lines(rows))
    assert canonical_parts([]) == Parts() and joined(Parts()) == ""
    # a bad row raises the error one string would
    with pytest.raises(ValueError, match="non-finite"):
        canonical_parts(rows + [{"q": "x", "v": math.nan, "s": "", "n": 1}])


def test_columns_given_per_group_write_the_bytes_of_their_rows(monkeypatch):
    """A column given once per group (``Grouped``) or as ranks within each group (``RANKS``)
    writes, in parts cut at group boundaries, exactly the rows it stands for."""
    from harness.core import canonical
    from harness.core.canonical import RANKS, Columns, Grouped, canonical_line, canonical_parts, joined

    sizes = [3, 1, 4, 2]
    rows = [{"query_id": q, "corpus": "c\"x", "rank": r + 1, "doc_id": f"d{q}{r}",
             "score": 1.0 / (r + 3)}
            for q, n in zip("abcd", sizes) for r in range(n)]
    grouped = Columns({"query_id": Grouped("abcd"), "corpus": Grouped(["c\"x"] * 4),
                       "rank": RANKS, "doc_id": [row["doc_id"] for row in rows],
                       "score": [row["score"] for row in rows]}, groups=sizes)
    assert list(grouped) == rows and len(grouped) == 10
    expected = "".join(canonical_line(row) + "\n" for row in rows)
    assert '"rank":4,' in expected and expected.count("\n") == 10
    for part_rows in (1, 3, 1 << 15):
        monkeypatch.setattr(canonical, "PART_ROWS", part_rows)
        parts = canonical_parts(grouped)
        assert joined(parts) == expected
        assert all(part.endswith("\n") for part in parts)
    with pytest.raises(ValueError, match="3 values for 4 groups"):
        Columns({"query_id": Grouped("abc"), "rank": RANKS}, groups=sizes)
