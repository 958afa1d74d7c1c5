"""harness.core.records: the shared records and the licence-tier order."""

from __future__ import annotations

import dataclasses

import pytest

from harness.core.records import Chunk, Qrel, ScoredDoc
from harness.core.tiers import TIERS, most_restrictive_tier


def test_field_names_follow_the_ecosystem():
    assert Qrel._fields == ("query_id", "doc_id", "relevance")
    assert ScoredDoc._fields == ("query_id", "doc_id", "score")


@pytest.mark.parametrize("tiers, expected", [
    (["A"], "A"), (["A", "B"], "B"), (["C", "A"], "C"), (["B", "C", "A"], "C"), (["A", "A"], "A"),
])
def test_most_restrictive_tier(tiers, expected):
    assert most_restrictive_tier(tiers) == expected


def test_unknown_or_missing_tier_is_refused():
    with pytest.raises(ValueError, match=r"unknown licence tier 'D'.*\['A', 'B', 'C'\]"):
        most_restrictive_tier(["A", "D"])
    with pytest.raises(ValueError, match="no tiers"):
        most_restrictive_tier([])
    assert TIERS == ("A", "B", "C")


def test_chunk_is_frozen():
    chunk = Chunk("f_1", "f", 1, "chunk", "A", 0.0, 1.0, "hello")
    with pytest.raises(dataclasses.FrozenInstanceError):
        chunk.text = "changed"
