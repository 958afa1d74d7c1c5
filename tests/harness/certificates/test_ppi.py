"""PPI / PPI++: by hand, against brute force, and coverage by simulation against a biased judge."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.certificates.ppi import ppi_from_files, ppi_mean, read_judge, read_labels, tuned_lambda
from harness.core.formats import FormatError

TRUTH = 0.6            # P(label = 1) in every simulated population
N_LABELLED, N_UNLABELLED = 50, 2050
REPS = 800


def test_estimate_by_hand_with_a_fixed_lambda():
    labels = [1, 0, 1, 1]
    judge_l = [0.9, 0.2, 0.8, 0.7]
    judge_u = [0.6, 0.8]
    r = ppi_mean(labels, judge_l, judge_u, lam=1.0)
    # 3/4 + 1 * (mean(0.6, 0.8) - mean(0.9, 0.2, 0.8, 0.7)) = 0.75 + (0.7 - 0.65) = 0.8
    assert r.estimate == pytest.approx(0.8)
    assert r.judge_bias == pytest.approx(0.65 - 0.75)
    assert r.labels_only == pytest.approx(0.75)
    assert r.judge_only == pytest.approx((0.9 + 0.2 + 0.8 + 0.7 + 0.6 + 0.8) / 6)
    # variance: 1^2 * var(0.6, 0.8)/2 + var(labels - judge)/4, ddof 1
    diffs = np.array([0.1, -0.2, 0.2, 0.3])
    var = 0.02 / 2 + np.sum((diffs - diffs.mean()) ** 2) / 3 / 4
    z = 1.959963984540054
    assert r.interval[1] - r.interval[0] == pytest.approx(2 * z * np.sqrt(var))


def test_tuned_lambda_minimises_the_estimated_variance():
    rng = np.random.default_rng(1)
    y = (rng.random(200) < 0.6).astype(float)
    f = np.clip(0.3 + 0.5 * y + rng.normal(0, 0.2, 200), 0, 1)
    fu = np.clip(0.3 + 0.5 * (rng.random(3000) < 0.6) + rng.normal(0, 0.2, 3000), 0, 1)
    grid = np.linspace(0, 1, 10001)
    variance = grid ** 2 * np.var(fu, ddof=1) / fu.size + np.array(
        [np.var(y - g * f, ddof=1) for g in grid]) / y.size
    brute = grid[np.argmin(variance)]
    # PPI++ pools the judge variance over all items; the brute force uses each part's own
    assert tuned_lambda(y, f, fu) == pytest.approx(brute, abs=0.03)


def simulate(rng, judge):
    """Coverage of PPI, labels only and judge only; mean lambda and widths."""
    cover = {"ppi": 0, "labels": 0, "judge": 0}
    lams, ppi_width, label_width = [], [], []
    for _ in range(REPS):
        y = (rng.random(N_LABELLED + N_UNLABELLED) < TRUTH).astype(float)
        f = judge(rng, y)
        r = ppi_mean(y[:N_LABELLED], f[:N_LABELLED], f[N_LABELLED:], alpha=0.05)
        cover["ppi"] += r.interval[0] <= TRUTH <= r.interval[1]
        cover["labels"] += r.labels_only_interval[0] <= TRUTH <= r.labels_only_interval[1]
        cover["judge"] += r.judge_only_interval[0] <= TRUTH <= r.judge_only_interval[1]
        lams.append(r.lam)
        ppi_width.append(r.interval[1] - r.interval[0])
        label_width.append(r.labels_only_interval[1] - r.labels_only_interval[0])
    return ({k: v / REPS for k, v in cover.items()}, np.array(lams),
            np.mean(ppi_width), np.mean(label_width))


def flattering(rng, y):
    """Eight-plus points optimistic, but tracks the label."""
    return np.clip(0.3 + 0.6 * y + rng.normal(0, 0.1, y.size), 0, 1)


def uninformative(rng, y):
    return rng.random(y.size)


def test_ppi_covers_where_the_biased_judge_fails():
    coverage, lams, ppi_width, label_width = simulate(np.random.default_rng(2), flattering)
    # sd of an 800-repetition coverage estimate at 0.95 is 0.008
    assert 0.925 <= coverage["ppi"] <= 0.975
    assert coverage["judge"] < 0.05
    assert ppi_width < 0.6 * label_width              # the judge's precision is really used
    assert np.mean(lams) > 0.8


def test_an_uninformative_judge_gets_lambda_near_zero_and_costs_nothing():
    coverage, lams, ppi_width, label_width = simulate(np.random.default_rng(3), uninformative)
    assert np.median(lams) < 0.05                     # clipped at 0 about half the time
    assert np.mean(lams) < 0.12
    assert 0.92 <= coverage["ppi"] <= 0.975
    assert ppi_width < 1.05 * label_width


def write(path, objs):
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def test_refuses_without_human_labels(tmp_path):
    judge = write(tmp_path / "judge.jsonl", [{"item_id": "a", "score": 0.9},
                                             {"item_id": "b", "score": 0.7}])
    with pytest.raises(ValueError, match="no human labels") as err:
        ppi_from_files(judge, None)
    assert "0.800" in str(err.value)                  # the judge's opinion, shown as such
    empty = tmp_path / "labels.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match="no human labels"):
        ppi_from_files(judge, empty)
    one = write(tmp_path / "one.jsonl", [{"item_id": "a", "label": 1}])
    with pytest.raises(ValueError, match="at least 2"):
        ppi_from_files(judge, one)


@pytest.mark.parametrize("obj,field", [
    ({"item_id": "x"}, "score"),
    ({"score": 0.5}, "item_id"),
    ({"item_id": "x", "score": 1.5}, "score"),
    ({"item_id": "x", "score": "high"}, "score"),
])
def test_judge_reader_names_line_and_field(tmp_path, obj, field):
    path = write(tmp_path / "judge.jsonl", [{"item_id": "a", "score": 0.5}, obj])
    with pytest.raises(FormatError) as err:
        read_judge(path)
    assert err.value.line == 2 and err.value.field == field


def test_label_reader_is_strict(tmp_path):
    judge = {"a": 0.5, "b": 0.4}
    dup = write(tmp_path / "dup.jsonl", [{"item_id": "a", "label": 1}, {"item_id": "a", "label": 0}])
    with pytest.raises(FormatError, match="duplicate"):
        read_labels(dup, judge)
    orphan = write(tmp_path / "orphan.jsonl", [{"item_id": "z", "label": 1}])
    with pytest.raises(FormatError, match="no judge score"):
        read_labels(orphan, judge)
    assert read_labels(write(tmp_path / "ok.jsonl", [{"item_id": "b", "label": True}]),
                       judge) == {"b": 1.0}
