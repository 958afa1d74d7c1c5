"""The API and the commands are one computation: ``evaluate(...).write(d)`` is
``harness score --out d`` byte for byte, ``compare(...)`` is ``harness intervals --control``,
and an exported run scored again gives the claim's rows."""

from __future__ import annotations

import json
import shutil

import pytest

import harness
from harness.cli import main
from harness.evaluation.inputs import qrels_jsonl_text, read_qrels_input, read_run_input, run_jsonl_text

from tests.harness.api.helpers import CLAIM_FILES, TOY, TOY_ARGS, claim_bytes, make_family
from tests.harness.cli.helpers import make_inputs


def score_cli(out, qrels, run, *extra) -> None:
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                 "--no-warehouse", *map(str, extra)]) == 0


@pytest.mark.parametrize("flags", [(), ("--binary-relevance",), ("--preserve-order",)])
def test_evaluate_write_is_harness_score_byte_for_byte(tmp_path, capsys, flags):
    qrels, run, classes = make_inputs(tmp_path)  # ties, an unanswered and an unjudgeable query
    score_cli(tmp_path / "cli" / "arm", qrels, run, "--query-classes", classes,
              "--corpus-name", "toy", "--licence", "CC-BY-4.0", *flags)
    ev = harness.evaluate(run, qrels, query_classes=classes, corpus="toy", licence="CC-BY-4.0",
                          binary_relevance="--binary-relevance" in flags,
                          preserve_order="--preserve-order" in flags)
    assert ev.write(tmp_path / "api" / "arm") == tmp_path / "api" / "arm"
    assert claim_bytes(tmp_path / "api" / "arm") == claim_bytes(tmp_path / "cli" / "arm")
    # and what the object shows is what the file holds
    doc = json.loads((tmp_path / "cli" / "arm" / "metrics.json").read_text())
    assert ev.named("arm").rows == doc["rows"]
    assert ev.named("arm").metrics == doc
    cli_out = capsys.readouterr().out
    assert ev.to_markdown() in cli_out


def test_defaults_match_the_command_line_defaults(tmp_path):
    """No flags on either side: the qrels stem names the corpus, licence unknown, tier B."""
    score_cli(tmp_path / "cli" / "toy", TOY / "qrels.txt", TOY / "run.txt")
    ev = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt")
    ev.write(tmp_path / "api" / "toy")
    assert claim_bytes(tmp_path / "api" / "toy") == claim_bytes(tmp_path / "cli" / "toy")
    assert ev.tier == "B" and ev.corpora[0]["name"] == "qrels"
    assert ev.corpora[0]["licence"] == "unknown"


def test_a_named_evaluation_keeps_its_name_like_control_name(tmp_path):
    score_cli(tmp_path / "cli" / "dir", TOY / "qrels.txt", TOY / "run.txt", "--control-name", "baseline")
    harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", name="baseline").write(tmp_path / "api" / "dir")
    assert claim_bytes(tmp_path / "api" / "dir") == claim_bytes(tmp_path / "cli" / "dir")


def test_an_in_memory_input_claims_the_checksum_of_its_jsonl_form(tmp_path):
    """A dict run is identified by the sha256 of its JSONL form: harness score on that file
    writes the same claim, the retrieval source aside (a file, not a run in memory)."""
    run = read_run_input(TOY / "run.txt").run
    qrels = read_qrels_input(TOY / "qrels.txt").judgements
    as_dicts = {q: {d.doc_id: d.score for d in docs} for q, docs in run.items()}
    (tmp_path / "run.jsonl").write_text(run_jsonl_text(run))
    (tmp_path / "qrels.jsonl").write_text(qrels_jsonl_text(qrels))
    score_cli(tmp_path / "cli" / "toy", tmp_path / "qrels.jsonl", tmp_path / "run.jsonl",
              "--query-classes", TOY / "classes.tsv", "--corpus-name", "toy", "--licence", "CC0-1.0")
    harness.evaluate(as_dicts, qrels, **TOY_ARGS).write(tmp_path / "api" / "toy")
    cli, api = claim_bytes(tmp_path / "cli" / "toy"), claim_bytes(tmp_path / "api" / "toy")
    for name in CLAIM_FILES[1:]:
        assert api[name] == cli[name], name
    cli_doc, api_doc = json.loads(cli["metrics.json"]), json.loads(api["metrics.json"])
    assert (cli_doc["retrieval"]["source"], api_doc["retrieval"]["source"]) == ("run file", "in-memory run")
    api_doc["retrieval"]["source"] = "run file"
    assert api_doc == cli_doc


