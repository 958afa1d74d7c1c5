"""Who labels what next: a queue per person over a pool, with a share judged twice.

Each pair needs one label, except a fixed share of pairs (``overlap``) that needs two, from
different people, so agreement can be measured (:mod:`.agreement`).  Which pairs are double
judged is decided by the pair itself (the sha256 of seed, query and document), not by who
turns up, so the share is stable however many people label and in whatever order.  A
person's queue is the pool's order (the hand-labelling sample first, then the pairs that
change the most comparisons) less the pairs they labelled and those already labelled enough.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Protocol, Sequence, TypeVar

from harness.claims.labels import Label, latest

#: the default share of pairs shown to two people
OVERLAP = 0.2


def double_judged(query_id: str, doc_id: str, overlap: float, seed: int = 0) -> bool:
    """Whether the pair is in the ``overlap`` share that two people label."""
    if not 0 <= overlap <= 1:
        raise ValueError(f"--overlap must lie in [0, 1], got {overlap}")
    digest = hashlib.sha256(f"{seed}\0{query_id}\0{doc_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64 < overlap


@dataclass(frozen=True)
class Progress:
    """Where one person and the whole pool stand."""

    mine: int  #: pairs this person labelled
    left_for_me: int  #: pairs still in this person's queue
    done: int  #: pairs with all the labels they need
    total: int  #: pairs in the pool

    def line(self) -> str:
        return (f"{self.mine} labelled by you, {self.left_for_me} left for you; pool "
                f"{self.done} of {self.total} pairs done")


class Pair(Protocol):
    """A pair to judge: a pool's (:class:`~harness.judgments.pool.PoolPair`) or a judging
    task's (:class:`~harness.claims.judging.TaskPair`)."""

    @property
    def query_id(self) -> str: ...

    @property
    def doc_id(self) -> str: ...


P = TypeVar("P", bound=Pair)


def queue(pairs: Sequence[P], labels: Sequence[Label], rater: str, overlap: float = OVERLAP,
          seed: int = 0) -> tuple[list[P], Progress]:
    """``rater``'s queue (in the pairs' order, a pool's) and the progress so far, given every
    label made."""
    by_pair: dict[tuple[str, str], set[str]] = {}
    for item in latest(labels):
        by_pair.setdefault((item.query_id, item.doc_id), set()).add(item.rater)
    todo, mine, done = [], 0, 0
    for pair in pairs:
        raters = by_pair.get((pair.query_id, pair.doc_id), set())
        needed = 2 if double_judged(pair.query_id, pair.doc_id, overlap, seed) else 1
        done += len(raters) >= needed
        if rater in raters:
            mine += 1
        elif len(raters) < needed:
            todo.append(pair)
    return todo, Progress(mine, len(todo), done, len(pairs))
