"""The model judge's arithmetic (issue 38 item 6) without a model: MaxP windows, the
isotonic calibration on margins (checked against hand values and a brute-force monotone fit),
and cross-fitting: a hand-labelled query's grades never depend on its own labels."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from harness.judgments.judge import calibrated_grades, cosine_scores, windows


class _Vectors:
    """A fixed text -> unit vector table standing in for an encoder (no model)."""

    def __init__(self, table):
        self.table = table

    def encode_queries(self, texts):
        return np.array([self.table[t] for t in texts], dtype=float)

    encode_documents = encode_queries


def test_windows_by_hand():
    assert windows("a b c d e", size=2) == ["a b", "c d", "e"]
    assert windows("", size=2) == [""]


def test_cosine_is_the_best_window():
    text = " ".join(["x"] * 150 + ["y"] * 10)  # two windows: 150 x's, then 10 y's
    table = {"query": [1.0, 0.0], " ".join(["x"] * 150): [0.0, 1.0],
             " ".join(["y"] * 10): [0.6, 0.8]}
    scores = cosine_scores(_Vectors(table), {"q": "query"}, {"d": text}, [("q", "d")],
                           provenance={})
    assert scores.scores[("q", "d")] == pytest.approx(0.6)
    with pytest.raises(ValueError, match="document 'e'"):
        cosine_scores(_Vectors(table), {"q": "query"}, {"d": text}, [("q", "e")], provenance={})


def _pava_brute(y):
    """The best non-decreasing fit whose values are the labels' own levels, by brute force."""
    best, levels = None, sorted(set(y))
    for fit in itertools.product(levels, repeat=len(y)):
        if all(a <= b for a, b in zip(fit, fit[1:])):
            err = sum((a - b) ** 2 for a, b in zip(fit, y))
            if best is None or err < best[0]:
                best = (err, fit)
    return best[1]


def test_calibration_is_isotonic_on_margins_and_cross_fitted():
    # two labelled queries -> two folds: each query is graded by the map fitted on the other
    scores = {("a", "d1"): 0.9, ("a", "d2"): 0.5, ("b", "d1"): 0.4, ("b", "d2"): 0.3,
              ("c", "d1"): 0.7, ("c", "d2"): 0.6}
    hand = {"a": {"d1": 2, "d2": 0}, "b": {"d1": 1, "d2": 1}}
    grades = calibrated_grades(scores, hand, ["a", "b"])
    # margins: a: 0, -0.4; b: 0, -0.1; c: 0, -0.1
    # a is graded by b's map (margin 0 -> 1, -0.1 -> 1: flat at 1): both 1
    assert grades[("a", "d1")] == pytest.approx(1.0) and grades[("a", "d2")] == pytest.approx(1.0)
    # b by a's map (0 -> 2, -0.4 -> 0, linear between): -0.1 -> 1.5
    assert grades[("b", "d1")] == pytest.approx(2.0) and grades[("b", "d2")] == pytest.approx(1.5)
    # c (unlabelled) by the mean of the two maps: (1 + 2) / 2 and (1 + 1.5) / 2
    assert grades[("c", "d1")] == pytest.approx(1.5) and grades[("c", "d2")] == pytest.approx(1.25)
    # changing a's own labels leaves a's grades unchanged (it never trains its own map)
    flipped = calibrated_grades(scores, {**hand, "a": {"d1": 0, "d2": 3}}, ["a", "b"])
    assert flipped[("a", "d1")] == grades[("a", "d1")]
    with pytest.raises(ValueError, match="at least 2"):
        calibrated_grades(scores, hand, ["a"])


def test_isotonic_fit_matches_brute_force():
    from harness.judgments.judge import _fit

    rng = random.Random(1)
    for _ in range(20):
        x = sorted(rng.sample(range(100), 6))
        y = [rng.randrange(4) for _ in x]
        fitted = _fit(x, y)(x)
        assert all(a <= b + 1e-12 for a, b in zip(fitted, fitted[1:]))  # monotone
        # least squares: no monotone fit on the labels' own levels does better
        assert sum((a - b) ** 2 for a, b in zip(fitted, y)) <= \
            sum((a - b) ** 2 for a, b in zip(_pava_brute(y), y)) + 1e-9
        assert fitted.mean() == pytest.approx(np.mean(y))  # PAVA keeps the mean


def test_tied_scores_are_pooled_into_their_mean():
    from harness.judgments.judge import _fit

    # four labels at one score and one below it: the tied block maps to its mean, 0.5,
    # whatever order the labels come in
    for labels in ([1, 0, 1, 0, 0], [0, 1, 1, 0, 0], [0, 0, 1, 1, 0]):
        fitted = _fit([1.0, 1.0, 1.0, 1.0, 0.0], labels)
        assert fitted([1.0])[0] == pytest.approx(0.5)
        assert fitted([0.0])[0] == pytest.approx(0.0)
    # a higher score with a lower mean is pooled with it (monotone): (0 + 1 + 1) / 3 each
    fitted = _fit([0.0, 1.0, 1.0], [1, 0, 1])
    assert fitted([0.0])[0] == pytest.approx(2 / 3) and fitted([1.0])[0] == pytest.approx(2 / 3)