def test_compare_equals_harness_intervals_with_a_control(tmp_path):
    qrels, runs = make_family(tmp_path / "in")
    for name, run in runs.items():
        score_cli(tmp_path / "cli" / name, qrels, run, "--corpus-name", "syn", "--licence", "CC0-1.0")
    cli = tmp_path / "cli"
    assert main(["intervals", str(cli / "dense"), str(cli / "hybrid"), "--control", str(cli / "bm25"),
                 "--resamples", "2000", "--seed", "7"]) == 0
    assert main(["intervals", str(cli / "bm25"), "--resamples", "2000", "--seed", "7"]) == 0

    result = harness.compare({n: runs[n] for n in ("bm25", "dense", "hybrid")}, qrels,
                             corpus="syn", licence="CC0-1.0", resamples=2000, seed=7)
    assert result.control == "bm25" and result.arms == ["dense", "hybrid"]
    # the numbers in memory are the numbers in the files
    for name in runs:
        assert result.intervals[name] == json.loads((cli / name / "intervals.json").read_text())
    stored = json.loads((cli / "dense" / "comparisons.json").read_text())
    assert result.comparisons == stored
    frame = result.to_dataframe()
    for row in stored["rows"]:
        hit = frame[(frame.system == row["arm"]) & (frame.measure == row["measure"])
                    & (frame.query_class == row["query_class"])].iloc[0]
        assert (hit.p, hit.p_holm, hit.p_floor, hit.p_holm_floor, hit.delta_lower, hit.delta_upper) == \
            (row["p"], row["p_holm"], row["p_floor"], row["p_holm_floor"], row["delta_lower"],
             row["delta_upper"])
    # and the files it writes are the commands' files, byte for byte
    result.write(tmp_path / "api")
    for name in runs:
        files = CLAIM_FILES + ("intervals.json",) + (("comparisons.json",) if name != "bm25" else ())
        assert claim_bytes(tmp_path / "api" / name, files) == claim_bytes(cli / name, files), name
    assert not (tmp_path / "api" / "bm25" / "comparisons.json").exists()


def test_compare_with_the_same_seed_gives_the_same_bytes_and_another_seed_other_intervals(tmp_path):
    qrels, runs = make_family(tmp_path / "in", queries=12)
    one = harness.compare(runs, qrels, resamples=500, seed=3)
    two = harness.compare(runs, qrels, resamples=500, seed=3)
    other = harness.compare(runs, qrels, resamples=500, seed=4)
    one.write(tmp_path / "one")
    two.write(tmp_path / "two")
    for name in runs:
        assert claim_bytes(tmp_path / "one" / name, ("intervals.json",)) == \
            claim_bytes(tmp_path / "two" / name, ("intervals.json",))
    assert one.intervals["dense"]["rows"] != other.intervals["dense"]["rows"]
    assert one.intervals["dense"]["seed"] == 3 and other.intervals["dense"]["seed"] == 4


def test_control_is_chosen_by_name_and_checked(tmp_path):
    qrels, runs = make_family(tmp_path / "in", queries=8)
    result = harness.compare(runs, qrels, control="hybrid", resamples=200)
    assert result.control == "hybrid" and result.arms == ["bm25", "dense"]
    assert result.comparisons["control"]["name"] == "hybrid"
    assert sorted(a["name"] for a in result.comparisons["arms"]) == ["bm25", "dense"]
    with pytest.raises(ValueError, match="control 'nope' is not one of the runs"):
        harness.compare(runs, qrels, control="nope")
    with pytest.raises(ValueError, match="plain directory name"):
        harness.compare({"a/b": runs["bm25"]}, qrels)


def _rows_without_tier(doc, corpus, measures):
    return [(r["query_class"], r["n"], r["queries_unanswered"], r["queries_dropped_unjudgeable"],
             {m: r["metrics"][m] for m in measures}) for r in doc["rows"] if r["corpus"] == corpus]


