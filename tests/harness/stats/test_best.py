"""Runs tied with the best: Holm-corrected paired sign-flip tests against the best run."""

from __future__ import annotations

import pytest

from harness.stats.best import tied_with_best

BEST = [1.0] * 6
ZERO = [0.0] * 6  # 6 discordant queries, all one way: exact p = 2 / 2^6 = 0.03125
ONE_WORSE = [1.0, 1.0, 1.0, 1.0, 1.0, 0.0]  # 1 discordant query: p = 2 / 2^1 = 1


def test_alone_against_the_best_a_clear_loser_is_not_tied():
    result = tied_with_best({"best": BEST, "zero": ZERO})
    assert result["best"].best and not result["best"].tied
    assert result["zero"].p == pytest.approx(2 / 2 ** 6)
    # one comparison: Holm leaves p as it is, 0.03125 <= 0.05
    assert result["zero"].p_holm == pytest.approx(0.03125) and not result["zero"].tied


def test_holm_over_the_others_can_tie_a_run_a_single_test_would_separate():
    result = tied_with_best({"one-worse": ONE_WORSE, "best": BEST, "zero": ZERO})
    assert result["best"].best
    assert result["one-worse"].p == 1.0 and result["one-worse"].tied
    # two comparisons: the smaller p doubles, 2 x 0.03125 = 0.0625 > 0.05
    assert result["zero"].p_holm == pytest.approx(2 * 0.03125) and result["zero"].tied


def test_the_first_of_equal_means_is_the_best_and_the_other_is_tied():
    result = tied_with_best({"a": BEST, "b": BEST})
    assert result["a"].best and result["b"].tied and result["b"].p == 1.0


def test_unequal_lengths_are_refused():
    with pytest.raises(ValueError):
        tied_with_best({"a": [1.0, 0.0], "b": [1.0]})


def test_a_given_reference_is_the_best_even_when_another_mean_is_higher_here():
    # a table marks "low" best (its mean over all its queries is the highest); over these
    # shared queries "high" leads, 6 discordant queries one way: exact p = 2 / 2^6
    result = tied_with_best({"high": BEST, "low": ZERO}, reference="low")
    assert result["low"].best and not result["high"].best
    assert result["high"].p == pytest.approx(2 / 2 ** 6) and not result["high"].tied


def test_an_unknown_reference_is_refused():
    with pytest.raises(ValueError, match="reference"):
        tied_with_best({"a": BEST, "b": ZERO}, reference="c")


def test_the_comparisons_table_marks_a_verdict_within_monte_carlo_error_as_borderline():
    # Holm p 0.0465 from 10,000 sign vectors: 0.0465 + 3.29 sqrt(0.0465 x 0.9535 / 10^4) =
    # 0.0534 > 0.05, so '*' would overstate it; from 100,000 vectors it is a plain '*';
    # an exact p of 0.0465 has no sampling error
    from harness.stats.markdown import _mark

    row = {"verdict": "significant", "p": 0.0465, "p_holm": 0.0465, "permutations": 10_000}
    assert _mark(row, 0.05) == "borderline"
    assert _mark({**row, "permutations": 100_000}, 0.05) == "*"
    assert _mark({**row, "permutations": None}, 0.05) == "*"
    assert _mark({**row, "verdict": "cannot be significant"}, 0.05) == "floor"
