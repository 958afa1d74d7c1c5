"""Gate policies: both outcomes of each, and a sequential saving that is real work not done."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.evaluation import scoring
from harness.cli import main
from harness.core.formats import write_trec_qrels, write_trec_run
from harness.core.records import Qrel, ScoredDoc
from harness.stats.gate import GateSpec, run_gate
from harness.stats.sequential import QueryStream
from tests.harness.stats.builders import make_results


def _spec(values, threshold, **kw):
    keys = [("c", f"q{i:03d}") for i in range(len(values))]
    seed = kw.pop("seed", None)
    stream = QueryStream.from_values(dict(zip(keys, values)), seed=seed)
    return GateSpec(measure=kw.pop("measure", "nDCG@10"), threshold=threshold, corpus="c",
                    query_class="all", stream=stream, progress=False, **kw)


def test_point_passes_at_the_line_and_fails_below_it():
    values = [0.2, 0.4, 0.6]  # mean 0.4
    assert run_gate("point", _spec(values, 0.4)).verdict == "pass"
    assert run_gate("point", _spec(values, 0.41)).verdict == "fail"


def test_ci_lower_fails_a_mean_that_clears_the_line_but_not_its_interval():
    ones = [1.0] * 10  # Success@1 10/10: mean 1.0, exact lower bound 0.6915
    spec = _spec(ones, 0.8, measure="Success@1")
    result = run_gate("ci-lower", spec)
    assert result.verdict == "fail" and result.mean == 1.0
    assert result.lower == pytest.approx(0.025 ** (1 / 10))
    assert run_gate("ci-lower", _spec(ones, 0.69, measure="Success@1")).verdict == "pass"
    assert run_gate("point", _spec(ones, 0.8, measure="Success@1")).verdict == "pass"


def test_regression_catches_a_paired_drop_the_point_policy_misses():
    rng = np.random.default_rng(0)
    control = rng.uniform(0.5, 1.0, size=60)
    candidate = control - 0.05  # every query drops: the mean still clears 0.5
    keys = [("c", f"q{i:03d}") for i in range(60)]
    spec = _spec(candidate.tolist(), 0.5, control=dict(zip(keys, control.tolist())), seed=None)
    assert run_gate("point", _spec(candidate.tolist(), 0.5)).verdict == "pass"
    result = run_gate("regression", spec)
    assert result.verdict == "fail" and result.regression["significant_drop"]
    assert result.regression["discordant"] == 60 and result.regression["worsened"] == 60
    same = _spec(control.tolist(), 0.5, control=dict(zip(keys, control.tolist())))
    steady = run_gate("regression", same)
    assert steady.verdict == "pass" and steady.regression["p"] == 1.0


def test_regression_needs_a_control_with_the_same_queries():
    spec = _spec([0.5, 0.6], 0.1, control={("c", "q000"): 0.5, ("c", "zzz"): 0.1})
    with pytest.raises(ValueError, match="different queries"):
        run_gate("regression", spec)


def test_sequential_decides_early_both_ways_and_undecided_fails():
    rng = np.random.default_rng(42)
    good = (rng.random(300) < 0.98).astype(float).tolist()
    bad = (rng.random(300) < 0.60).astype(float).tolist()
    passed = run_gate("sequential", _spec(good, 0.85, seed=1))
    failed = run_gate("sequential", _spec(bad, 0.85, seed=1))
    assert passed.verdict == "pass" and passed.scored < 150
    # stored values: stopping early computed nothing less, so no saving is claimed
    assert passed.saved is None and passed.to_dict()["queries_saved"] is None
    assert passed.to_dict()["queries_saved_note"] == "not applicable: values were already computed"
    assert failed.verdict == "fail" and failed.scored < 150
    at_line = [1.0, 0.0] * 150  # mean exactly 0.5, the threshold
    undecided = run_gate("sequential", _spec(at_line, 0.5, seed=1))
    assert undecided.verdict == "undecided" and not undecided.passed and undecided.scored == 300
    budgeted = run_gate("sequential", _spec(at_line, 0.5, seed=1, budget=40))
    assert budgeted.verdict == "undecided" and budgeted.scored == 40


def _gold(tmp_path, n=300, hit_rate=0.98, seed=3):
    """n queries with one relevant document each; the run ranks it first on hit_rate of them."""
    rng = np.random.default_rng(seed)
    qrels, run = [], {}
    for i in range(n):
        q = f"q{i:03d}"
        qrels += [Qrel(q, f"rel{i}", 1), Qrel(q, f"non{i}", 0)]
        first = f"rel{i}" if rng.random() < hit_rate else f"non{i}"
        second = f"non{i}" if first == f"rel{i}" else f"other{i}"
        run[q] = [ScoredDoc(q, first, 2.0), ScoredDoc(q, second, 1.0)]
    write_trec_qrels(tmp_path / "qrels.txt", qrels)
    write_trec_run(tmp_path / "run.txt", run)
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


def test_sequential_saving_is_fewer_scorer_calls_not_a_smaller_number(tmp_path, monkeypatch, capsys):
    qrels, run = _gold(tmp_path)
    calls = []
    real = scoring.score

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(scoring, "score", counting)
    common = ["gate", "--measure", "Success@1", "--threshold", "0.85", "--qrels", str(qrels),
              "--run", str(run), "--json"]
    assert main(common + ["--policy", "sequential"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "pass" and doc["queries_available"] == 300
    assert len(calls) == doc["queries_scored"] < 150  # each scored query was one scorer call
    assert doc["queries_saved"] == 300 - len(calls) and doc["queries_saved_note"] is None
    calls.clear()
    assert main(common + ["--policy", "point"]) == 0
    assert len(calls) == 300  # the point policy scores everything


def test_gate_cli_over_a_results_dir_exit_codes_and_step_summary(tmp_path, monkeypatch, capsys):
    queries = {"alpha": {f"a{i}": ("lookup", {"nDCG@10": v}) for i, v in enumerate([0.2, 0.4, 0.6])}}
    res = make_results(tmp_path, "run", queries, {"alpha": "A"})
    step = tmp_path / "step.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    assert main(["gate", "--results", str(res), "--measure", "nDCG@10", "--threshold", "0.3"]) == 0
    assert main(["gate", "--results", str(res), "--measure", "nDCG@10", "--threshold", "0.5"]) == 1
    text = step.read_text()
    assert "✅ PASS" in text and "❌ FAIL" in text and "mean 0.4000 < threshold 0.5000" in text
    own = tmp_path / "own.md"
    assert main(["gate", "--results", str(res), "--measure", "nDCG@10", "--threshold", "0.5",
                 "--summary", str(own)]) == 1
    assert "❌ FAIL" in own.read_text()
    capsys.readouterr()
    assert main(["gate", "--results", str(res), "--measure", "nDCG@10", "--threshold", "0.3",
                 "--policy", "regression"]) == 2  # regression without a control is an input error
    assert "--control" in capsys.readouterr().err


def test_regression_gate_scores_a_run_lazily_against_a_recorded_control(tmp_path, capsys):
    qrels, good_run = _gold(tmp_path, n=120, hit_rate=0.95, seed=3)
    control_dir = tmp_path / "control"
    assert main(["score", "--qrels", str(qrels), "--run", str(good_run), "--out", str(control_dir),
                 "--measures", "Success@1", "MRR@10", "--licence", "CC0-1.0", "--tier", "A",
                 "--no-warehouse"]) == 0
    worse = tmp_path / "worse"
    worse.mkdir()
    _, worse_run = _gold(worse, n=120, hit_rate=0.80, seed=3)  # same queries, fewer first-rank hits
    capsys.readouterr()
    # the candidate states the licence the control was scored with: a tier that differs
    # makes the pair incomparable, as in harness intervals (test_gate_comparability.py)
    common = ["gate", "--policy", "regression", "--measure", "Success@1", "--threshold", "0.5",
              "--qrels", str(qrels), "--control", str(control_dir), "--json",
              "--licence", "CC0-1.0"]
    assert main(common + ["--run", str(worse_run)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["mean"] >= 0.5 and doc["regression"]["significant_drop"]  # the line still clears
    assert doc["regression"]["worsened"] > 0 and doc["regression"]["improved"] == 0
    assert main(common + ["--run", str(good_run)]) == 0
    assert json.loads(capsys.readouterr().out)["regression"]["discordant"] == 0


def test_a_computing_stream_claims_its_saving_a_stored_one_does_not():
    values = {("c", f"q{i:03d}"): 1.0 for i in range(200)}
    calls = []

    def compute(key):
        calls.append(key)
        return values[key]

    computing = GateSpec(measure="Success@1", threshold=0.5, corpus="c", query_class="all",
                         stream=QueryStream(values, compute, seed=1), progress=False)
    done = run_gate("sequential", computing)
    assert done.verdict == "pass" and done.scored == len(calls) < 200
    assert done.saved == 200 - len(calls) and done.saved_note is None
    stored = run_gate("sequential", _spec(list(values.values()), 0.5, seed=1, measure="Success@1"))
    assert stored.scored == done.scored  # the same decision after the same queries ...
    assert stored.saved is None  # ... but nothing was saved: the values already existed
    point = run_gate("point", _spec([1.0, 0.0], 0.4))
    assert point.saved is None and point.to_dict()["queries_saved"] is None


def test_gate_cli_over_a_results_dir_claims_no_saving(tmp_path, capsys):
    queries = {"alpha": {f"a{i:03d}": ("lookup", {"Success@1": 1.0}) for i in range(200)}}
    res = make_results(tmp_path, "run", queries, {"alpha": "A"})
    assert main(["gate", "--results", str(res), "--measure", "Success@1", "--threshold", "0.5",
                 "--policy", "sequential", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "pass" and doc["queries_scored"] < 200
    assert doc["queries_saved"] is None
    assert doc["queries_saved_note"] == "not applicable: values were already computed"
    assert main(["gate", "--results", str(res), "--measure", "Success@1", "--threshold", "0.5",
                 "--policy", "sequential"]) == 0
    assert "saved" not in capsys.readouterr().out.replace("not applicable", "")
