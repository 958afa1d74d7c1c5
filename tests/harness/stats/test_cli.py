"""The intervals and power commands end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest

from harness.cli import main
from tests.harness.stats.builders import make_results


def _queries(shift=0.0):
    rng = np.random.default_rng(0)
    out = {"alpha": {}, "beta": {}}
    for i in range(30):
        cls = "lookup" if i % 2 else "summarize"
        v = float(np.clip(rng.beta(2, 5) + shift, 0, 1))
        out["alpha"][f"a{i:02d}"] = (cls, {"nDCG@10": v, "Success@1": float(v > 0.3)})
    for i in range(20):
        v = float(np.clip(rng.beta(2, 3) + shift, 0, 1))
        out["beta"][f"b{i:02d}"] = (None, {"nDCG@10": v, "Success@1": float(v > 0.3)})
    return out


def test_intervals_command_writes_deterministic_claim_files(tmp_path, capsys):
    ctl = make_results(tmp_path, "control", _queries())
    arm = make_results(tmp_path, "arm", _queries(shift=0.05))
    metrics_before = (arm / "metrics.json").read_bytes()
    args = ["intervals", str(arm), "--control", str(ctl), "--resamples", "1000", "--permutations", "1000"]
    assert main(args) == 0
    out = capsys.readouterr().out
    first = (arm / "intervals.json").read_bytes(), (arm / "comparisons.json").read_bytes()
    assert main(args) == 0
    capsys.readouterr()
    assert ((arm / "intervals.json").read_bytes(), (arm / "comparisons.json").read_bytes()) == first
    assert (arm / "metrics.json").read_bytes() == metrics_before
    # no temporary left behind (the marker of a results directory is its own)
    assert not [p for p in arm.iterdir() if p.name.startswith(".") and p.name != ".harness-output.json"]
    doc = json.loads(first[0])
    assert doc["kind"] == "intervals" and doc["seed"] == 0 and doc["resamples"] == 1000
    # 2 corpora: alpha (2 classes + all), beta (all), pooled -> 5 rows x 2 measures
    assert len(doc["rows"]) == 10
    comp = json.loads(first[1])
    pooled = [r for r in comp["rows"] if r["corpus"] == "alpha+beta" and r["measure"] == "nDCG@10"]
    assert len(pooled) == 1 and pooled[0]["verdict"] == "significant" and pooled[0]["delta"] > 0
    assert "| alpha+beta | all | nDCG@10 | arm | 50 |" in out and "| * |" in out
    assert comp["family_size"] == 1 and "family of one" in comp["family_note"]
    assert "clopper-pearson" in out


def _improving(n_better: int, n: int = 12) -> dict:
    """One corpus of n queries; the first n_better score 1, the rest 0."""
    return {"alpha": {f"q{i:02d}": ("lookup", {"nDCG@10": 1.0 if i < n_better else 0.0})
                      for i in range(n)}}


def test_intervals_command_holm_family_is_every_arm_given(tmp_path, capsys, caplog):
    ctl = make_results(tmp_path, "control", _improving(0))
    arms = [make_results(tmp_path, name, _improving(k)) for name, k in (("a", 6), ("b", 6), ("c", 6))]
    assert main(["intervals", *map(str, arms), "--control", str(ctl),
                 "--resamples", "500", "--permutations", "1000"]) == 0
    out = capsys.readouterr().out
    docs = [(arm / "comparisons.json").read_bytes() for arm in arms]
    assert docs[0] == docs[1] == docs[2]  # one family, one document, in every arm directory
    doc = json.loads(docs[0])
    assert doc["family_size"] == 3 and [a["name"] for a in doc["arms"]] == ["a", "b", "c"]
    for arm in arms:
        assert json.loads((arm / "intervals.json").read_text())["control_name"] == arm.name
    for r in doc["rows"]:  # 6 discordant: raw p 2^(1-6); three arms: Holm 3 x 2^-5 = 0.09375
        assert r["family_size"] == 3 and r["p"] == 2.0 ** -5
        assert r["p_holm"] == pytest.approx(3 * 2.0 ** -5) and r["verdict"] == "cannot be significant"
    assert "Holm family of 3 (a, b, c)" in out and "| alpha | all | nDCG@10 | c | 12 |" in out
    assert not (ctl / "comparisons.json").exists()

    # one arm at a time: a family of one, which the document says (and Holm corrects nothing)
    caplog.clear()
    assert main(["intervals", str(arms[0]), "--control", str(ctl),
                 "--resamples", "500", "--permutations", "1000"]) == 0
    capsys.readouterr()
    alone = json.loads((arms[0] / "comparisons.json").read_text())
    assert alone["family_size"] == 1 and "family of one" in alone["family_note"]
    assert {r["p_holm"] for r in alone["rows"]} == {2.0 ** -5}
    assert {r["verdict"] for r in alone["rows"]} == {"significant"}
    assert "replaces a family of 3 (['a', 'b', 'c']) with 1 (['a'])" in caplog.text


def test_intervals_command_refuses_a_family_it_cannot_pair(tmp_path, capsys):
    ctl = make_results(tmp_path, "control", _improving(0))
    arm = make_results(tmp_path, "arm", _improving(6))
    graded = make_results(tmp_path, "binary", _improving(7), relevance_policy={"binary": True})
    before = (arm / "intervals.json").exists()
    assert main(["intervals", str(arm), str(graded), "--control", str(ctl),
                 "--resamples", "500", "--permutations", "1000"]) == 2
    err = capsys.readouterr().err
    assert "relevance_policy differs" in err and "binary" in err
    assert (arm / "intervals.json").exists() == before  # nothing written for any arm
    assert main(["intervals", str(arm), str(arm), "--resamples", "500"]) == 2
    assert "given twice" in capsys.readouterr().err
    assert main(["intervals", str(arm), str(ctl), "--control", str(ctl), "--resamples", "500"]) == 2
    assert "also listed as an arm" in capsys.readouterr().err


def test_intervals_command_with_another_seed_changes_only_bootstrap_rows(tmp_path, capsys):
    arm = make_results(tmp_path, "arm", _queries())
    assert main(["intervals", str(arm), "--resamples", "1000"]) == 0
    a = json.loads((arm / "intervals.json").read_text())
    assert main(["intervals", str(arm), "--resamples", "1000", "--seed", "9"]) == 0
    b = json.loads((arm / "intervals.json").read_text())
    capsys.readouterr()
    for ra, rb in zip(a["rows"], b["rows"]):
        if ra["method"] == "clopper-pearson":
            assert (ra["lower"], ra["upper"]) == (rb["lower"], rb["upper"])
        else:
            assert rb["seed"] == 9 and ra["estimate"] == rb["estimate"]


def test_power_command_prints_the_formula_and_the_counts(tmp_path, capsys):
    assert main(["power", "--results", str(tmp_path / "missing")]) == 2
    capsys.readouterr()
    assert main(["power", "--audit", "-n", "10", "-v", "1.00", "-b", "0.70"]) == 0
    out = capsys.readouterr().out
    assert "At least 6 of 10 queries must differ" in out
    assert "| 1.00 (10/10) | [0.692, 1.000] | 0.308 |" in out
    assert "| 0.70 (7/10) | [0.348, 0.933] | 0.586 |" in out
    assert "cannot be significant" in out


def test_power_command_from_a_results_dir_uses_its_per_query_sd(tmp_path, capsys):
    queries = _queries()
    res = make_results(tmp_path, "pilot", queries)
    values = [v["nDCG@10"] for _, v in queries["alpha"].values()]
    mean = sum(values) / len(values)
    sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
    assert main(["power", "--results", str(res), "--corpus", "alpha", "--measure", "nDCG@10",
                 "--effect", "0.02", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n"] == 30 and doc["sd"] == pytest.approx(sd, abs=1e-9)
    assert doc["queries_needed"] == int(np.ceil((2.8015852181 * sd / 0.02) ** 2 - 1e-6))
    other = make_results(tmp_path, "other", _queries(shift=0.05))
    assert main(["power", "--results", str(res), "--corpus", "alpha", "--measure", "nDCG@10",
                 "--pilot", str(other), "--pilot-control", str(res), "--json"]) == 0
    paired = json.loads(capsys.readouterr().out)
    assert "paired differences" in paired["sd_source"] and paired["sd"] < sd



def test_power_command_counts_the_holm_family(tmp_path, capsys):
    # 7 queries: floor 2^(1-7) = 0.015625 clears 0.05 alone, but not as one of four arms
    # (4 x 0.015625 = 0.0625); four arms need 8 queries to differ: 4 x 2^(1-8) = 0.03125
    res = make_results(tmp_path, "seven", {"alpha": {f"q{i}": ("lookup", {"nDCG@10": i / 10})
                                                      for i in range(7)}})
    common = ["power", "--results", str(res), "--measure", "nDCG@10", "--sd", "0.3", "--json"]
    assert main(common) == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["family_size"] == 1 and alone["can_be_significant"]
    assert alone["smallest_attainable_p_holm"] == alone["smallest_attainable_p"] == 2.0 ** -6
    assert alone["queries_that_must_differ"] == 6
    assert main(common + ["--arms", "4"]) == 0
    four = json.loads(capsys.readouterr().out)
    assert four["family_size"] == 4 and not four["can_be_significant"]
    assert four["smallest_attainable_p_holm"] == 4 * 2.0 ** -6
    assert four["queries_that_must_differ"] == 8
    assert main(common[:-1] + ["--arms", "4"]) == 0
    assert "Holm family of 4 arms" in capsys.readouterr().out
    assert main(common + ["--arms", "0"]) == 2
    assert "family_size" in capsys.readouterr().err


def test_power_json_is_pure_json_and_keeps_a_tiny_floor(tmp_path, capsys):
    # 55 judgeable queries and one with no relevant document: the note about the dropped
    # query goes to stderr, and the floor 2^(1-55) = 2^-54 (5.55e-17) must not print as 0
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(55)) + "q55 0 d55 0\n")
    assert main(["power", "--qrels", str(qrels), "--sd", "0.3", "--effect", "0.02", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert "1 qrels queries have no relevant document" in captured.err
    assert doc["n"] == 55
    assert doc["smallest_attainable_p"] == 2.0 ** -54 and doc["smallest_attainable_p_holm"] == 2.0 ** -54
    assert main(["power", "--qrels", str(qrels), "--arms", "3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["smallest_attainable_p_holm"] == 3 * 2.0 ** -54
    assert main(["power", "--audit", "-n", "80", "-v", "0.5000", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["smallest_attainable_p"] == 2.0 ** -79


def test_intervals_with_a_control_also_writes_the_controls_own_intervals(tmp_path, capsys):
    import shutil

    ctl = make_results(tmp_path, "control", _improving(0))
    arm = make_results(tmp_path, "a", _improving(6))
    alone = tmp_path / "control-alone"
    shutil.copytree(ctl, alone)
    assert not (ctl / "intervals.json").exists()
    assert main(["intervals", str(arm), "--control", str(ctl), "--resamples", "500",
                 "--permutations", "1000"]) == 0
    out = capsys.readouterr().out
    assert "# control (the control): intervals" in out
    assert str(ctl / "intervals.json") in out.splitlines()[-1]
    # the same intervals as when the control is given as a directory of its own
    assert main(["intervals", str(alone), "--resamples", "500"]) == 0
    capsys.readouterr()
    got = json.loads((ctl / "intervals.json").read_text())
    want = json.loads((alone / "intervals.json").read_text())
    assert got["control_name"] == "control" and got["rows"] == want["rows"] and got["rows"]
    assert not (ctl / "comparisons.json").exists()
