"""Migration 003: certificates, PPI results and calibration records in the warehouse.

Calibration data are built by hand (scores and the rank of the first relevant candidate
per query), certificates by the harness's own builder on them.
"""

from __future__ import annotations

import json

import pytest

from harness.core.canonical import canonical_json
from harness.certificates.data import calibration_row
from harness.claims.certificate import with_id
from harness.certificates.ppi import ppi_document, ppi_mean
from tests.warehouse.certificate_builders import (N_QUERIES, SCORES, calibrated_run, certificate)
from warehouse import connect, ingest_document, ingest_results, queries
from warehouse.errors import IngestRefused

def _all(db, sql, params=None):
    with connect(db, read_only=True) as conn:
        return conn.query_all(sql, params)


def test_calibration_records_are_stored_per_query(tmp_path):
    db = tmp_path / "w.duckdb"
    run = ingest_results(calibrated_run(tmp_path / "r"), db)
    rows = queries.calibration(run.run_id, "internal", db_path=db)
    assert len(rows) == N_QUERIES
    by_id = rows.set_index("query_id")
    # q21: 21 % 3 == 0 and 21 % 7 == 0 -> rank 1 + 1 + 1 = 3; q20: none retrieved
    assert by_id.loc["q21", ["first_relevant_rank", "top_score", "candidates"]].tolist() == \
        [3, 1.0, len(SCORES)]
    assert by_id["first_relevant_rank"].isna().sum() == len(range(0, N_QUERIES, 20))
    assert set(by_id["stage"]) == {"retrieve"}


def test_calibration_of_a_tier_b_corpus_is_internal_only(tmp_path):
    db = tmp_path / "w.duckdb"
    run = ingest_results(calibrated_run(tmp_path / "r", corpus="secret", tier="B"), db)
    assert len(queries.calibration(run.run_id, "internal", db_path=db)) == N_QUERIES
    assert queries.calibration(run.run_id, "publishable", db_path=db).empty


def test_calibration_rows_that_contradict_the_run_are_refused(tmp_path):
    db = tmp_path / "w.duckdb"
    rows = [calibration_row(corpus="pub", tier="B", query_id=f"q{i:02d}", query_class=None,
                            stage="retrieve", scores=[1.0], relevant=[True])
            for i in range(N_QUERIES)]
    out = calibrated_run(tmp_path / "r", calibration=rows)
    with pytest.raises(IngestRefused, match=r"calibration.jsonl:1: field 'tier'"):
        ingest_results(out, db)
    assert not db.exists() or _all(db, "SELECT count(*) FROM runs") == [(0,)]


def test_certificates_are_stored_with_their_figures(tmp_path):
    db = tmp_path / "w.duckdb"
    out = calibrated_run(tmp_path / "r")
    ingest_results(out, db)
    doc = certificate(out)
    report = ingest_document(doc, db)
    kept = json.loads(canonical_json(doc))  # documents are stored canonical: 10 decimals
    stored = queries.certificates("internal", db_path=db).set_index("document_id")
    row = stored.loc[report.run_id]
    assert (row.type, row.status, row.tier, row.corpus) == ("coverage", doc["status"], "A", "pub")
    assert row.certificate_id == doc["document_id"]
    assert (row.split_tune, row.split_calibrate, row.split_heldout) == (
        doc["splits"]["tune"], doc["splits"]["calibrate"], doc["splits"]["heldout"])
    assert sum((row.split_tune, row.split_calibrate, row.split_heldout)) == N_QUERIES
    # 3 of 60 queries have no relevant candidate: alpha 0.2 can be certified
    assert doc["status"] == "valid"
    assert row.threshold == kept["threshold"]
    assert row.heldout_rate == kept["heldout"]["coverage"]
    assert [row.heldout_lower, row.heldout_upper] == kept["heldout"]["coverage_interval"]
    assert json.loads(row.document) == kept
    assert row.current_run_id == doc["sources"][0]["run_id"]
    assert not ingest_document(doc, db).inserted  # the same certificate again: a no-op
    assert _all(db, "SELECT count(*) FROM certificates") == [(1,)]


def test_the_current_run_is_the_newest_run_of_the_same_arm(tmp_path):
    db = tmp_path / "w.duckdb"
    old = calibrated_run(tmp_path / "old")
    ingest_results(old, db)
    ingest_document(certificate(old), db)
    newer = calibrated_run(tmp_path / "new", retrieval={"backend": "embedded", "mode": "bm25",
                                                        "stage": "retrieve", "size": 12})
    new_id = ingest_results(newer, db).run_id
    row = queries.certificates("internal", db_path=db).iloc[0]
    assert row.current_run_id == new_id
    assert json.loads(row.current_metrics)["retrieval"]["size"] == 12
    assert row.current_source_dir.endswith("new")
    assert len(row.current_calibration_sha256) == 64


