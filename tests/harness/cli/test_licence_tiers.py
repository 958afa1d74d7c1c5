"""Findings 2 and 11: a tier follows from a licence, and a gate says which tier it judged.

Finding 2: ``harness score --tier A`` made a corpus of unknown licence publishable (the
README example did exactly that), ``harness ppi --tier A`` too, and neither the results
validator nor the warehouse compared licence with tier.  Finding 11: the gate's summary,
which CI copies into a step summary, named no tier and printed tier-B numbers.
"""

from __future__ import annotations

import json
import shutil

import pytest

from harness.core.canonical import canonical_json
from harness.cli import main
from harness.core.formats import FormatError
from harness.claims.metrics import validate_metrics
from tests.harness.stats.builders import make_results
from warehouse import ingest_document, ingest_results
from warehouse.errors import IngestRefused

from tests.harness.cli.helpers import make_inputs


# --------------------------------------------------------------------------- finding 2


def _score(tmp_path, *flags):
    qrels, run, _ = make_inputs(tmp_path)
    out = tmp_path / "out"
    if out.exists():
        shutil.rmtree(out)
    code = main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                 "--no-warehouse", *flags])
    corpus = json.loads((out / "metrics.json").read_text())["corpora"][0] if code == 0 else None
    return code, corpus, out


@pytest.mark.parametrize("flags, tier", [
    ((), "B"),                                       # unknown: fails closed
    (("--licence", "MIT"), "A"),                     # derived from a publishable licence
    (("--licence", "CC0-1.0", "--tier", "A"), "A"),
    (("--licence", "MIT", "--tier", "B"), "B"),      # more restrictive is allowed
    (("--licence", "CC-BY-NC-4.0"), "B"),            # non-commercial: not publishable
])
def test_score_derives_the_tier_from_the_licence(tmp_path, flags, tier):
    code, corpus, _ = _score(tmp_path, *flags)
    assert code == 0 and corpus["tier"] == tier
    assert corpus["licence"] == (flags[1] if flags else "unknown")


@pytest.mark.parametrize("flags, licence", [
    (("--tier", "A"), "'unknown'"),                  # the README example before the fix
    (("--licence", "CC-BY-NC-4.0", "--tier", "A"), "'CC-BY-NC-4.0'"),
])
def test_score_refuses_tier_a_without_a_publishable_licence(tmp_path, capsys, flags, licence):
    code, _, out = _score(tmp_path, *flags)
    assert code == 2 and not out.exists()
    assert f"--tier A refused: --licence {licence} gives tier B" in capsys.readouterr().err


def test_the_readme_example_is_tier_a_by_its_licence(repo_root, tmp_path):
    readme = (repo_root / "README.md").read_text()
    line = next(x for x in readme.splitlines() if "--corpus-name toy" in x)
    assert "--licence CC0-1.0" in line  # the toy example is the project's own data
    toy = repo_root / "examples" / "toy"
    out = tmp_path / "toy"
    assert main(["score", "--qrels", str(toy / "qrels.txt"), "--run", str(toy / "run.txt"),
                 "--query-classes", str(toy / "classes.tsv"), "--corpus-name", "toy",
                 "--licence", "CC0-1.0", "--out", str(out), "--no-warehouse"]) == 0
    corpus = json.loads((out / "metrics.json").read_text())["corpora"][0]
    assert (corpus["licence"], corpus["tier"]) == ("CC0-1.0", "A")


def _claim(licence, tier):
    return {"schema_version": 2, "files": {"per_query.jsonl": "0" * 64},
            "control_name": "x", "index": None, "retrieval": {},
            "metric_engine": {"name": "e", "version": "1"}, "relevance_policy": {},
            "corpora": [{"name": "c", "version": None, "licence": licence, "tier": tier,
                         "sha256": None, "files": None, "chunks": None}],
            "rows": [{"corpus": "c", "tier": tier, "query_class": "all", "n": 1,
                      "metrics": {"MRR": 1.0}, "queries_unanswered": 0,
                      "queries_dropped_unjudgeable": 0}]}


@pytest.mark.parametrize("licence", ["unknown", "CC-BY-NC-4.0", "LicenseRef-research-only"])
def test_a_claim_of_tier_a_needs_a_publishable_licence(licence):
    with pytest.raises(FormatError, match=rf"field 'corpora\[0\]\.tier': tier A needs a "
                                          rf"publishable licence.*{licence!r}"):
        validate_metrics(_claim(licence, "A"))
    validate_metrics(_claim(licence, "B"))  # B (or C) never needs one
    validate_metrics(_claim("MIT", "B"))


