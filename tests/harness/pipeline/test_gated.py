"""A gated bench run retrieves query by query; the sequential gate's saving is real work
not done (retrievals counted), and its point verdict agrees with a full run's claim."""

from __future__ import annotations

import json

import pytest

from harness.cli import main


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from ingestion.synthetic import generate

    return generate(seed=3, meetings=40, out_dir=tmp_path_factory.mktemp("syn") / "syn")


def _bench(*extra):
    return ["bench", "--mode", "bm25", "--granularity", "file", "--no-progress", *extra]


def _gate(tmp_path, synthetic, policy, threshold, measure="Success@1", *extra):
    doc = tmp_path / f"gate-{policy}-{threshold}.json"
    code = main(_bench("--corpus", f"synthetic:{synthetic}", "--gate", policy,
                       "--gate-measure", measure, "--gate-threshold", str(threshold),
                       "--gate-out", str(doc), *extra))
    return code, json.loads(doc.read_text())


def test_point_gate_mean_equals_the_full_runs_claim(tmp_path, synthetic):
    assert main(_bench("--corpus", f"synthetic:{synthetic}", "--out", str(tmp_path / "full"),
                       "--no-warehouse")) == 0
    metrics = json.loads((tmp_path / "full" / "metrics.json").read_text())
    row = next(r for r in metrics["rows"] if r["query_class"] == "all")
    code, doc = _gate(tmp_path, synthetic, "point", 0.0)
    assert code == 0
    assert doc["queries_scored"] == doc["queries_available"] == row["n"]
    assert doc["mean"] == pytest.approx(row["metrics"]["Success@1"], abs=1e-12)


def test_sequential_gate_stops_early_and_retrieves_only_what_it_scored(tmp_path, synthetic,
                                                                        monkeypatch):
    import harness.pipeline.gated as gated

    calls = []
    real = gated.retrieve_queries

    def counting(cfg, backend, queries, *rest):
        calls.append(len(queries))
        return real(cfg, backend, queries, *rest)

    monkeypatch.setattr(gated, "retrieve_queries", counting)
    # R@100 at file level over a 40-meeting corpus is 1.0 for every query: decided quickly
    code, doc = _gate(tmp_path, synthetic, "sequential", 0.5, "R@100")
    assert code == 0 and doc["verdict"] == "pass"
    assert doc["queries_scored"] < doc["queries_available"]
    assert doc["queries_saved"] == doc["queries_available"] - doc["queries_scored"]
    # one retrieval of one query per value consumed: the saving is retrieval never done
    assert calls == [1] * doc["queries_scored"]


def test_sequential_gate_fails_a_line_the_system_cannot_clear(tmp_path, synthetic):
    code, doc = _gate(tmp_path, synthetic, "sequential", 0.999)
    assert code == 1
    assert doc["verdict"] in ("fail", "undecided") and doc["passed"] is False


def test_a_gate_without_threshold_is_refused(tmp_path, synthetic, capsys):
    assert main(_bench("--corpus", f"synthetic:{synthetic}", "--gate", "point")) == 2
    assert "--gate-threshold" in capsys.readouterr().err
