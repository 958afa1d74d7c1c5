"""harness.core.doc_ids: the structure that decides a tie, never the name's spelling."""

from __future__ import annotations

import pytest

from harness.core.doc_ids import chunk_id, file_of, parse_doc_id, rank_key


@pytest.mark.parametrize("doc_id, parsed", [
    ("ES2006a_3", ("chunk", "ES2006a", 3)),
    ("ES2006a_0003", ("chunk", "ES2006a", 3)),
    ("a_b_12", ("chunk", "a_b", 12)),
    ("ES2006a_digest", ("digest", "ES2006a", -1)),
    ("doc7", ("doc", "doc7", 0)),
    ("_5", ("doc", "_5", 0)),  # no file part
    ("f_-1", ("doc", "f_-1", 0)),
    ("f_²", ("doc", "f_²", 0)),  # a digit to str.isdigit, not an ASCII index
    ("f_", ("doc", "f_", 0)),
])
def test_parse(doc_id, parsed):
    assert parse_doc_id(doc_id) == parsed


def test_builders_round_trip():
    assert parse_doc_id(chunk_id("m1", 7)) == ("chunk", "m1", 7)
    assert file_of("m1_7") == file_of("m1_digest") == "m1" and file_of("plain") == "plain"


def test_rank_key_orders_ties_by_structure():
    ids = ["f_digest", "f_10", "g_0", "f_9", "doc", "f_09"]
    order = sorted(ids, key=lambda d: rank_key(d, 0.5))
    # chunks first (by file, then integer index; "f_09" and "f_9" split by the id), then
    # digests, then plain documents
    assert order == ["f_09", "f_9", "f_10", "g_0", "f_digest", "doc"]
    assert sorted(["a_1", "b_0"], key=lambda d: rank_key(d, 1.0 if d == "b_0" else 0.5)) == ["b_0", "a_1"]
