"""``python -m harness migrate`` with the packaged MiniLM and models derived from it, on the
small synthetic corpus: the rotation pair is bridged perfectly and is an equivalent (a
drop-in: it retrieves exactly what OLD retrieves, so moving gains nothing); every
estimate lies inside its interval at both tiers; same seed, same bytes; unknown models
need their dimension; the report goes into the warehouse with its licence tier."""

from __future__ import annotations

import json

import pytest

from harness.claims import MigrationClaim
from harness.studies.embedding_migration.document import REPORT_JSON, REPORT_MD


def test_the_rotation_pair_is_bridged_perfectly_and_is_an_equivalent(rotation_report):
    doc, _ = rotation_report
    t0, t1 = doc["tiers"]["T0"], doc["tiers"]["T1"]
    assert t0["arr"]["estimate"] >= 0.99 and t1["arr"]["estimate"] >= 0.99
    # a rotation preserves every inner product: NEW retrieves exactly what OLD retrieves
    assert t1["gain"]["estimate"] == 1.0
    assert t1["recall"]["oracle"] == t1["recall"]["old"]
    # ... so its top 10 is OLD's top 10 for every query and nDCG does not move: the drop-in
    # rule fires before the gain floor (which would say "no upgrade needed" of any equivalent)
    assert t1["overlap"]["estimate"] == 1.0 and t1["overlap_min"] == 1.0
    assert t1["ndcg_delta"]["estimate"] == 0.0 and t1["ndcg"]["old"] == t1["ndcg"]["new"]
    assert (t1["decision"]["decision"], t1["decision"]["rule"]) == ("equivalent_drop_in",
                                                                    "drop_in")
    assert doc["decision"]["decision"] == "equivalent_drop_in" and doc["decision"]["tier"] == "T1"
    # T0 measures the overlap but no nDCG difference: its decision is the bridge's
    assert t0["overlap"]["estimate"] == 1.0 and t0["ndcg_delta"] is None
    assert t0["decision"]["rule"] != "drop_in"
    assert doc["adapter"]["chosen"] == "procrustes"
    # same dimension: the unadapted baseline is measured (and useless: the space is rotated)
    assert t1["unadapted"] is not None and t1["unadapted"]["estimate"] < 0.5
    assert doc["models"]["new"]["derived_from"] == doc["models"]["old"]["model_id"]
    assert doc["models"]["new"]["base_weights_sha256"] == doc["models"]["old"]["weights_sha256"]
    assert doc["pair"]["situation"] == doc["models"]["new"]["situation"]
    assert "perfectly" in doc["pair"]["situation"]


def test_a_drop_in_decision_must_follow_from_its_own_numbers(rotation_report):
    doc, _ = rotation_report
    MigrationClaim.from_dict(doc, "rotation")
    low = json.loads(json.dumps(doc))
    low["tiers"]["T1"]["overlap"].update(estimate=0.9, lower=0.89, upper=0.91)
    with pytest.raises(ValueError, match=r"tiers\.T1\.overlap\.estimate.*below drop_in_overlap"):
        MigrationClaim.from_dict(low, "low.json")
    moved = json.loads(json.dumps(doc))
    moved["tiers"]["T1"]["ndcg_delta"].update(estimate=-0.004, lower=-0.0045, upper=-0.0035)
    with pytest.raises(ValueError, match=r"tiers\.T1\.ndcg_delta.*excludes 0"):
        MigrationClaim.from_dict(moved, "moved.json")
    unmeasured = json.loads(json.dumps(doc))
    unmeasured["tiers"]["T1"]["ndcg_delta"] = None
    with pytest.raises(ValueError, match=r"tiers\.T1\.ndcg_delta.*needs it measured"):
        MigrationClaim.from_dict(unmeasured, "unmeasured.json")


