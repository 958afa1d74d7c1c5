"""Exact search with masks and ties, recall@k against trec_eval (pytrec_eval, an independent
implementation), and the paired ratio interval: the estimate inside its interval, where a
numerator-only bootstrap (the reference's defect) puts it outside."""

from __future__ import annotations

import numpy as np
import pytest

from harness.studies.embedding_migration.retention import hits, ratio, recall_at_k, search
from harness.stats.intervals import IntervalError, bootstrap_mean_interval, check_contains

INDEX = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.5, 0.5], [0.9, 0.1]])


def test_search_is_exact_with_ties_by_position_and_a_mask():
    query = np.array([[1.0, 0.0]])
    # scores 1.0, 0.9, 0.0, 0.5, 0.9: the tie between positions 1 and 4 goes to 1
    assert search(query, INDEX, 3).tolist() == [[0, 1, 4]]
    # masking the query's own document (position 0) moves everything up one
    assert search(query, INDEX, 3, mask=[0]).tolist() == [[1, 4, 3]]
    assert search(np.array([[0.0, 1.0], [1.0, 0.0]]), INDEX, 1, mask=[2, 1]).tolist() == [[3], [0]]
    with pytest.raises(ValueError, match="do not share a dimension"):
        search(np.ones((1, 3)), INDEX, 2)
    with pytest.raises(ValueError, match="more than k documents"):
        search(query, INDEX, 5, mask=[0])


def test_hits_and_recall_by_hand():
    top = np.array([[0, 1, 4], [2, 3, 0]])
    assert hits(top, np.array([4, 1])).tolist() == [1.0, 0.0]
    # query 0: relevant {1, 2}, one retrieved -> 1/2; query 1: {2, 3, 0, 9} -> 3/4
    assert recall_at_k(top, [frozenset({1, 2}), frozenset({2, 3, 0, 9})]).tolist() == [0.5, 0.75]
    with pytest.raises(ValueError, match="no relevant document"):
        recall_at_k(top, [frozenset({1}), frozenset()])


def test_recall_agrees_with_trec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(11)
    n_docs, k = 40, 10
    index = rng.standard_normal((n_docs, 6))
    queries = rng.standard_normal((25, 6))
    top = search(queries, index, k)
    relevant = [frozenset(rng.choice(n_docs, size=rng.integers(1, 6), replace=False).tolist())
                for _ in range(25)]
    ours = recall_at_k(top, relevant)
    qrels = {f"q{i}": {f"d{j}": 1 for j in rel} for i, rel in enumerate(relevant)}
    run = {f"q{i}": {f"d{j}": float(k - r) for r, j in enumerate(row)} for i, row in enumerate(top)}
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recall_10"}).evaluate(run)
    assert np.allclose(ours, [theirs[f"q{i}"]["recall_10"] for i in range(25)], atol=1e-12)


def test_the_ratio_is_the_ratio_of_means_inside_its_paired_interval():
    rng = np.random.default_rng(5)
    oracle = rng.choice([0.0, 0.5, 1.0], size=200, p=[0.3, 0.4, 0.3])   # T1-like, mean ~0.5
    adapted = oracle * rng.choice([0.0, 1.0], size=200, p=[0.1, 0.9])
    iv = ratio(adapted, oracle, tier="T1", seed=3, resamples=2000, confidence=0.95,
               method="bca", what="ARR")
    assert iv.estimate == pytest.approx(adapted.sum() / oracle.sum(), rel=1e-15)
    assert iv.lower < iv.estimate < iv.upper
    # the reference's defect: bootstrapping the numerator alone gives an interval around
    # mean(adapted) ~ 0.45, a different quantity, and the estimate (~0.9) lies outside it
    wrong = bootstrap_mean_interval(adapted, resamples=2000, seed=3)
    with pytest.raises(IntervalError, match="outside its own interval"):
        check_contains(iv.estimate, wrong.lower, wrong.upper, "numerator-only ARR")
    # same seed and tier -> the same interval; another tier is another stream
    again = ratio(adapted, oracle, tier="T1", seed=3, resamples=2000, confidence=0.95,
                  method="bca", what="ARR")
    assert (again.lower, again.upper) == (iv.lower, iv.upper)
    other = ratio(adapted, oracle, tier="T0", seed=3, resamples=2000, confidence=0.95,
                  method="bca", what="ARR")
    assert (other.lower, other.upper) != (iv.lower, iv.upper)


def test_a_zero_oracle_makes_the_ratio_undefined():
    with pytest.raises(ValueError, match="mean recall is 0"):
        ratio([0.0, 0.0], [0.0, 0.0], tier="T1", seed=0, resamples=200, confidence=0.95,
              method="bca", what="ARR")


def test_overlap_and_ndcg_by_hand():
    from harness.studies.embedding_migration.retention import ndcg_at_k, overlap_at_k

    a = np.array([[0, 1, 2, 3], [4, 5, 6, 7]])
    b = np.array([[3, 2, 9, 8], [4, 5, 6, 7]])
    assert overlap_at_k(a, b).tolist() == [0.5, 1.0]
    # ranking [0, 1, 2, 3], grades {1: 2, 3: 1, 9: 1} (9 is judged but not retrieved):
    # DCG = 2/log2(3) + 1/log2(5); ideal [2, 1, 1] -> 2/log2(2) + 1/log2(3) + 1/log2(4)
    dcg = 2 / np.log2(3) + 1 / np.log2(5)
    ideal = 2 / 1 + 1 / np.log2(3) + 1 / 2
    got = ndcg_at_k(a[:1], [{1: 2.0, 3: 1.0, 9: 1.0}])
    assert got[0] == pytest.approx(dcg / ideal, abs=1e-12)
    assert ndcg_at_k(np.array([[9, 1, 3, 0]]), [{1: 2.0, 3: 1.0, 9: 1.0}])[0] == \
        pytest.approx((1 + 2 / np.log2(3) + 1 / 2) / ideal, abs=1e-12)
    with pytest.raises(ValueError, match="no positive grade"):
        ndcg_at_k(a[:1], [{}])
    with pytest.raises(ValueError, match="shapes"):
        overlap_at_k(a, b[:, :2])
