"""A person's queue (issue 38 item 3): pool order, their own and finished pairs left out,
a stable share judged twice; query terms marked in the document text."""

from __future__ import annotations

import pytest

from harness.core.records import RankedDocs
from harness.claims.labels import Label
from harness.judgments.marking import segments, terms
from harness.judgments.pool import build_pool
from harness.judgments.queue import double_judged, queue

T = "2026-12-07T09:00:00Z"
RUN = {f"q{i}": RankedDocs([f"d{j}" for j in range(5)], [5.0 - j for j in range(5)])
       for i in range(40)}
POOL = build_pool([("r", "-", RUN)], 5)


def test_share_judged_twice_is_stable_and_near_its_target():
    doubled = [p for p in POOL.pairs if double_judged(p.query_id, p.doc_id, 0.2)]
    assert 20 <= len(doubled) <= 60  # 200 pairs at 0.2: 40 expected
    assert doubled == [p for p in POOL.pairs if double_judged(p.query_id, p.doc_id, 0.2)]
    assert not any(double_judged(p.query_id, p.doc_id, 0.0) for p in POOL.pairs)
    assert all(double_judged(p.query_id, p.doc_id, 1.0) for p in POOL.pairs)
    with pytest.raises(ValueError, match="overlap"):
        double_judged("q", "d", 1.5)


def test_queue_by_hand():
    first, second = POOL.pairs[0], POOL.pairs[1]
    todo, progress = queue(POOL.pairs, [], "ana", overlap=0.0)
    assert todo == list(POOL.pairs) and progress.done == 0 and progress.total == 200
    labels = [Label(first.query_id, first.doc_id, "ana", T, 2),
              Label(second.query_id, second.doc_id, "bo", T, 0)]
    todo, progress = queue(POOL.pairs, labels, "ana", overlap=0.0)
    # ana labelled the first pair; bo's label finishes the second (one label needed)
    assert todo == list(POOL.pairs[2:]) and progress.mine == 1 and progress.done == 2
    todo, progress = queue(POOL.pairs, labels, "cy", overlap=1.0)
    # every pair needs two: both labelled pairs still need a second person
    assert todo == list(POOL.pairs) and progress.done == 0
    todo, _ = queue(POOL.pairs, labels, "ana", overlap=1.0)
    assert todo[0] == second  # ana never gets her own pair again
    assert "1 labelled by you" in queue(POOL.pairs, labels, "ana")[1].line()


def test_marking():
    # function words and words under three letters are never marked
    assert terms("What did the professor think about the recording? TV") == [
        "professor", "think", "recording"]
    pieces = segments("The Professor was recording; recordings.", "professor record")
    assert "".join(p for p, _ in pieces) == "The Professor was recording; recordings."
    assert [p for p, marked in pieces if marked] == ["Professor", "recording", "recordings"]
    assert segments("nothing here", "zebra") == [("nothing here", False)]
