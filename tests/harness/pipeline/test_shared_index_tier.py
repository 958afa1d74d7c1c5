"""Finding 1, the reviewer's repro: a tier-B corpus in the shared index changes tier-A rows.

``bench --mode bm25`` on the synthetic corpus (tier A) alone, then again with an
unregistered BEIR folder (tier B) in the same index.  The BEIR documents are copies of the
synthetic questions, so they outrank the synthetic chunks for those questions: the
synthetic rows change and B document ids land in the synthetic rankings.  So every row,
per-query value, calibration record and ranking of the two-corpus run is tier B, and the
warehouse publishes nothing of it.
"""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.core.formats import FormatError
from harness.evaluation.results import load_metrics
from warehouse import ingest_results, queries
from warehouse.errors import ExportRefused, IngestRefused
from warehouse.exports import export_table

SEED, MEETINGS = 5, 24


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """``(db, alone_dir, shared_dir, alone_id, shared_id, beir_doc_ids)``."""
    from ingestion import load_corpus
    from ingestion.synthetic import generate

    root = tmp_path_factory.mktemp("shared-index")
    synthetic = generate(seed=SEED, meetings=MEETINGS, out_dir=root / "synthetic")
    questions = [q for q in load_corpus(f"synthetic:{synthetic}").rank_queries()]
    beir = root / "internal-notes"  # not in the registry: licence unknown, tier B
    (beir / "qrels").mkdir(parents=True)
    docs = [{"_id": f"note{i:03d}", "title": "", "text": q.text} for i, q in enumerate(questions)]
    (beir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (beir / "queries.jsonl").write_text('{"_id": "n1", "text": "internal note zero"}\n')
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nn1\tnote000\t1\n")
    common = ["bench", "--mode", "bm25", "--no-progress", "--no-warehouse",
              "--measures", "nDCG@5", "R@10", "--corpus", f"synthetic:{synthetic}"]
    alone, shared = root / "alone", root / "shared"
    assert main([*common, "--out", str(alone)]) == 0
    assert main([*common, "--corpus", f"beir:{beir}", "--out", str(shared)]) == 0
    db = root / "w.duckdb"
    ids = [ingest_results(out, db).run_id for out in (alone, shared)]
    SPECS["alone"] = [f"synthetic:{synthetic}"]
    SPECS["shared"] = [f"synthetic:{synthetic}", f"beir:{beir}"]
    return db, alone, shared, ids[0], ids[1], {d["_id"] for d in docs}


#: the corpus specs of the two runs (filled by the fixture)
SPECS: dict[str, list[str]] = {}


def _jsonl(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def _synthetic_all(metrics):
    return next(r for r in metrics["rows"]
                if r["corpus"] == "synthetic" and r["query_class"] == "all")


def test_alone_the_synthetic_corpus_is_tier_a_throughout(runs):
    _, alone, _, _, _, _ = runs
    metrics = load_metrics(alone)
    assert (metrics["index"]["corpora"], metrics["index"]["tier"]) == (["synthetic"], "A")
    assert {r["tier"] for r in metrics["rows"]} == {"A"}
    for name in ("per_query.jsonl", "calibration.jsonl"):
        assert {r["tier"] for r in _jsonl(alone / name)} == {"A"}, name


def test_beside_a_tier_b_corpus_every_synthetic_number_is_tier_b(runs):
    _, alone, shared, _, _, beir_docs = runs
    metrics = load_metrics(shared)
    assert metrics["index"]["corpora"] == ["beir-internal-notes", "synthetic"]
    assert metrics["index"]["tier"] == "B"  # the most restrictive of A and B
    # the corpus keeps its own licence tier; the numbers measured in this index do not
    declared = {c["name"]: (c["licence"], c["tier"]) for c in metrics["corpora"]}
    assert declared == {"synthetic": ("CC0-1.0", "A"), "beir-internal-notes": ("unknown", "B")}
    assert {r["tier"] for r in metrics["rows"]} == {"B"}
    for name in ("per_query.jsonl", "calibration.jsonl"):
        rows = [r for r in _jsonl(shared / name) if r["corpus"] == "synthetic"]
        assert rows and {r["tier"] for r in rows} == {"B"}, name
    # why: the B documents are in the synthetic rankings, and the synthetic numbers moved
    ranked = {r["doc_id"] for r in _jsonl(shared / "rankings.jsonl") if r["corpus"] == "synthetic"}
    assert ranked & beir_docs
    assert _synthetic_all(metrics)["metrics"]["nDCG@5"] < \
        _synthetic_all(load_metrics(alone))["metrics"]["nDCG@5"]
    assert "tier B (every row is as restrictive" in (shared / "metrics.md").read_text()


def test_the_warehouse_publishes_nothing_of_the_shared_run(runs):
    db, _, _, alone_id, shared_id, beir_docs = runs
    public = queries.metric_table("publishable", db_path=db)
    assert set(public["run_id"]) == {alone_id} and set(public["tier"]) == {"A"}
    assert queries.metric_table("publishable", runs=[shared_id], db_path=db).empty
    assert queries.per_query_values(shared_id, "publishable", db_path=db).empty
    assert queries.rankings(shared_id, "publishable", db_path=db).empty
    assert queries.calibration(shared_id, "publishable", db_path=db).empty
    assert queries.latency([shared_id], view="publishable", db_path=db).empty
    internal = queries.rankings(shared_id, "internal", db_path=db)
    synthetic = internal[internal["corpus"] == "synthetic"]
    assert set(synthetic["tier"]) == {"B"} and set(synthetic["doc_id"]) & beir_docs
    with pytest.raises(ExportRefused) as refused:
        export_table("publishable", "csv", corpora=["synthetic"], db_path=db)
    assert ("synthetic (tier B; beir-internal-notes (tier B, licence unknown, in the run's "
            "shared index)") in str(refused.value)
    assert "synthetic" in export_table("publishable", "csv", runs=[alone_id], db_path=db)


def test_rows_that_ignore_the_index_tier_are_refused(runs, tmp_path):
    _, _, shared, _, _, _ = runs
    metrics = json.loads((shared / "metrics.json").read_text())
    at = next(i for i, r in enumerate(metrics["rows"]) if r["corpus"] == "synthetic")
    forged = json.loads(json.dumps(metrics))
    forged["rows"][at]["tier"] = "A"  # what the harness wrote before the fix
    path = tmp_path / "metrics.json"
    path.write_text(json.dumps(forged))
    with pytest.raises(FormatError, match=rf"rows\[{at}\]\.tier.*expected B.*index.tier B"):
        load_metrics(path)
    dropped = json.loads(json.dumps(metrics))
    dropped["index"]["corpora"] = ["synthetic"]  # hiding the B corpus from the index
    path.write_text(json.dumps(dropped))
    with pytest.raises(FormatError, match=r"index\.corpora.*must name every corpus"):
        load_metrics(path)
    lowered = json.loads(json.dumps(metrics))
    lowered["index"]["tier"] = "A"
    path.write_text(json.dumps(lowered))
    with pytest.raises(FormatError, match=r"index\.tier.*is not B"):
        load_metrics(path)


def test_per_query_rows_that_ignore_the_index_tier_are_not_ingested(runs, tmp_path):
    import shutil

    _, _, shared, _, _, _ = runs
    copy = tmp_path / "copy"
    shutil.copytree(shared, copy)
    lines = (copy / "per_query.jsonl").read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if json.loads(line)["corpus"] == "synthetic")
    row = json.loads(lines[at])
    row["tier"] = "A"
    lines[at] = json.dumps(row, sort_keys=True)
    (copy / "per_query.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(IngestRefused, match=rf"per_query.jsonl:{at + 1}: field 'tier'.*index"):
        ingest_results(copy, tmp_path / "w.duckdb")


@pytest.mark.parametrize("which, tier", [("alone", "A"), ("shared", "B")])
def test_a_gated_bench_run_names_the_index_tier(runs, tmp_path, capsys, which, tier):
    doc = tmp_path / "gate.json"
    step = tmp_path / "step.md"
    argv = ["bench", "--mode", "bm25", "--no-progress", "--granularity", "file",
            "--gate", "point", "--gate-measure", "R@10", "--gate-threshold", "0.0",
            "--gate-corpus", "synthetic", "--gate-out", str(doc), "--summary", str(step)]
    for spec in SPECS[which]:
        argv += ["--corpus", spec]
    assert main(argv) == 0
    gate = json.loads(doc.read_text())
    # the slice is synthetic's queries either way; its tier is the shared index's
    assert gate["corpus"] == "synthetic" and gate["tier"] == tier
    assert gate["index_corpora"] == {"alone": ["synthetic"],
                                     "shared": ["beir-internal-notes", "synthetic"]}[which]
    text = step.read_text()
    if tier == "A":
        assert "| licence tier | A |" in text and "| mean |" in text
    else:
        assert "| licence tier | B (internal only: not publishable) |" in text
        assert "withheld: tier B" in text and "| mean |" not in text