def test_the_warehouse_refuses_a_tier_a_run_of_unknown_licence(tmp_path):
    out = make_results(tmp_path, "run", {"alpha": {"a1": ("lookup", {"MRR": 1.0})}},
                       {"alpha": "A"})
    metrics = json.loads((out / "metrics.json").read_text())
    metrics["corpora"][0]["licence"] = "unknown"  # a claim written by the old score command
    (out / "metrics.json").write_text(canonical_json(metrics))
    (out / "runinfo.json").unlink()
    with pytest.raises(IngestRefused, match=r"corpora\[0\]\.tier.*'unknown'"):
        ingest_results(out, tmp_path / "w.duckdb")
    assert not (tmp_path / "w.duckdb").exists()


def _judge_and_labels(tmp_path):
    judge, labels = tmp_path / "judge.jsonl", tmp_path / "labels.jsonl"
    judge.write_text("".join(json.dumps({"item_id": f"i{i}", "score": s}) + "\n"
                             for i, s in enumerate([0.9, 0.2, 0.8, 0.7, 0.4, 0.9, 0.6, 0.5])))
    labels.write_text("".join(json.dumps({"item_id": f"i{i}", "label": y}) + "\n"
                              for i, y in enumerate([1, 0, 1, 1, 0, 1])))
    return ["ppi", "--judge", str(judge), "--labels", str(labels)]


