"""The shared field checkers and the ABSENT sentinel of :mod:`harness.claims.base`: what the
typed signatures promise (a non-nullable check returns the value, never None; a nullable one
passes None through) and a sentinel that stays one instance through copies and pickles."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from harness.claims import base as b


def test_absent_is_one_instance_through_copies_and_pickles() -> None:
    assert copy.copy(b.ABSENT) is b.ABSENT
    assert copy.deepcopy(b.ABSENT) is b.ABSENT
    assert copy.deepcopy({"x": [b.ABSENT]})["x"][0] is b.ABSENT
    assert pickle.loads(pickle.dumps(b.ABSENT)) is b.ABSENT
    assert repr(b.ABSENT) == str(b.ABSENT) == "ABSENT"


@dataclasses.dataclass(frozen=True)
class _Kind(b.Claim):
    KIND = "test-kind"

    name: str
    kind: str = "test-kind"
    schema_version: int = 1
    note: Any = b.ABSENT


def test_an_absent_field_stays_out_of_the_document() -> None:
    claim = _Kind.from_dict({"kind": "test-kind", "schema_version": 1, "name": "x"}, "<t>")
    assert claim.note is b.ABSENT
    assert claim.to_dict() == {"kind": "test-kind", "schema_version": 1, "name": "x"}
    assert copy.deepcopy(claim) == claim
    with_note = _Kind.from_dict({**claim.to_dict(), "note": None}, "<t>")
    assert with_note.note is None and with_note.to_dict()["note"] is None


def test_checkers_return_the_value_or_refuse_naming_the_field() -> None:
    assert b.text("a", "<t>", "f") == "a"
    assert b.text(None, "<t>", "f", nullable=True) is None
    assert b.number(1, "<t>", "f") == 1.0 and isinstance(b.number(1, "<t>", "f"), float)
    assert b.number(None, "<t>", "f", nullable=True) is None
    assert b.integer(3, "<t>", "f") == 3
    assert b.integer(None, "<t>", "f", nullable=True) is None
    assert b.flag(False, "<t>", "f") is False
    assert b.tier("B", "<t>") == "B"
    assert b.choice("x", ("x", "y"), "<t>", "f") == "x"
    for call, field in [(lambda: b.text("", "<t>", "f"), "f"),
                        (lambda: b.number(True, "<t>", "g"), "g"),
                        (lambda: b.number(float("nan"), "<t>", "g"), "g"),
                        (lambda: b.integer(1.0, "<t>", "h"), "h"),
                        (lambda: b.flag(0, "<t>", "i"), "i"),
                        (lambda: b.tier("D", "<t>", "j"), "j"),
                        (lambda: b.tier(["A"], "<t>", "j"), "j"),
                        (lambda: b.choice(1, ("x",), "<t>", "k"), "k")]:
        with pytest.raises(b.ClaimError) as caught:
            call()
        assert caught.value.field == field and caught.value.path == "<t>"
