"""Golden vectors pinning the serving function ``set_size`` (and ``should_answer``).

Each vector's expected size is worked out by hand (the comment shows the cumulative masses)
and re-derived independently with 50-digit decimal arithmetic; every cumulative mass is at
least 1e-9 away from the threshold, so a last-ulp difference between two exp
implementations cannot flip an answer.  Rule: ``size = max(1, #{j : C_j <= threshold})``,
the whole (truncated) list when threshold >= 1, 0 for an empty list.
"""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest

from harness.certificates.conformal import Candidates, cumulative_mass as mass_matrix, set_sizes
from harness.certificates.serving import cumulative_mass, set_size, should_answer

MARGIN = Decimal("1e-9")


def logw(weights, temperature, offset=0.0):
    """Scores whose softmax at ``temperature`` is exactly ``w / sum(w)`` (up to rounding)."""
    return [offset + temperature * math.log(w) for w in weights]


# (scores, temperature, threshold, k_max, expected size, hand derivation)
GOLDEN = [
    (logw([4, 2, 1, 1], 1.0), 1.0, 0.8, 50, 2, "C = 4/8, 6/8, 7/8, 1: two <= 0.8"),
    (logw([4, 2, 1, 1], 1.0), 1.0, 0.5 + 1e-6, 50, 1, "C1 = 0.5 <= 0.500001 < C2 = 0.75"),
    (logw([4, 2, 1, 1], 1.0), 1.0, 0.4, 50, 1, "no C <= 0.4, but the top is always sent"),
    (logw([4, 2, 1, 1], 1.0), 1.0, 0.9, 50, 3, "0.5, 0.75, 0.875 <= 0.9"),
    (logw([4, 2, 1, 1], 1.0), 1.0, 0.99, 50, 3, "C4 = 1 > 0.99"),
    (logw([4, 2, 1, 1], 1.0), 1.0, 1.0, 50, 4, "threshold >= 1: the whole list"),
    (logw([1] * 10, 2.0), 2.0, 0.35, 50, 3, "uniform: C_j = j/10, j <= 3"),
    (logw([1] * 10, 2.0), 2.0, 0.95, 50, 9, "uniform: j/10 <= 0.95 for j <= 9"),
    (logw([1, 2, 4, 8], 0.5), 0.5, 0.3, 50, 2, "list order kept: C = 1/15, 3/15, 7/15, 1"),
    (logw([8] + [1] * 8, 1.0), 1.0, 0.7, 50, 4, "C = 8/16, 9/16, 10/16, 11/16 <= 0.7 < 12/16"),
    (logw([8] + [1] * 8, 1.0), 1.0, 0.55, 50, 1, "C1 = 0.5 <= 0.55 < C2 = 0.5625"),
    (logw([3] + [1] * 7, 1.0), 1.0, 0.7, 4, 2, "k_max 4 -> [3,1,1,1]: C = 3/6, 4/6, 5/6, 1"),
    (logw([3] + [1] * 7, 1.0), 1.0, 0.9, 4, 3, "k_max 4: 5/6 <= 0.9 < 1"),
    (logw([3] + [1] * 7, 1.0), 1.0, 1.0, 4, 4, "k_max 4, threshold 1: all four kept"),
    ([5.0], 1.0, 0.3, 50, 1, "one candidate is one passage"),
    ([], 1.0, 0.5, 50, 0, "no candidates, nothing to send"),
    (logw([4, 2, 1, 1], 1.0, offset=1000.0), 1.0, 0.8, 50, 2, "shift-invariant at 1000"),
    (logw([4, 2, 1, 1], 0.1, offset=-50.0), 0.1, 0.8, 50, 2, "shift-invariant at -50"),
    ([2.0, 1.0, 0.5, -1.0], 1.0, 0.9, 50, 2,
     "e^0, e^-1, e^-1.5, e^-3 -> C = .6095, .8337, .9697, 1"),
    ([2.0, 1.0, 0.5, -1.0], 1.0, 0.97, 50, 3, "C3 = .96966 <= .97 (margin 3e-4)"),
    ([1.0, 1.0, 1.0, 0.0], 1.0, 0.6, 50, 2, "ties: C = .2969, .5938, .8908, 1"),
    ([3.0, 2.9, 0.0], 0.05, 0.95, 50, 1, "C1 = 1/(1+e^-2) = .8808, C2 ~ 1 - 1e-26"),
    ([3.0, 2.0, 1.0, 0.0], 100.0, 0.75, 50, 2, "near uniform: C = .2537, .5049, .7536, 1"),
    ([-0.1 * j for j in range(60)], 1.0, 0.5, 50, 6,
     "geometric, cut at 50: C_j = (1-e^-.1j)/(1-e^-5); C6 = .4543, C7 = .5068"),
    (logw([1, 1], 1.0), 1.0, 0.0, 50, 1, "threshold 0: only the top"),
    (logw([1, 1, 1, 1], 1.0), 1.0, 0.5 - 1e-8, 50, 1, "C2 = 0.5 is 1e-8 above the threshold"),
    (logw([1, 1, 1, 1], 1.0), 1.0, 0.5 + 1e-8, 50, 2, "C2 = 0.5 is 1e-8 below the threshold"),
]