def test_estimates_lie_inside_their_intervals_at_both_tiers(truncation_report):
    doc, out = truncation_report
    assert doc["pair"]["dimensions"] == {"old": 384, "new": 256}
    assert doc["pair"]["unadapted_possible"] is False
    assert doc["pair"]["situation"].startswith("same-family drift with a dimension change")
    for tier in ("T0", "T1"):
        t = doc["tiers"][tier]
        for q in ("arr", "old_retention", "bridge_minus_old", "gain"):
            if t[q] is not None:
                assert t[q]["lower"] <= t[q]["estimate"] <= t[q]["upper"], (tier, q)
        assert t["unadapted"] is None and "256 dimensions and OLD 384" in t["unadapted_reason"]
    # a real interval at T1, not a degenerate point
    assert doc["tiers"]["T1"]["arr"]["lower"] < doc["tiers"]["T1"]["arr"]["upper"]
    assert doc["tiers"]["T0"]["caveat"].startswith("T0 cannot evaluate query encoding")
    markdown = (out / REPORT_MD).read_text(encoding="utf-8")
    assert "T0 cannot evaluate query encoding" in markdown
    assert f"{doc['tiers']['T1']['arr']['estimate']:.3f}" in markdown
    MigrationClaim.from_dict(doc, "truncation")
    # a report whose estimate left its interval is refused, naming the field
    broken = json.loads(json.dumps(doc))
    broken["tiers"]["T1"]["arr"]["upper"] = broken["tiers"]["T1"]["arr"]["estimate"] - 0.01
    with pytest.raises(ValueError, match=r"tiers\.T1\.arr.*outside its own interval"):
        MigrationClaim.from_dict(broken, "broken.json")


