"""Finding 12: a certificate's live status is computed by the warehouse, per view.

The Certificates page used to judge a certificate against the newest run of the same arm of
*any* tier and replay the monitor from that run's calibration.jsonl on disk, so in the
publishable view the "why" could name a tier-B corpus.  Now
``dashboard.certificate_status.certificate_statuses`` picks the newest run visible in the view
and replays the monitor on the calibration scores the warehouse stored (migration 006).
"""

from __future__ import annotations

import shutil

import pytest

from harness.certificates.data import calibration_row, calibration_text, read_calibration
from harness.certificates.status import bad_events, status
from harness.certificates.fingerprint import fingerprint_from_metrics
from harness.evaluation.results import load_metrics
from tests.warehouse.builders import build_results
from tests.warehouse.certificate_builders import (N_QUERIES, SCORES, calibrated_run,
                                                  certificate, first_relevant)
from warehouse import connect, ingest_document, ingest_results, queries
from dashboard.certificate_status import NO_SCORES, certificate_statuses

RETRIEVAL = {"backend": "embedded", "mode": "bm25", "stage": "retrieve"}


def run_with_a_secret_corpus(out):
    """The same arm again, now over pub (A) and secret (B): its pub queries as before."""
    corpora = {"pub": ("A", "MIT"), "secret": ("B", "CC-BY-NC-4.0")}
    values, rows = {}, []
    for corpus, n in (("pub", N_QUERIES), ("secret", 10)):
        tier = corpora[corpus][0]
        for i in range(n):
            rank = first_relevant(i)
            values[(corpus, f"q{i:02d}")] = {"MRR": 0.0 if rank is None else 1 / rank}
            rows.append(calibration_row(
                corpus=corpus, tier=tier, query_id=f"q{i:02d}", query_class=None,
                stage="retrieve", scores=SCORES,
                relevant=[rank == k + 1 for k in range(len(SCORES))]))
    return build_results(out, values, corpora=corpora, control_name="arm", retrieval=RETRIEVAL,
                         extra_files={"calibration.jsonl": calibration_text(rows)})


@pytest.fixture
def arm(tmp_path):
    """A certified pub-only run of arm ``arm``, then a newer run of that arm with a tier-B
    corpus beside pub."""
    db = tmp_path / "w.duckdb"
    first = calibrated_run(tmp_path / "first", name="arm", retrieval=RETRIEVAL)
    first_id = ingest_results(first, db).run_id
    doc = certificate(first)
    ingest_document(doc, db)
    second_id = ingest_results(run_with_a_secret_corpus(tmp_path / "second"), db).run_id
    return db, doc, first, first_id, second_id


def test_the_publishable_status_is_judged_against_a_publishable_run_only(arm):
    db, doc, _, first_id, second_id = arm
    internal = certificate_statuses(*queries.certificate_monitoring("internal", db_path=db)).iloc[0]
    assert internal.current_run_id == second_id
    assert internal.state == "expired" and "secret" in internal.why  # a corpus was added
    assert [c["kind"] for c in internal.changes] == ["corpus_added"]
    public = certificate_statuses(*queries.certificate_monitoring("publishable", db_path=db)).iloc[0]
    assert public.current_run_id == first_id  # the newest run the publishable view holds
    assert public.state == "valid" and "secret" not in public.why
    assert "secret" not in public.monitor
    assert public.monitor == f"monitor replayed on {N_QUERIES} queries of the current run"
    # the certificates query itself picks the current run within the view
    assert queries.certificates("publishable", db_path=db).iloc[0].current_run_id == first_id


def test_the_monitor_is_replayed_from_the_warehouse_not_from_disk(arm):
    db, doc, first, first_id, _ = arm
    # an independent replay: the harness's own functions on the file the run wrote
    rows = read_calibration(first / "calibration.jsonl")
    expected = status(doc, fingerprint_from_metrics(load_metrics(first)),
                      outcomes=bad_events(doc, rows))
    shutil.rmtree(first)  # the results directory is gone; the warehouse still knows
    public = certificate_statuses(*queries.certificate_monitoring("publishable", db_path=db)).iloc[0]
    assert (public.state, public.why) == (expected.state, expected.reason)
    assert public.monitor == f"monitor replayed on {len(rows)} queries of the current run"


def test_calibration_stored_before_migration_006_is_not_replayed(arm):
    db, _, _, first_id, _ = arm
    with connect(db, read_only=False) as conn:  # what a run ingested before 006 looks like
        conn.execute("UPDATE calibration SET scores = NULL, relevant = NULL")
    public = certificate_statuses(*queries.certificate_monitoring("publishable", db_path=db)).iloc[0]
    assert public.monitor == NO_SCORES
    assert public.state == "valid" and "monitor" not in public.why


def test_stored_scores_are_the_files_scores(arm):
    db, _, first, first_id, _ = arm
    rows = {r.query_id: r for r in read_calibration(first / "calibration.jsonl")}
    with connect(db, read_only=True) as conn:
        stored = conn.query_all("SELECT query_id, scores, relevant FROM calibration "
                                "WHERE run_id = ? ORDER BY query_id", [first_id])
    assert len(stored) == N_QUERIES
    for query_id, scores, relevant in stored:
        assert tuple(scores) == rows[query_id].scores
        assert tuple(relevant) == rows[query_id].relevant
