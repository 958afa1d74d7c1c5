"""The one handler table: every kind the warehouse stores is a claim class of
``harness.claims``, and a new kind is one class (plus its table); nothing else is edited."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, ClassVar

import pytest

import harness.claims as claims
from harness.claims import base as b
from tests.warehouse.builders import simple_run
from warehouse import connect, ingest_document, ingest_results, tables
from warehouse.errors import IngestRefused

NOTE_TABLE = ("CREATE TABLE IF NOT EXISTS test_notes "
              "(document_id VARCHAR, note VARCHAR, score DOUBLE, run_id VARCHAR)")


@dataclasses.dataclass(frozen=True)
class NoteClaim(b.Claim):
    """Kind ``test_note``: a string ``note`` and a number ``score`` in [0, 1]."""

    KIND: ClassVar[str] = "test_note"
    TABLES: ClassVar[dict] = {"test_notes": (("document_id", "string"), ("note", "string"),
                                             ("score", "double"), ("run_id", "string"))}

    note: str
    score: float
    kind: str = "test_note"
    schema_version: int = 1
    tier: Any = b.ABSENT
    run_id: Any = b.ABSENT

    @classmethod
    def validate(cls, doc, source) -> None:
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        b.text(doc.get("note"), source, "note")
        b.number(doc.get("score"), source, "score", lo=0, hi=1)
        if "tier" in doc:
            b.tier(doc["tier"], source)

    def referenced_runs(self):
        return () if self.run_id is b.ABSENT else (self.run_id,)

    def table_rows(self, document_id, stamp, run_id=None):
        return {"test_notes": [{"document_id": document_id, "note": self.note,
                                "score": self.score,
                                "run_id": None if self.run_id is b.ABSENT else self.run_id}]}


class FailingNote(NoteClaim):
    """Its rows cannot be built: the failure comes after the ``documents`` row went in."""

    def table_rows(self, document_id, stamp, run_id=None):
        raise ValueError("field 'score': refused after the first insert")


def note(**fields) -> dict:
    return {"kind": "test_note", "schema_version": 1, "note": "hello", "score": 0.5, **fields}


@pytest.fixture
def notes_db(db, tmp_path):
    ingest_results(simple_run(tmp_path / "seed"), db)  # creates the warehouse
    with connect(db, read_only=False) as conn:
        conn.execute(NOTE_TABLE)
    return db


def _count(db, sql):
    with connect(db, read_only=True) as conn:
        return conn.query_one(sql)[0]


def test_every_stored_kind_is_a_claim_class_with_its_columns():
    assert set(tables.DOCUMENT_KINDS) == {"agreement", "answers", "certificate", "comparisons",
                                          "intervals", "migration", "ppi"}
    assert set(tables.RESULTS_FILES) == {"answers.json", "calibration.jsonl",
                                         "comparisons.json", "intervals.json"}
    for kind in (*tables.DOCUMENT_KINDS.values(), *tables.RESULTS_FILES.values()):
        assert issubclass(kind, claims.Claim) and kind.TABLES
        for columns in kind.TABLES.values():
            assert len(tables.arrow_schema(columns)) == len(columns)


def test_a_new_kind_is_one_class_round_trip_and_idempotence(notes_db, tmp_path):
    with tables.registered(NoteClaim):
        report = ingest_document(note(), notes_db)
        assert report.inserted and report.kind == "test_note"
        path = tmp_path / "note.json"
        path.write_text(json.dumps(note()))
        again = ingest_document(path, notes_db)
        assert not again.inserted and "already" in again.message
        assert again.run_id == report.run_id
    assert "test_note" not in tables.DOCUMENT_KINDS  # unregistered after the block
    assert _count(notes_db, "SELECT count(*) FROM test_notes") == 1
    with connect(notes_db, read_only=True) as conn:
        kind, tier, content = conn.query_one(
            "SELECT kind, tier, content FROM documents WHERE kind = 'test_note'")
    assert (kind, tier) == ("test_note", "B")  # no tier and no run: doubt fails closed
    assert json.loads(content) == note()


def test_a_document_takes_the_most_restrictive_of_its_own_tier_and_its_runs(notes_db, tmp_path):
    run = ingest_results(simple_run(tmp_path / "r", offset=0.1, control_name="r"), notes_db)
    secret = ingest_results(simple_run(tmp_path / "s", tier="B", corpus="secret",
                                       control_name="s"), notes_db)
    with tables.registered(NoteClaim):
        ingest_document(note(note="x", run_id=run.run_id), notes_db)
        ingest_document(note(note="y", tier="B", run_id=run.run_id), notes_db)
        with pytest.raises(IngestRefused, match="field 'tier': tier 'A' is less restrictive"):
            ingest_document(note(note="z", tier="A", run_id=secret.run_id), notes_db)
        with pytest.raises(IngestRefused, match="field 'tier'"):
            ingest_document(note(note="q", tier="Q"), notes_db)
    with connect(notes_db, read_only=True) as conn:
        tiers = conn.query_all("SELECT content->>'$.note', tier FROM documents "
                               "WHERE kind = 'test_note' ORDER BY 1")
    assert tiers == [("x", "A"), ("y", "B")]


def test_invalid_or_unknown_documents_are_refused_with_nothing_written(notes_db, tmp_path):
    with tables.registered(NoteClaim):
        with pytest.raises(IngestRefused, match="field 'score'"):
            ingest_document(note(score="high"), notes_db)
        with pytest.raises(IngestRefused, match="field 'extra': not a field of a test_note"):
            ingest_document(note(extra=1), notes_db)
        with pytest.raises(IngestRefused, match=r"unknown document kind 'nope'.*'test_note'"):
            ingest_document({"kind": "nope"}, notes_db)
        with pytest.raises(IngestRefused, match="field 'kind'"):
            ingest_document({"note": "x"}, notes_db)
        bad = tmp_path / "bad.json"
        bad.write_text('{"kind": "test_note", "note": "x", "score": NaN}')
        with pytest.raises(IngestRefused, match="bad.json"):
            ingest_document(bad, notes_db)
    assert _count(notes_db, "SELECT count(*) FROM documents") == 0


def test_a_kind_failing_inside_the_transaction_rolls_everything_back(notes_db):
    with tables.registered(FailingNote):
        with pytest.raises(ValueError, match="refused after the first insert"):
            ingest_document(note(), notes_db)
    with connect(notes_db, read_only=True) as conn:
        assert conn.query_one("SELECT count(*) FROM documents")[0] == 0
        assert conn.query_one("SELECT count(*) FROM test_notes")[0] == 0


@dataclasses.dataclass(frozen=True)
class StatsFile(NoteClaim):
    """A results-directory file ``test_stats.json`` holding a note about its run."""

    KIND: ClassVar[str] = "test_note"
    RESULTS_FILE: ClassVar[str] = "test_stats.json"


def _with_stats(tmp_path, name, content, **kwargs):
    out = simple_run(tmp_path / name, **kwargs)
    (out / "test_stats.json").write_text(json.dumps(content))
    return out


def test_a_results_file_kind_is_stored_in_the_runs_transaction(notes_db, tmp_path):
    out = _with_stats(tmp_path, "r", note(note="beside"), offset=0.2, control_name="r")
    with tables.registered(StatsFile):
        report = ingest_results(out, notes_db)
        assert "test_stats.json" in report.message
        bad = _with_stats(tmp_path, "bad", note(score=7), control_name="bad")
        with pytest.raises(IngestRefused, match="test_stats.json.*field 'score'"):
            ingest_results(bad, notes_db)
    with connect(notes_db, read_only=True) as conn:
        assert conn.query_all("SELECT note FROM test_notes") == [("beside",)]
        assert conn.query_one("SELECT stored_by FROM run_files WHERE name = 'test_stats.json'"
                              ) == ("claim kind test_note",)
        assert conn.query_one("SELECT count(*) FROM runs WHERE control_name = 'bad'")[0] == 0


def test_a_file_whose_kind_arrives_later_is_added_on_reingest(notes_db, tmp_path):
    out = _with_stats(tmp_path, "r", note(note="later"), offset=0.3, control_name="r")
    first = ingest_results(out, notes_db)
    assert "kept only as checksums" in first.message and "test_stats.json" in first.message
    with tables.registered(StatsFile):
        again = ingest_results(out, notes_db)
        assert not again.inserted and "test_stats.json" in again.message
        # it says what was stored, not "nothing to do"
        assert "nothing to do" not in again.message
        assert again.message.endswith(
            "stored what its directory gained since: test_stats.json (test_note, 1 row)")
        assert dict(again.rows) == {"test_stats.json": 1}
        third = ingest_results(out, notes_db)
        assert "gained" not in third.message and "nothing to do" in third.message
    assert _count(notes_db, "SELECT count(*) FROM test_notes") == 1


def test_malformed_kinds_are_rejected():
    @dataclasses.dataclass(frozen=True)
    class NoTables(NoteClaim):
        TABLES: ClassVar[dict] = {}

    @dataclasses.dataclass(frozen=True)
    class BadColumn(NoteClaim):
        TABLES: ClassVar[dict] = {"t": (("x", "decimal"),)}

    @dataclasses.dataclass(frozen=True)
    class CoreFile(NoteClaim):
        RESULTS_FILE: ClassVar[str] = "metrics.json"

    for kind, words in ((NoTables, "declares no tables"), (BadColumn, "unknown type"),
                        (CoreFile, "already has a handler")):
        with pytest.raises(ValueError, match=words):
            with tables.registered(kind):
                pass
    with pytest.raises(ValueError, match="already has a handler"):
        with tables.registered(claims.IntervalsClaim):
            pass
