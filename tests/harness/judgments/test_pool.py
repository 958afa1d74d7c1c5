"""TREC pooling of runs' top k (issue 38 item 2): membership, queue order and skipped pairs
by hand; the hand-labelling sample seeded and uniform; the file read back strictly."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from harness.core.formats import FormatError
from harness.core.records import RankedDocs
from harness.judgments.pool import build_pool, read_pool

RUN_A = {"q1": RankedDocs(["d1", "d2", "d3"], [3.0, 2.0, 1.0]), "q2": RankedDocs(["d4"], [1.0])}
RUN_B = {"q1": RankedDocs(["d5", "d2"], [4.0, 5.0]), "q2": RankedDocs(["d4", "d6"], [2.0, 1.0])}
RUNS = [("a", "sha-a", RUN_A), ("b", "sha-b", RUN_B)]


def test_pool_by_hand():
    pool = build_pool(RUNS, 2)
    # depth 2: a ranks q1 d1, d2 and q2 d4; b ranks q1 d2 (5.0 first), d5 and q2 d4, d6
    order = [(p.query_id, p.doc_id) for p in pool.pairs]
    # two runs first (q2 d4: 1 + 1 = 2.0 ahead of q1 d2: 1/log2(3) + 1), then one run by
    # priority (q1 d1: 1.0), then q1 d5 and q2 d6 (both 1/log2(3), best rank 2) by ids
    assert order == [("q2", "d4"), ("q1", "d2"), ("q1", "d1"), ("q1", "d5"), ("q2", "d6")]
    by_pair = {(p.query_id, p.doc_id): p for p in pool.pairs}
    assert by_pair[("q1", "d2")].runs == ("a", "b")
    assert by_pair[("q1", "d2")].best_rank == 1
    assert by_pair[("q1", "d2")].priority == pytest.approx(1 + 1 / math.log2(3))
    assert by_pair[("q2", "d6")].priority == pytest.approx(1 / math.log2(3))
    assert "d3" not in {p.doc_id for p in pool.pairs}  # rank 3 is below depth 2
    assert pool.header()["runs"] == [{"name": "a", "sha256": "sha-a"},
                                     {"name": "b", "sha256": "sha-b"}]


def test_judged_pairs_are_skipped_and_counted():
    pool = build_pool(RUNS, 2, judged={"q1": {"d2": 0}, "q9": {"x": 1}})
    assert ("q1", "d2") not in {(p.query_id, p.doc_id) for p in pool.pairs}
    assert pool.judged_skipped == 1  # one pair, though two runs rank it
    assert len(pool.pairs) == 4


def test_sample_leads_the_queue_and_is_seeded():
    one = build_pool(RUNS, 2, sample_queries=1, seed=3)
    assert one.text() == build_pool(RUNS, 2, sample_queries=1, seed=3).text()
    (chosen,) = one.sample["queries"]
    flags = [p.sampled for p in one.pairs]
    assert flags == sorted(flags, reverse=True)  # sampled pairs first
    assert {p.query_id for p in one.pairs if p.sampled} == {chosen}
    # over many seeds each of the two queries is drawn about half the time
    drawn = Counter(build_pool(RUNS, 2, sample_queries=1, seed=s).sample["queries"][0]
                    for s in range(400))
    assert 150 < drawn["q1"] < 250
    with pytest.raises(ValueError, match="only 2 queries"):
        build_pool(RUNS, 2, sample_queries=3)


def test_refusals():
    with pytest.raises(ValueError, match="depth"):
        build_pool(RUNS, 0)
    with pytest.raises(ValueError, match="named 'a'"):
        build_pool([RUNS[0], RUNS[0]], 2)


def test_file_round_trip_and_strict_reading(tmp_path):
    pool = build_pool(RUNS, 2, sample_queries=1, seed=0)
    path = tmp_path / "pool.jsonl"
    path.write_text(pool.text())
    back = read_pool(path)
    assert back.pairs == pool.pairs and back.depth == 2 and back.sample == pool.sample
    lines = pool.text().splitlines(keepends=True)
    (tmp_path / "cut.jsonl").write_text("".join(lines[:-1]))
    with pytest.raises(FormatError, match="promises 5 pairs but the file holds 4"):
        read_pool(tmp_path / "cut.jsonl")
    (tmp_path / "dup.jsonl").write_text("".join(lines) + lines[-1])
    with pytest.raises(FormatError, match=r"dup.jsonl:7: field 'doc_id': pair .* twice"):
        read_pool(tmp_path / "dup.jsonl")
    (tmp_path / "other.jsonl").write_text('{"kind": "labels"}\n')
    with pytest.raises(FormatError, match=r"other.jsonl:1: field 'kind'"):
        read_pool(tmp_path / "other.jsonl")


@pytest.mark.parametrize("line, change, field", [
    (0, {"judged_skipped": [1]}, "judged_skipped"), (0, {"judged_skipped": -1}, "judged_skipped"),
    (0, {"judged_skipped": True}, "judged_skipped"), (0, {"schema": True}, "schema"),
    (0, {"runs": []}, "runs"), (0, {"runs": [{"name": 1, "sha256": "x"}]}, "runs"),
    (0, {"judged": 5}, "judged"), (0, {"sample": {"queries": [1], "seed": 0}}, "sample"),
    (0, {"sample": {"queries": ["q1"], "seed": "x"}}, "sample"), (0, {"depth": 0}, "depth"),
    (1, {"sampled": "yes"}, "sampled"), (1, {"runs": [None]}, "runs"),
    (1, {"runs": ["zzz"]}, "runs"), (1, {"priority": float("inf")}, "priority"),
    (1, {"best_rank": 3}, "best_rank"), (1, {"query_id": None}, "query_id"),
])
def test_every_field_is_checked(tmp_path, line, change, field):
    import json

    rows = [json.loads(x) for x in build_pool(RUNS, 2).text().splitlines()]
    rows[line].update(change)
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(FormatError, match=rf"pool.jsonl:{line + 1}: field '{field}'"):
        read_pool(path)


def test_sample_flags_must_match_the_header(tmp_path):
    import json

    rows = [json.loads(x) for x in build_pool(RUNS, 2, sample_queries=1).text().splitlines()]
    for row in rows[1:]:  # unmark every pair of the sampled query
        row["sampled"] = False
    path = tmp_path / "pool.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(FormatError, match="field 'sample': the pairs marked sampled"):
        read_pool(path)
