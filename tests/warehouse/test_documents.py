"""The handler mechanism: document kinds and results-directory extras (test-only handlers)."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

import pytest

from tests.warehouse.builders import simple_run
from warehouse import connect, documents, ingest_document, ingest_results
from warehouse.errors import IngestRefused

NOTE_TABLE = "CREATE TABLE IF NOT EXISTS test_notes (document_id VARCHAR, note VARCHAR, score DOUBLE)"


def _note_handler(fail_inside: bool = False):
    """Kind ``test_note``: needs a string ``note`` and a number ``score``."""

    def validate(doc, source):
        if not isinstance(doc.get("note"), str):
            raise ValueError(f"{source}: field 'note': must be a string")
        if not isinstance(doc.get("score"), (int, float)):
            raise ValueError(f"{source}: field 'score': must be a number")

    def ingest(conn, doc):
        conn.execute(NOTE_TABLE)
        conn.execute("INSERT INTO test_notes VALUES (?, ?, ?)",
                     [doc.get("id", "?"), doc["note"], doc["score"]])
        if fail_inside:
            raise ValueError("field 'score': refused after the first insert")

    return SimpleNamespace(__name__="test_note_handler", KIND="test_note",
                           validate=validate, ingest=ingest)


def _count(db, sql):
    with connect(db, read_only=True) as conn:
        return conn.query_one(sql)[0]


def test_document_kind_round_trip_and_idempotence(db, tmp_path):
    handler = _note_handler()
    with documents.registered(handler):
        doc = {"kind": "test_note", "id": "n1", "note": "hello", "score": 0.5}
        report = ingest_document(doc, db)
        assert report.inserted and report.kind == "test_note"
        path = tmp_path / "note.json"
        path.write_text(json.dumps(doc))
        again = ingest_document(path, db)
        assert not again.inserted and "already" in again.message
        assert again.run_id == report.run_id
    assert _count(db, "SELECT count(*) FROM test_notes") == 1
    with connect(db, read_only=True) as conn:
        kind, tier, content = conn.query_one("SELECT kind, tier, content FROM documents")
    assert (kind, tier) == ("test_note", "B")  # no tier and no run: doubt fails closed
    assert json.loads(content) == doc
    assert "test_note" not in documents.kinds()  # unregistered after the block


def test_document_takes_its_runs_tier(db, tmp_path):
    run = ingest_results(simple_run(tmp_path / "r"), db)
    with documents.registered(_note_handler()):
        ingest_document({"kind": "test_note", "note": "x", "score": 1, "run_id": run.run_id}, db)
        ingest_document({"kind": "test_note", "note": "y", "score": 1, "tier": "B",
                         "run_id": run.run_id}, db)
        with pytest.raises(IngestRefused, match="field 'tier'"):
            ingest_document({"kind": "test_note", "note": "z", "score": 1, "tier": "Q"}, db)
    with connect(db, read_only=True) as conn:
        tiers = conn.query_all("SELECT content->>'$.note', tier FROM documents ORDER BY 1")
    assert tiers == [("x", "A"), ("y", "B")]


def test_invalid_or_unknown_documents_are_refused_with_nothing_written(db, tmp_path):
    ingest_results(simple_run(tmp_path / "r"), db)
    with documents.registered(_note_handler()):
        with pytest.raises(IngestRefused, match="field 'score'"):
            ingest_document({"kind": "test_note", "note": "x", "score": "high"}, db)
        with pytest.raises(IngestRefused, match=r"unknown document kind 'nope'.*'test_note'"):
            ingest_document({"kind": "nope"}, db)
        with pytest.raises(IngestRefused, match="field 'kind'"):
            ingest_document({"note": "x"}, db)
        bad = tmp_path / "bad.json"
        bad.write_text('{"kind": "test_note", "note": "x", "score": NaN}')
        with pytest.raises(IngestRefused, match="bad.json"):
            ingest_document(bad, db)
    assert _count(db, "SELECT count(*) FROM documents") == 0


def test_handler_failing_inside_the_transaction_rolls_everything_back(db, tmp_path):
    ingest_results(simple_run(tmp_path / "r"), db)
    with documents.registered(_note_handler(fail_inside=True)):
        with pytest.raises(IngestRefused, match="refused after the first insert"):
            ingest_document({"kind": "test_note", "note": "x", "score": 1.0}, db)
    with connect(db, read_only=True) as conn:
        assert conn.query_one("SELECT count(*) FROM documents")[0] == 0
        # the handler's CREATE TABLE was inside the same transaction: gone too
        assert conn.query_one("SELECT count(*) FROM information_schema.tables "
                              "WHERE table_name = 'test_notes'")[0] == 0


def _extra_handler(seen: list):
    """Results extra ``extra_stats.json``: ``{"stats": {name: number}}`` per run."""

    def validate(content, source, metrics):
        if not isinstance(content.get("stats"), dict):
            raise ValueError(f"{source}: field 'stats': must be an object")

    def ingest(conn, run_id, content, metrics):
        seen.append(run_id)
        conn.execute("CREATE TABLE IF NOT EXISTS test_stats "
                     "(run_id VARCHAR, name VARCHAR, value DOUBLE)")
        for name, value in sorted(content["stats"].items()):
            conn.execute("INSERT INTO test_stats VALUES (?, ?, ?)", [run_id, name, value])

    return SimpleNamespace(__name__="test_extra_handler", RESULTS_FILE="extra_stats.json",
                           validate=validate, ingest=ingest)


def _with_extra(tmp_path, name, content, **kwargs):
    out = simple_run(tmp_path / name, **kwargs)
    (out / "extra_stats.json").write_text(json.dumps(content))
    return out


def test_results_extra_is_stored_in_the_runs_transaction(db, tmp_path):
    seen = []
    out = _with_extra(tmp_path, "r", {"stats": {"b": 2.0, "a": 1.0}})
    with documents.registered(_extra_handler(seen)):
        report = ingest_results(out, db)
        assert "extra_stats.json" in report.message
        bad = _with_extra(tmp_path, "bad", {"stats": [1]}, control_name="bad")
        with pytest.raises(IngestRefused, match="extra_stats.json.*field 'stats'"):
            ingest_results(bad, db)
    assert seen == [report.run_id]
    with connect(db, read_only=True) as conn:
        assert conn.query_all("SELECT name, value FROM test_stats ORDER BY name") == [
            ("a", 1.0), ("b", 2.0)]
        assert conn.query_one("SELECT stored_by FROM run_files WHERE name = 'extra_stats.json'"
                              ) == ("test_extra_handler",)
        assert conn.query_one("SELECT count(*) FROM runs")[0] == 1


def test_extra_whose_handler_arrives_later_is_added_on_reingest(db, tmp_path):
    out = _with_extra(tmp_path, "r", {"stats": {"a": 1.0}})
    first = ingest_results(out, db)
    assert "kept only as checksums" in first.message and "extra_stats.json" in first.message
    seen = []
    with documents.registered(_extra_handler(seen)):
        again = ingest_results(out, db)
        assert not again.inserted and "extra_stats.json" in again.message
        third = ingest_results(out, db)
        assert "stored extra" not in third.message
    assert seen == [first.run_id]
    assert _count(db, "SELECT count(*) FROM test_stats") == 1


def test_handlers_are_discovered_from_modules_in_the_package(tmp_path, monkeypatch):
    (tmp_path / "zz_test_kind.py").write_text(
        'KIND = "zz_test_kind"\n'
        "def validate(doc, source):\n    pass\n"
        "def ingest(conn, doc):\n    pass\n")
    monkeypatch.setattr(documents, "__path__", [*documents.__path__, str(tmp_path)])
    monkeypatch.setattr(documents, "_discovered", False)
    monkeypatch.setattr(documents, "_KINDS", {})
    monkeypatch.setattr(documents, "_FILES", {})
    try:
        assert "zz_test_kind" in documents.kinds()
    finally:
        sys.modules.pop("warehouse.documents.zz_test_kind", None)


def test_malformed_handlers_are_rejected():
    both = SimpleNamespace(KIND="k", RESULTS_FILE="f.json", validate=print, ingest=print)
    with pytest.raises(ValueError, match="exactly one of KIND or RESULTS_FILE"):
        documents.register(both)
    core = SimpleNamespace(RESULTS_FILE="metrics.json", ingest=print)
    with pytest.raises(ValueError, match="core file"):
        documents.register(core)
    no_validate = SimpleNamespace(KIND="k", ingest=print)
    with pytest.raises(ValueError, match="validate"):
        documents.register(no_validate)