@pytest.mark.parametrize("fmt", ["trec", "jsonl"])
def test_export_run_scored_again_gives_the_same_rows(tmp_path, fmt):
    qrels, run, classes = make_inputs(tmp_path)
    score_cli(tmp_path / "arm", qrels, run, "--query-classes", classes, "--corpus-name", "toy",
              "--licence", "CC0-1.0")
    assert main(["export-run", str(tmp_path / "arm"), "--format", fmt,
                 "--out", str(tmp_path / f"run.{fmt}")]) == 0
    assert main(["export-run", str(tmp_path / "arm"), "--qrels", "--format", fmt,
                 "--out", str(tmp_path / f"qrels.{fmt}")]) == 0
    score_cli(tmp_path / "again", tmp_path / f"qrels.{fmt}", tmp_path / f"run.{fmt}",
              "--query-classes", classes, "--corpus-name", "toy", "--licence", "CC0-1.0")
    a = json.loads((tmp_path / "arm" / "metrics.json").read_text())
    b = json.loads((tmp_path / "again" / "metrics.json").read_text())
    assert a["rows"] == b["rows"]
    assert a["judgements"] == b["judgements"]
    for name in ("per_query.jsonl", "rankings.jsonl", "qrels.jsonl"):
        assert (tmp_path / "arm" / name).read_bytes() == (tmp_path / "again" / name).read_bytes()


def test_a_bench_run_exports_its_rankings_and_judgements_per_corpus(tmp_path):
    """A bench results directory now holds its qrels: each corpus's exported run and qrels,
    scored again with that corpus's classes, give the bench's rows for that corpus."""
    from tests.harness.retrieval.tiny import write_beir, write_qmsum

    qmsum = write_qmsum(tmp_path / "qmsum")
    beir = write_beir(tmp_path / "beir")
    bench = tmp_path / "bm25"
    assert main(["bench", "--corpus", f"qmsum:{qmsum}", "--corpus", f"beir:{beir}", "--mode", "bm25",
                 "--out", str(bench), "--no-warehouse", "--no-progress"]) == 0
    doc = json.loads((bench / "metrics.json").read_text())
    assert "qrels.jsonl" in doc["files"]
    measures = list(doc["metric_engine"]["measures"])
    per_query = [json.loads(x) for x in (bench / "per_query.jsonl").read_text().splitlines()]
    for corpus in sorted({c["name"] for c in doc["corpora"]}):
        out = tmp_path / "export" / corpus
        out.mkdir(parents=True)
        assert main(["export-run", str(bench), "--corpus", corpus, "--out", str(out / "run.txt")]) == 0
        assert main(["export-run", str(bench), "--corpus", corpus, "--qrels", "--out",
                     str(out / "qrels.txt")]) == 0
        classes = sorted({(r["query_id"], r["query_class"]) for r in per_query
                          if r["corpus"] == corpus and r["query_class"]})
        extra = []
        if classes:
            (out / "classes.tsv").write_text("".join(f"{q}\t{c}\n" for q, c in classes))
            extra = ["--query-classes", out / "classes.tsv"]
        score_cli(out / "again", out / "qrels.txt", out / "run.txt", "--corpus-name", corpus,
                  "--measures", *measures, *extra)
        again = json.loads((out / "again" / "metrics.json").read_text())
        assert _rows_without_tier(again, corpus, measures) == _rows_without_tier(doc, corpus, measures)
        side = json.loads((out / "qrels.txt.provenance.json").read_text())
        assert side["relevance_policy"] == doc["relevance_policy"]
        assert side["tier"] == "B" and side["run"]["control_name"] == doc["control_name"]


def test_load_reads_back_what_was_written(tmp_path):
    ev = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", **TOY_ARGS)
    ev.write(tmp_path / "toy")
    back = harness.load(tmp_path / "toy")
    assert back.name == "toy"
    assert back.means == ev.means and back.per_query == ev.per_query
    assert back.judgements == ev.judgements and back.measures == ev.measures
    back.write(tmp_path / "copy" / "toy")
    assert claim_bytes(tmp_path / "copy" / "toy") == claim_bytes(tmp_path / "toy")


def test_load_refuses_a_directory_whose_pinned_file_was_changed(tmp_path):
    harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", **TOY_ARGS).write(tmp_path / "toy")
    shutil.copy(tmp_path / "toy" / "qrels.jsonl", tmp_path / "keep")
    path = tmp_path / "toy" / "qrels.jsonl"
    path.write_text(path.read_text().replace('"relevance":2', '"relevance":1', 1))
    with pytest.raises(ValueError, match="qrels.jsonl has sha256 .* but the claim pins"):
        harness.load(tmp_path / "toy")
