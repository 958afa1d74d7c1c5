"""nDCG@10 and the PPI estimate over queries (issue 38 item 6): nDCG against ir_measures;
the estimate by hand arithmetic of the PPI++ formulas; refusals that keep it valid."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy.stats import norm

from harness.judgments.estimate import estimate_ndcg, ndcg


def test_ndcg_agrees_with_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    rng = random.Random(0)
    for _ in range(30):
        docs = [f"d{j}" for j in range(15)]
        ranked = rng.sample(docs, 12)
        grades = {d: rng.choice([0, 0, 1, 2, 3]) for d in rng.sample(docs, 9)}
        if not any(grades.values()):
            continue
        run = {"q": {d: float(len(ranked) - k) for k, d in enumerate(ranked)}}
        (value,) = [m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 10],
                                                           {"q": grades}, run)]
        assert ndcg(ranked, grades) == pytest.approx(value, abs=1e-12)
    assert ndcg(["a"], {"b": 0}) == 0.0  # no relevant document: 0


def test_estimate_by_hand():
    # every query ranks d1, d2; gains by hand: nDCG is 1 if d1 is the more relevant, else
    # (g1 + g2/log2 3) / (g2 + g1/log2 3)
    tops = {q: ["d1", "d2"] for q in "abcdef"}
    hand = {"a": {"d1": 1, "d2": 0}, "b": {"d1": 0, "d2": 1}, "c": {"d1": 1, "d2": 1}}
    judge = {(q, d): g for q in "abc" for d, g in hand[q].items()}
    judge[("b", "d1")] = 0.5  # the judge is wrong about b's first document
    for q in "def":
        judge[(q, "d1")], judge[(q, "d2")] = (1.0, 0.0) if q != "f" else (0.0, 1.0)
    est = estimate_ndcg(tops, list("abcdef"), list("abc"), hand, judge)
    c = 1 / math.log2(3)
    y = np.array([1.0, c, 1.0])
    f = np.array([1.0, (0.5 + c) / (1 + 0.5 * c), 1.0])
    fu = np.array([1.0, 1.0, c])
    every = np.r_[f, fu]
    lam = np.clip(np.cov(y, f, ddof=1)[0, 1] / ((1 + 3 / 3) * np.var(every, ddof=1)), 0, 1)
    theta = y.mean() + lam * (fu.mean() - f.mean())
    half = norm.ppf(0.975) * math.sqrt(lam ** 2 * np.var(fu, ddof=1) / 3
                                       + np.var(y - lam * f, ddof=1) / 3)
    r = est.result
    assert r.estimate == pytest.approx(theta) and r.lam == pytest.approx(lam)
    assert r.interval == pytest.approx((theta - half, theta + half))
    assert r.labels_only == pytest.approx(y.mean())
    assert r.judge_only == pytest.approx(every.mean())
    assert est.to_dict()["judge_only"]["valid"] is False
    assert "no validity" in est.lines()[2]


def test_refusals():
    tops = {"a": ["d1", "d2"], "b": ["d1"]}
    hand = {"a": {"d1": 1, "d2": 0}, "b": {"d1": 1}}
    judge = {("a", "d1"): 1.0, ("a", "d2"): 0.0, ("b", "d1"): 1.0}
    with pytest.raises(ValueError, match="has no judge grade: pool the run"):
        estimate_ndcg({**tops, "b": ["d1", "d9"]}, ["a", "b"], ["a", "b"], hand, judge)
    with pytest.raises(ValueError, match="labelled in full"):
        estimate_ndcg(tops, ["a", "b"], ["a", "b"], {**hand, "a": {"d1": 1}}, judge)
    with pytest.raises(ValueError, match="not among"):
        estimate_ndcg(tops, ["a"], ["a", "z"], hand, judge)
