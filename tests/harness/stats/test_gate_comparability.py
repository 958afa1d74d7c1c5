"""``gate --policy regression`` refuses a control that measured something else, as
``harness intervals`` does (issue #16).

The review's repro: a regression gate against a control measured on a different index
passed, although ``harness intervals`` refused the same pair.  Both now apply the same rules
(``harness.claims.metrics.comparability_notes``): metric engine, relevance policy, each shared
corpus's version / checksum / tier, granularity, scope, stage and the corpora in the index.
"""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from tests.harness.cli.helpers import make_inputs
from tests.ingestion.helpers import write_beir
from tests.warehouse.builders import build_results

VALUES = {("pub", f"q{i}"): {"nDCG@10": (i % 5) / 5} for i in range(1, 13)}
BETTER = {k: {"nDCG@10": min(1.0, v["nDCG@10"] + 0.2)} for k, v in VALUES.items()}
OTHER = {("other", f"o{i}"): {"nDCG@10": 0.5} for i in range(1, 4)}
PUB = {"pub": ("A", "MIT")}


def run(out, values, corpora, *, index_corpora=None, **kw):
    index = None
    if index_corpora is not None:
        index = {"corpora": index_corpora, "tier": "A", "backend": {"name": "embedded"}}
    retrieval = {"source": "test", "granularity": "chunk", "scope": "corpus", "stage": "retrieve",
                 **kw.pop("retrieval", {})}
    return build_results(out, values, corpora=corpora, control_name=out.name, index=index,
                         retrieval=retrieval, **kw)


def refusal(capsys, argv) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "Traceback" not in err and err.count("\n") == 1, err
    return err


def gate(arm, control, *extra):
    return ["gate", "--policy", "regression", "--measure", "nDCG@10", "--threshold", "0",
            "--results", str(arm), "--control", str(control), "--corpus", "pub",
            "--permutations", "200", *extra]


def test_a_control_on_a_different_index_is_refused_as_intervals_refuses_it(tmp_path, capsys):
    control = run(tmp_path / "control", VALUES, PUB, index_corpora=["pub"])
    arm = run(tmp_path / "arm", {**BETTER, **OTHER}, {**PUB, "other": ("A", "MIT")},
              index_corpora=["other", "pub"])
    note = "index corpora differ: ['pub'] vs ['other', 'pub']"
    err = refusal(capsys, ["intervals", str(arm), "--control", str(control), "--resamples",
                           "200", "--permutations", "200"])
    assert note in err
    err = refusal(capsys, gate(arm, control))
    assert note in err and "measured different things" in err
    assert f"{arm / 'metrics.json'}: arm 'arm' and control 'control'" in err


@pytest.mark.parametrize("change, note", [
    ({"retrieval": {"granularity": "file"}}, "retrieval.granularity differs: 'chunk' vs 'file'"),
    ({"corpus_fields": {"pub": {"sha256": "1" * 64}}}, "corpus pub: sha256 differs"),
])
def test_every_comparability_rule_applies_to_the_gate(tmp_path, capsys, change, note):
    control = run(tmp_path / "control", VALUES, PUB, index_corpora=["pub"])
    arm = run(tmp_path / "arm", BETTER, PUB, index_corpora=["pub"], **change)
    assert note in refusal(capsys, gate(arm, control))


def test_a_comparable_control_is_gated(tmp_path, capsys):
    control = run(tmp_path / "control", VALUES, PUB, index_corpora=["pub"])
    arm = run(tmp_path / "arm", BETTER, PUB, index_corpora=["pub"])
    assert main(gate(arm, control, "--json")) == 0
    doc = json.loads(capsys.readouterr().out)
    # each of the 12 queries improves by min(0.2, 1 - v): 0.2 for v < 0.8, else 0.2 (0.8 -> 1.0)
    assert doc["regression"]["delta"] == pytest.approx(0.2)


def test_the_qrels_mode_compares_with_what_score_would_record(tmp_path, capsys):
    qrels, run_file, _ = make_inputs(tmp_path)
    control = tmp_path / "scored"
    assert main(["score", "--qrels", str(qrels), "--run", str(run_file), "--out", str(control),
                 "--corpus-name", "toy", "--no-warehouse"]) == 0
    capsys.readouterr()
    qrels_gate = ["gate", "--policy", "regression", "--measure", "nDCG@10", "--threshold", "0",
                  "--qrels", str(qrels), "--run", str(run_file), "--corpus-name", "toy",
                  "--control", str(control), "--permutations", "200"]
    assert main(qrels_gate) in (0, 1)  # the same qrels and engine: gated, not refused
    capsys.readouterr()
    other = tmp_path / "qrels2.txt"
    other.write_text(qrels.read_text() + "q99 0 m0_1 1\n")
    assert "corpus toy: sha256 differs" in refusal(capsys, [
        *qrels_gate[:8], str(other), *qrels_gate[9:]])
    assert "metric_engine.tie_break differs" in refusal(capsys, [*qrels_gate, "--preserve-order"])
    assert "relevance_policy differs" in refusal(capsys, [*qrels_gate, "--binary-relevance"])


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from ingestion.synthetic import generate

    return generate(seed=3, meetings=12, out_dir=tmp_path_factory.mktemp("syn") / "syn")


def _bench(*extra):
    return ["bench", "--mode", "bm25", "--granularity", "file", "--no-progress",
            "--no-warehouse", *extra]


def test_bench_gate_refuses_a_control_retrieved_from_another_index(tmp_path, synthetic, capsys):
    control = tmp_path / "control"
    assert main(_bench("--corpus", f"synthetic:{synthetic}", "--out", str(control))) == 0
    toy = write_beir(tmp_path / "toyset")
    gated = _bench("--gate", "regression", "--gate-measure", "Success@1", "--gate-threshold",
                   "0", "--gate-control", str(control), "--gate-corpus", "synthetic")
    capsys.readouterr()
    err = refusal(capsys, [*gated, "--corpus", f"synthetic:{synthetic}", "--corpus",
                           f"beir:{toy}"])
    assert "index corpora differ: ['synthetic'] vs ['beir-toyset', 'synthetic']" in err
    # the same index: gated
    assert main([*gated, "--corpus", f"synthetic:{synthetic}"]) in (0, 1)
    assert "regression" in capsys.readouterr().out
    err = refusal(capsys, [*gated, "--corpus", f"synthetic:{synthetic}", "--k1", "0.9",
                           "--granularity", "chunk"])
    assert "retrieval.granularity differs: 'file' vs 'chunk'" in err
