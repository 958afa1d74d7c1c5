"""Rater agreement (issue 38 item 4): Cohen's kappa (plain and linearly weighted) and
Fleiss' kappa against statsmodels' independent implementations and hand values; bootstrap
intervals over queries, deterministic."""

from __future__ import annotations

import random

import numpy as np
import pytest

from harness.judgments.agreement import agreement, cohen_kappa, fleiss_kappa
from harness.claims.labels import Label

inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")


def test_cohen_by_hand():
    # 10 pairs: 8 agree; each rater gives grade 0 half the time and grade 2 half
    rows = [(0, 0)] * 4 + [(2, 2)] * 4 + [(0, 2), (2, 0)]
    # p_o = 0.8, p_e = 0.5 * 0.5 + 0.5 * 0.5 = 0.5: kappa = 0.3 / 0.5
    assert cohen_kappa(rows) == pytest.approx(0.6)
    assert cohen_kappa([(1, 1), (2, 2)]) == pytest.approx(1.0)
    assert np.isnan(cohen_kappa([(1, 1), (1, 1)]))  # chance agreement is total


def test_cohen_and_fleiss_agree_with_statsmodels():
    rng = random.Random(2)
    rows = []
    for _ in range(300):
        a = rng.choice([0, 0, 1, 2, 3])
        rows.append((a, a if rng.random() < 0.6 else rng.randrange(4)))
    table = np.zeros((4, 4))
    for a, b in rows:
        table[a, b] += 1
    assert cohen_kappa(rows) == pytest.approx(inter_rater.cohens_kappa(table).kappa, abs=1e-12)
    assert cohen_kappa(rows, weighted=True) == pytest.approx(
        inter_rater.cohens_kappa(table, wt="linear").kappa, abs=1e-12)
    ratings = np.array([[rng.choice([0, 1, 2, 3]) for _ in range(3)] for _ in range(80)])
    counts, _ = inter_rater.aggregate_raters(ratings, n_cat=4)
    assert fleiss_kappa(counts) == pytest.approx(inter_rater.fleiss_kappa(counts), abs=1e-12)


def _labels(rng, queries=30, per_query=5, raters=("ana", "bo"), noise=0.3):
    out = []
    for q in range(queries):
        for d in range(per_query):
            truth = rng.choice([0, 0, 1, 2, 3])
            for r in raters:
                label = truth if rng.random() > noise else rng.randrange(4)
                out.append(Label(f"q{q}", f"d{d}", r, "2026-12-07T09:00:00Z", label))
    return out


def test_agreement_report_and_intervals():
    labels = _labels(random.Random(4))
    first = agreement(labels)
    assert first.to_dict() == agreement(list(reversed(labels))).to_dict()  # order-free, seeded
    (pair,) = first.cohen
    assert pair["raters"] == ["ana", "bo"] and pair["pairs"] == 150 and pair["queries"] == 30
    rows = [(a.label, b.label) for a, b in zip(labels[::2], labels[1::2])]
    assert pair["kappa"] == pytest.approx(cohen_kappa(rows))
    low, high = pair["interval"]
    assert low < pair["kappa"] < high and high - low < 0.4
    # the bootstrap interval is about as wide as statsmodels' asymptotic one
    table = np.zeros((4, 4))
    for a, b in rows:
        table[a, b] += 1
    asym = inter_rater.cohens_kappa(table)
    assert 0.5 < (high - low) / (asym.kappa_upp - asym.kappa_low) < 2.0
    assert first.per_rater["ana"]["kappa_vs_others"]["kappa"] == pytest.approx(pair["kappa"])
    assert first.fleiss is None  # two raters: Cohen's is the measure


def test_three_raters_get_fleiss_and_one_rater_gets_a_plain_message():
    labels = _labels(random.Random(5), raters=("ana", "bo", "cy"))
    report = agreement(labels)
    assert len(report.cohen) == 3
    assert report.fleiss["raters_per_pair"] == 3 and report.fleiss["pairs"] == 150
    lone = agreement([x for x in labels if x.rater == "ana"])
    assert lone.cohen == () and lone.fleiss is None
    assert "no two raters labelled the same pair" in lone.lines()[-1]
