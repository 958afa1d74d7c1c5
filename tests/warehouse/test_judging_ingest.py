"""Judging tasks and labels batches in the warehouse (issue 38 item 3): stored once, a batch
checked against its task, a tier-B task kept out of the publishable snapshot, and the team
ingester's signature rule applied to a task as to a run."""

from __future__ import annotations

import hashlib
import json

import pytest

from harness.claims.labels import Label
from tests.pages.judge_fixture import PRIVATE, PUBLIC, write_labels, write_task
from warehouse import queries
from warehouse.errors import IngestRefused
from warehouse.judging import ingest_labels, ingest_task


def test_a_task_and_its_labels_are_stored_once(tmp_path):
    db = tmp_path / "w.duckdb"
    task = write_task(tmp_path / "t", PUBLIC, "pool")
    assert ingest_task(tmp_path / "t", db).inserted
    assert not ingest_task(tmp_path / "t", db).inserted
    batch = write_labels(tmp_path / "b", task, Label("q1", "d1", "ana", "2026-12-07T09:00:00Z", 2))
    assert ingest_labels(batch, db).inserted and not ingest_labels(batch, db).inserted
    held = queries.task_judgments(task, "internal", db_path=db)
    assert list(zip(held.rater, held.doc_id, held.label)) == [("ana", "d1", 2)]
    # the publishable view names the rater by pseudonym: sha256("ana") begins 24d4b96f58da
    public = queries.task_judgments(task, "publishable", db_path=db)
    assert list(public.rater) == ["rater-" + hashlib.sha256(b"ana").hexdigest()[:12]]
    assert set(queries.judging_tasks("publishable", db_path=db).columns) >= {"task_id"}


def test_a_batch_of_an_unknown_task_or_a_stray_pair_is_refused(tmp_path):
    db = tmp_path / "w.duckdb"
    task = write_task(tmp_path / "t", PUBLIC, "pool")
    label = Label("q1", "d1", "ana", "2026-12-07T09:00:00Z", 2)
    with pytest.raises(IngestRefused, match="not in the warehouse") as caught:
        ingest_labels(write_labels(tmp_path / "b1", task, label), db)
    assert caught.value.field == "task"
    ingest_task(tmp_path / "t", db)
    stray = Label("q2", "d1", "ana", "2026-12-07T09:00:00Z", 1)
    with pytest.raises(IngestRefused, match=r"pair \(q2, d1\) is not in task") as caught:
        ingest_labels(write_labels(tmp_path / "b2", task, label, stray), db)
    assert caught.value.field == "labels[1]"
    assert queries.task_judgments(task, "internal", db_path=db).empty  # nothing half-stored


def test_a_tier_b_task_and_its_labels_never_reach_the_publishable_snapshot(tmp_path):
    from warehouse.snapshots import publish

    db = tmp_path / "w.duckdb"
    task = write_task(tmp_path / "t", PRIVATE, "ours")
    ingest_task(tmp_path / "t", db)
    ingest_labels(write_labels(tmp_path / "b", task, Label("q1", "d1", "ana",
                                                      "2026-12-07T09:00:00Z", 2)), db)
    publish(db, tmp_path / "snaps")
    public, internal = tmp_path / "snaps" / "publishable.duckdb", tmp_path / "snaps" / "internal.duckdb"
    for table in ("judging_tasks", "task_pairs", "task_texts", "label_batches", "judgments"):
        from warehouse.db import connect

        with connect(public, read_only=True) as conn:
            assert conn.query_one(f"SELECT count(*) FROM {table}")[0] == 0, table
        with connect(internal, read_only=True) as conn:
            assert conn.query_one(f"SELECT count(*) FROM {table}")[0] > 0, table


def test_the_ingester_caps_an_unsigned_task_and_quarantines_a_bad_batch(tmp_path):
    from harness.core.signing import load_trusted_keys
    from harness.core.store import open_store
    from harness.core.submissions import submit
    from tests.warehouse.signing_builders import keys
    from warehouse.ingester import Ingester

    ci, _, trusted = keys(tmp_path)
    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    signed = write_task(tmp_path / "signed", PUBLIC, "signed pool", key=ci)
    unsigned = write_task(tmp_path / "unsigned", PUBLIC, "unsigned pool", overlap=0.5)
    for folder in ("signed", "unsigned"):
        submit(tmp_path / folder, store)
    ingester = Ingester(store, tmp_path / "snaps", load_trusted_keys(trusted))
    report = ingester.cycle()
    assert len(report.applied) == 2 and [why for _, why in report.capped] == [
        "unsigned: no signature.json"]
    tiers = queries.judging_tasks("internal", db_path=tmp_path / "snaps" / "internal.duckdb")
    assert dict(zip(tiers.task_id, tiers.tier)) == {signed: "A", unsigned: "B"}
    bad = write_labels(tmp_path / "bad", signed, Label("q9", "d1", "ana", "2026-12-07T09:00:00Z", 1))
    good = write_labels(tmp_path / "good", signed, Label("q1", "d1", "ana", "2026-12-07T09:00:00Z", 1))
    bad_digest = submit(bad, store).digest
    submit(good, store)
    report = ingester.cycle()
    assert [d for d, _ in report.quarantined] == [bad_digest] and len(report.applied) == 1
    assert "labels.json: field 'labels[0]'" in report.quarantined[0][1]
    assert ingester.cycle().applied == []
    # the labels of the tier-A task reach the publishable snapshot, at the task's tier
    held = queries.task_judgments(signed, "publishable",
                                  db_path=tmp_path / "snaps" / "publishable.duckdb")
    assert list(zip(held.rater, held.label)) == [("rater-24d4b96f58da", 1)]
    assert json.loads(json.dumps(list(held.columns))) == ["query_id", "doc_id", "rater", "label",
                                                          "labelled_at"]


def test_a_batch_before_its_task_waits_for_it(tmp_path):
    """The team ingester leaves a batch whose task it lacks pending (never quarantined, no
    snapshot published for it), and applies it once the task is there."""
    from harness.core.store import open_store
    from harness.core.submissions import submit
    from warehouse.ingester import Ingester

    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    task = write_task(tmp_path / "t", PUBLIC, "pool")
    submit(write_labels(tmp_path / "b", task, Label("q1", "d1", "ana",
                                                     "2026-12-07T09:00:00Z", 2)), store)
    ingester = Ingester(store, tmp_path / "snaps", {})
    report = ingester.cycle()
    assert report.applied == [] and report.quarantined == [] and report.skipped == 1
    assert not report.published
    # --once (cron) ends although the batch is still pending
    assert ingester.run(once=True, poll=0.0, say=lambda line: None) == 0
    submit(tmp_path / "t", store)
    applied = ingester.cycle().applied + ingester.cycle().applied  # the task, then its batch
    assert len(applied) == 2 and ingester.cycle().applied == []
    held = queries.task_judgments(task, "internal",
                                  db_path=tmp_path / "snaps" / "internal.duckdb")
    assert list(zip(held.rater, held.label)) == [("ana", 2)]