def test_ppi_tier_follows_the_licence_and_the_warehouse_checks_it(tmp_path, capsys):
    common = _judge_and_labels(tmp_path)
    out = tmp_path / "ppi.json"
    assert main([*common, "--tier", "A", "--corpus", "pub", "--out", str(out)]) == 2
    assert "--tier A refused: --licence 'unknown'" in capsys.readouterr().err
    assert main([*common, "--licence", "MIT", "--tier", "A", "--out", str(out)]) == 2
    assert "tier A needs the corpus named" in capsys.readouterr().err
    assert not out.exists()
    assert main([*common, "--licence", "MIT", "--corpus", "pub", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert (doc["tier"], doc["licence"], doc["corpus"]) == ("A", "MIT", "pub")
    db = tmp_path / "w.duckdb"
    assert ingest_document(out, db).inserted
    from warehouse import queries

    assert queries.ppi_results("publishable", db_path=db)["corpus"].tolist() == ["pub"]


# --------------------------------------------------------------------------- finding 11


def _slice(tmp_path, tier, name="run"):
    values = [0.2, 0.4, 0.6]  # mean 0.4
    corpus = {"A": "alpha", "B": "beta"}[tier]
    queries = {corpus: {f"q{i}": ("lookup", {"nDCG@10": v}) for i, v in enumerate(values)}}
    return make_results(tmp_path / name, name, queries, {corpus: tier})


def test_a_tier_b_gate_summary_withholds_its_numbers(tmp_path, capsys):
    res = _slice(tmp_path, "B")
    step = tmp_path / "step.md"
    argv = ["gate", "--results", str(res), "--measure", "nDCG@10", "--threshold", "0.3",
            "--summary", str(step)]
    assert main(argv) == 0
    text = step.read_text()
    assert "✅ PASS" in text and "| licence tier | B (internal only: not publishable) |" in text
    assert "withheld: tier B" in text
    assert "0.4000" not in text and "queries scored" not in text  # no measured number
    assert "0.4000" not in capsys.readouterr().out  # the printed summary is the same
    assert main([*argv, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["tier"] == "B" and doc["mean"] == pytest.approx((0.2 + 0.4 + 0.6) / 3)
    step.unlink()
    assert main([*argv, "--summary-internal"]) == 0
    assert "| mean | 0.4000 |" in step.read_text()


def test_a_tier_a_gate_summary_names_its_tier_and_shows_numbers(tmp_path):
    res = _slice(tmp_path, "A")
    step = tmp_path / "step.md"
    assert main(["gate", "--results", str(res), "--measure", "nDCG@10", "--threshold", "0.5",
                 "--summary", str(step)]) == 1
    text = step.read_text()
    assert "| licence tier | A |" in text and "| mean | 0.4000 |" in text
    assert "mean 0.4000 < threshold 0.5000" in text


def test_a_gate_against_a_tier_b_control(tmp_path, capsys):
    control = make_results(tmp_path / "control", "control",
                           {"alpha": {f"q{i}": ("lookup", {"nDCG@10": v})
                                      for i, v in enumerate([0.2, 0.4, 0.6])}},
                           {"alpha": "B"})
    # a tier-A arm and a tier-B control of one corpus are two different measurements
    # (harness intervals refuses the pair too)
    arm = _slice(tmp_path, "A", "arm")
    assert main(["gate", "--policy", "regression", "--results", str(arm), "--control",
                 str(control), "--measure", "nDCG@10", "--threshold", "0.3", "--json"]) == 2
    assert "corpus alpha: tier differs ('B' vs 'A')" in capsys.readouterr().err
    # against a tier-B arm it is gated, and the gate is tier B
    arm = make_results(tmp_path / "arm-b", "arm-b",
                       {"alpha": {f"q{i}": ("lookup", {"nDCG@10": v})
                                  for i, v in enumerate([0.3, 0.5, 0.7])}}, {"alpha": "B"})
    assert main(["gate", "--policy", "regression", "--results", str(arm), "--control",
                 str(control), "--measure", "nDCG@10", "--threshold", "0.3", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["tier"] == "B"


def test_a_qrels_gate_takes_its_tier_from_the_licence(tmp_path, capsys):
    qrels, run, _ = make_inputs(tmp_path)
    common = ["gate", "--qrels", str(qrels), "--run", str(run), "--measure", "MRR",
              "--threshold", "0.0", "--json"]
    assert main(common) == 0
    assert json.loads(capsys.readouterr().out)["tier"] == "B"  # unknown licence: B
    assert main([*common, "--licence", "MIT"]) == 0
    assert json.loads(capsys.readouterr().out)["tier"] == "A"
    assert main([*common, "--tier", "A"]) == 2
    assert "--tier A refused" in capsys.readouterr().err
    res = _slice(tmp_path, "A")
    assert main(["gate", "--results", str(res), "--measure", "nDCG@10", "--threshold", "0.1",
                 "--licence", "MIT"]) == 2
    assert "--licence and --tier go with --qrels" in capsys.readouterr().err


# --------------------------------------------------------------------------- look-alike names

#: (--corpus-name, exit code, tier): the issue's nine spellings of registered tier-B names
LOOKALIKES = [
    ("beir-scifact", 0, "B"),
    ("BEIR-SciFact", 0, "B"),
    (" beir-scifact", 0, "B"),
    ("beir\u2010scifact", 0, "B"),  # U+2010 HYPHEN
    ("beir-scifact\u200b", 2, None),  # U+200B ZERO WIDTH SPACE
    ("\uff42eir-scifact", 0, "B"),  # fullwidth b
    ("beir-sc\u0456fact", 2, None),  # Cyrillic i
    ("beir-scifact\u00ad", 2, None),  # U+00AD SOFT HYPHEN
    ("MeetingBank", 0, "B"),  # registered as meetingbank
]


@pytest.mark.parametrize("name, code, tier", LOOKALIKES)
def test_score_keeps_a_registered_name_tier_b_however_it_is_spelt(tmp_path, capsys, name, code, tier):
    got, corpus, out = _score(tmp_path, "--corpus-name", name, "--licence", "CC0-1.0")
    assert got == code
    if code == 0:
        assert corpus["tier"] == tier and corpus["name"] == name
        assert "registered corpus of tier B" in corpus["evidence"]
        assert {r["tier"] for r in json.loads((out / "metrics.json").read_text())["rows"]} == {"B"}
    else:
        assert not out.exists()
        err = capsys.readouterr().err
        assert err.startswith("error: --corpus-name ") and "Traceback" not in err
        assert "U+" in err


@pytest.mark.parametrize("name, code, tier", [LOOKALIKES[1], LOOKALIKES[6]])
def test_gate_compares_corpus_names_as_score_does(tmp_path, capsys, name, code, tier):
    qrels, run, _ = make_inputs(tmp_path)
    got = main(["gate", "--qrels", str(qrels), "--run", str(run), "--measure", "MRR",
                "--threshold", "0", "--corpus-name", name, "--licence", "CC0-1.0", "--json",
                "--summary", str(tmp_path / "summary.md")])
    out = capsys.readouterr()
    assert got == code
    if code == 0:
        assert json.loads(out.out)["tier"] == tier
    else:
        assert out.err.startswith("error: --corpus-name ")


def test_a_corpus_name_from_the_qrels_stem_is_checked_too(tmp_path, capsys):
    qrels, run, _ = make_inputs(tmp_path)
    renamed = qrels.with_name("beir-scifact\u200b.txt")
    qrels.rename(renamed)
    assert main(["score", "--qrels", str(renamed), "--run", str(run), "--out",
                 str(tmp_path / "out"), "--no-warehouse", "--licence", "CC0-1.0"]) == 2
    err = capsys.readouterr().err
    assert "the stem of --qrels" in err and "U+200B" in err
