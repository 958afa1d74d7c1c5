"""The fused lists of every fusion arm equal those of the frozen previous implementation
(``fusion_reference.py``), document for document and bit for bit, on random legs with
ties, shared and single-leg documents, signed zeros and negative scores."""

from __future__ import annotations

import random
import struct

import pytest

from harness.retrieval import fusion
from harness.retrieval.arms import FusionSpec
from harness.pipeline.sweep import FUSION_FAMILY

from . import fusion_reference

SPECS = (*FUSION_FAMILY,
         FusionSpec("normalization", 60, "z_score", "arithmetic_mean", (50, 50), True),
         FusionSpec("normalization", 60, "l2", "harmonic_mean", (30, 70), True),
         FusionSpec("normalization", 60, "min_max", "geometric_mean", (70, 30), True))


def _leg(rng: random.Random, pool: list[str], n: int, kind: str) -> list[tuple[str, float]]:
    docs = rng.sample(pool, min(n, len(pool)))
    if kind == "ties":
        scores = [rng.choice([3.0, 2.5, 2.5, 1.0, 0.0]) for _ in docs]
    elif kind == "signed":
        scores = [rng.uniform(-1, 1) for _ in docs]
    elif kind == "zeros":  # signed zeros: fsum and + differ in a zero's sign
        scores = [rng.choice([0.0, -0.0, -0.0, 1.0]) for _ in docs]
    elif kind == "constant":
        scores = [0.7] * len(docs)
    else:
        scores = [rng.random() * 20 for _ in docs]
    pairs = sorted(zip(docs, scores), key=lambda p: fusion_reference.rank_key(p[0], p[1]))
    return pairs


def _bits(ranked):
    return [(d, struct.pack("<d", s)) for d, s in ranked]


@pytest.mark.parametrize("seed", range(40))
def test_every_arm_fuses_as_the_reference(seed):
    rng = random.Random(seed)
    files = [f"m{rng.randrange(1, 400)}" for _ in range(30)]
    pool = sorted({f"{f}_{rng.randrange(0, 90)}" for f in files for _ in range(20)}
                  | {f"{f}_digest" for f in files[:3]} | {"plain", "x_07"})
    kinds = ("plain", "ties", "signed", "constant", "zeros")
    legs = [_leg(rng, pool, rng.randrange(0, 260), rng.choice(kinds)) for _ in range(2)]
    for size in (1, 12, 48, 100, 600):
        for spec in SPECS:
            want = fusion_reference.fuse(legs, spec, size)
            got = fusion.fuse(legs, spec, size)
            assert _bits(got) == _bits(want), (spec.arm_id, size)


def test_ordered_keeps_every_tie_of_the_cut_in_structural_order():
    scores = {"b_2": 1.0, "a_10": 1.0, "a_9": 1.0, "c_1": 2.0, "d_1": 0.5}
    # 2.0 first, then the three tied at 1.0 by file and integer chunk index: a_9 < a_10 < b_2
    assert fusion.ordered(scores, 3) == [("c_1", 2.0), ("a_9", 1.0), ("a_10", 1.0)]
    assert fusion.ordered(scores) == fusion_reference.ordered(scores)