def test_same_seed_same_bytes(migrate, truncation_report, tmp_path):
    _, first = truncation_report
    assert migrate("minilm", "minilm-trunc-256", tmp_path / "again") == 0
    for name in (REPORT_JSON, REPORT_MD, "per_query.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (first / name).read_bytes(), name
    assert migrate("minilm", "minilm-trunc-256", tmp_path / "seed1", "--seed", "1",
                   "--tier", "T0") == 0
    other = json.loads((tmp_path / "seed1" / REPORT_JSON).read_text(encoding="utf-8"))
    assert other["settings"]["seed"] == 1 and sorted(other["tiers"]) == ["T0"]
    assert other["decision"]["tier"] == "T0"


def test_an_unknown_model_without_a_dimension_is_refused(migrate, tmp_path, capsys):
    model_dir = tmp_path / "some-model"
    model_dir.mkdir()
    assert migrate("minilm", str(model_dir), tmp_path / "out",
                   "--new-query-prefix", "query: ", "--new-document-prefix", "") == 2
    err = capsys.readouterr().err
    assert "--new-dim" in err and "never guessed" in err
    assert migrate(str(model_dir), "minilm", tmp_path / "out", "--old-dim", "384") == 2
    err = capsys.readouterr().err
    assert "--old-query-prefix, --old-document-prefix" in err
    assert migrate("no-such-model", "minilm", tmp_path / "out") == 2
    assert "minilm-static-256" in capsys.readouterr().err     # the profiles are listed
    assert not (tmp_path / "out").exists()


def test_the_report_goes_into_the_warehouse(rotation_report, truncation_report, tmp_path):
    from warehouse import ingest_document
    from warehouse.queries import migration_decisions as decisions
    from warehouse.errors import IngestRefused

    db = tmp_path / "wh.duckdb"
    doc, out = rotation_report
    report = ingest_document(out / REPORT_JSON, db_path=db)
    assert report.inserted and report.kind == "migration"
    assert not ingest_document(out / REPORT_JSON, db_path=db).inserted   # idempotent
    rows = decisions("internal", db_path=db)
    assert sorted(rows["eval_tier"]) == ["T0", "T1"]
    t1 = rows[rows["eval_tier"] == "T1"].iloc[0]
    assert (t1["decision"], t1["tier"], t1["corpus"], bool(t1["headline"])) == \
        ("equivalent_drop_in", "A", "synthetic", True)
    assert t1["gain"] == doc["tiers"]["T1"]["gain"]["estimate"]
    assert t1["arr_lower"] <= t1["arr"] <= t1["arr_upper"]
    t0 = rows[rows["eval_tier"] == "T0"].iloc[0]
    assert t0["gain"] != t0["gain"]          # NULL (NaN in pandas): T0 measures no gain
    # a tier-B report is internal only
    secret = json.loads((truncation_report[1] / REPORT_JSON).read_text(encoding="utf-8"))
    secret["tier"] = secret["corpora"][0]["tier"] = "B"
    assert ingest_document(secret, db_path=db).inserted
    assert len(decisions("internal", db_path=db)) == 4
    assert set(decisions("publishable", db_path=db)["tier"]) == {"A"}
    assert len(decisions("publishable", db_path=db)) == 2
    # a tier that is not the most restrictive of its corpora is refused, nothing stored
    lying = dict(secret, tier="A")
    with pytest.raises(IngestRefused, match="most restrictive"):
        ingest_document(lying, db_path=db)
    assert len(decisions("internal", db_path=db)) == 4


def test_t1_recall_agrees_with_the_bench_scored_by_trec_eval(rotation_report, synthetic_corpus,
                                                              migration_cache, tmp_path):
    """OLD's T1 recall@10 is what `harness bench --mode vector` (the product's dense leg,
    scored by trec_eval) reports as R@10 for the same model on the same corpus."""
    from harness.cli import main

    doc, _ = rotation_report
    out = tmp_path / "bench"
    assert main(["bench", "--corpus", f"synthetic:{synthetic_corpus}", "--mode", "vector",
                 "--model", "minilm", "--cache-dir", str(migration_cache), "--out", str(out),
                 "--no-warehouse"]) == 0
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    row = next(r for r in metrics["rows"] if r["query_class"] == "all")
    assert row["n"] == doc["tiers"]["T1"]["n"]
    assert doc["tiers"]["T1"]["recall"]["old"] == pytest.approx(row["metrics"]["R@10"], abs=1e-9)


def test_the_cuda_profile_is_refused_without_a_cuda_device(migrate, tmp_path, capsys):
    from harness.retrieval.embeddings.devices import cuda_devices

    if cuda_devices():
        pytest.skip("torch sees a CUDA device here: the refusal is for machines without one")
    out = tmp_path / "fp16"
    assert migrate("minilm", "minilm-cuda-fp16", out) == 2
    err = capsys.readouterr().err
    assert "minilm-cuda-fp16 runs on a CUDA device only" in err and "Traceback" not in err
    assert not out.exists()
    assert migrate("minilm", "minilm-rotated", tmp_path / "gpu", "--device", "cuda:1") == 2
    assert "--device cuda:1 for sentence-transformers/all-MiniLM-L6-v2: torch sees no CUDA " \
           "device" in capsys.readouterr().err
    assert not (tmp_path / "gpu").exists()


def test_a_drop_in_decision_is_kept_as_a_certificate_for_this_cpu_path(rotation_report,
                                                                         migration_cache):
    import hashlib

    from harness.retrieval.embeddings.certified import certified_for
    from harness.retrieval.embeddings.devices import capability

    doc, out = rotation_report
    assert doc["decision"]["decision"] == "equivalent_drop_in"
    here = capability("cpu")
    [cert] = certified_for(migration_cache / "certificates", doc["models"]["old"]["model_id"],
                           here)
    assert cert.new == "minilm-rotated" and cert.machine == f"cpu-{here['path']}"
    assert cert.sha256 == hashlib.sha256((out / REPORT_JSON).read_bytes()).hexdigest()
    assert cert.old_rate > 0 and cert.new_rate > 0
    # the claim itself carries no rate (durations live in runinfo.json and the certificate)
    assert "texts_per_second" not in (out / REPORT_JSON).read_text(encoding="utf-8")