def test_publishable_certificates_need_every_source_run_stored_and_tier_a(tmp_path):
    db = tmp_path / "w.duckdb"
    public = calibrated_run(tmp_path / "a", name="public")
    secret = calibrated_run(tmp_path / "b", corpus="secret", tier="B", name="secret")
    absent = calibrated_run(tmp_path / "c", name="absent", retrieval={"mode": "other"})
    ingest_results(public, db)
    ingest_results(secret, db)
    ids = {name: ingest_document(certificate(d), db).run_id
           for name, d in (("public", public), ("secret", secret), ("absent", absent))}
    internal = set(queries.certificates("internal", db_path=db).document_id)
    publishable = set(queries.certificates("publishable", db_path=db).document_id)
    assert internal == set(ids.values())
    # the tier-B certificate, and the one whose run was never ingested, stay internal
    assert publishable == {ids["public"]}


def _ppi(licence=None, **kw):
    """A ppi document; ``licence`` is added as ``harness ppi --licence`` adds it."""
    result = ppi_mean([1, 0, 1, 1, 0, 1], [0.9, 0.2, 0.8, 0.7, 0.4, 0.9],
                      [0.8, 0.3, 0.6, 0.9, 0.7, 0.5, 0.6, 0.8])
    doc = ppi_document(result, {"judge_sha256": "0" * 64, "labels_sha256": "1" * 64,
                                "judge_file": "judge.jsonl", "labels_file": "labels.jsonl"}, **kw)
    return doc if licence is None else with_id({**doc, "licence": licence})


def test_a_tier_a_ppi_result_needs_a_publishable_licence(tmp_path):
    db = tmp_path / "w.duckdb"
    for licence, why in ((None, "declares licence None"),
                         ("CC-BY-NC-4.0", "declares licence 'CC-BY-NC-4.0'")):
        with pytest.raises(IngestRefused, match=f"field 'tier': tier A needs a publishable "
                                                f"licence, but the document {why}"):
            ingest_document(_ppi(licence=licence, corpus="pub", tier="A"), db)
    # tier B needs no licence: doubt is already closed
    assert ingest_document(_ppi(tier="B"), db).inserted


def test_ppi_results_default_to_internal(tmp_path):
    db = tmp_path / "w.duckdb"
    ingest_document(_ppi(), db)
    ingest_document(_ppi(licence="MIT", corpus="pub", tier="A"), db)
    internal = queries.ppi_results("internal", db_path=db)
    assert sorted(internal.tier) == ["A", "B"] and (internal.labelled == 6).all()
    assert (internal.unlabelled == 8).all()
    # labels alone: mean of (1, 0, 1, 1, 0, 1)
    assert internal.labels_only_estimate.tolist() == [pytest.approx(4 / 6, abs=1e-10)] * 2
    public = queries.ppi_results("publishable", db_path=db)
    assert public.tier.tolist() == ["A"] and public.corpus.tolist() == ["pub"]


def test_an_edited_certificate_is_refused(tmp_path):
    db = tmp_path / "w.duckdb"
    doc = certificate(calibrated_run(tmp_path / "r"))
    doc["alpha"] = 0.01  # the id no longer matches the content
    with pytest.raises(IngestRefused, match="field 'document_id'"):
        ingest_document(doc, db)
    assert not db.exists() or _all(db, "SELECT count(*) FROM certificates") == [(0,)]


def test_every_publishable_certificate_view_holds_tier_a_only(tmp_path):
    db = tmp_path / "w.duckdb"
    for name, corpus, tier in (("a", "pub", "A"), ("b", "secret", "B")):
        out = calibrated_run(tmp_path / name, corpus=corpus, tier=tier, name=name)
        ingest_results(out, db)
        ingest_document(certificate(out), db)
    ingest_document(_ppi(), db)
    for table in ("certificates", "ppi", "calibration"):
        public = {t for (t,) in _all(db, "SELECT DISTINCT tier FROM "
                                     + queries.relation("publishable", table))}
        internal = {t for (t,) in _all(db, "SELECT DISTINCT tier FROM "
                                       + queries.relation("internal", table))}
        assert public <= {"A"} and "B" in internal, table