def decimal_masses(scores, temperature, k_max):
    """Cumulative softmax masses in 50-digit decimal arithmetic (independent of the code)."""
    getcontext().prec = 50
    values = [Decimal(repr(float(s))) for s in scores[:k_max]]
    if not values:
        return []
    top = max(values)
    weights = [((v - top) / Decimal(repr(temperature))).exp() for v in values]
    total = sum(weights)
    out, running = [], Decimal(0)
    for w in weights:
        running += w
        out.append(running / total)
    return out


def decimal_size(masses, threshold):
    if not masses:
        return 0
    if threshold >= 1:
        return len(masses)
    tau = Decimal(repr(threshold))
    return max(1, sum(1 for c in masses if c <= tau))


def certificate(threshold, temperature, k_max):
    return {"kind": "certificate", "type": "coverage", "threshold": threshold,
            "temperature": temperature, "k_max": k_max}


def test_there_are_at_least_twenty_golden_vectors():
    assert len(GOLDEN) >= 20


@pytest.mark.parametrize("scores,temperature,threshold,k_max,expected,why", GOLDEN,
                         ids=[g[5] for g in GOLDEN])
def test_golden_vector(scores, temperature, threshold, k_max, expected, why):
    masses = decimal_masses(scores, temperature, k_max)
    if threshold < 1:
        tau = Decimal(repr(threshold))
        gaps = [abs(c - tau) for c in masses]
        assert all(g >= MARGIN for g in gaps), f"a mass lies within 1e-9 of the threshold: {why}"
    assert decimal_size(masses, threshold) == expected, why
    assert set_size(scores, certificate(threshold, temperature, k_max)) == expected, why


def test_python_and_numpy_masses_agree():
    rng = np.random.default_rng(7)
    lists = [rng.normal(size=rng.integers(1, 30)).tolist() for _ in range(200)]
    c = Candidates.from_lists(lists, [None] * len(lists))
    matrix = mass_matrix(c, 0.7)
    for i, scores in enumerate(lists):
        assert cumulative_mass(scores, 0.7) == pytest.approx(list(matrix[i, :len(scores)]),
                                                             abs=1e-12)
    cert = certificate(0.83, 0.7, 50)
    sizes = set_sizes(matrix, c.lengths, 0.83)
    assert [set_size(s, cert) for s in lists] == sizes.tolist()


@pytest.mark.parametrize("bad,message", [
    ({"kind": "certificate", "type": "risk", "lambda": 0.5}, "coverage certificate"),
    ({**certificate(None, 1.0, 50), "status": "degenerate"}, "degenerate"),
    (certificate(0.5, 0.0, 50), "temperature"),
    (certificate(0.5, 1.0, 0), "k_max"),
    (certificate(float("nan"), 1.0, 50), "threshold"),
    ({"type": "coverage"}, "not a certificate"),
])
def test_set_size_refuses_unservable_certificates(bad, message):
    with pytest.raises(ValueError, match=message):
        set_size([1.0, 0.5], bad)


def test_set_size_refuses_non_finite_scores():
    with pytest.raises(ValueError, match=r"scores\[1\]"):
        set_size([1.0, float("inf")], certificate(0.5, 1.0, 50))


def test_should_answer_compares_the_top_ranked_score():
    cert = {"kind": "certificate", "type": "risk", "lambda": 0.7}
    assert should_answer([0.7, 0.1], cert) is True          # 0.7 >= 0.7
    assert should_answer([0.69, 0.99], cert) is False       # the top-ranked, not the maximum
    assert should_answer([], cert) is False                 # nothing to answer from
    with pytest.raises(ValueError, match="degenerate"):
        should_answer([0.9], {"kind": "certificate", "type": "risk", "lambda": None})
