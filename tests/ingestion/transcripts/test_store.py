"""The transcript store: filling, replacing, ordered reads, schema versions, URLs."""

from __future__ import annotations

import dataclasses
import random
from contextlib import contextmanager
from datetime import date

import pytest
from sqlalchemy import create_engine, func, select, text, update
from sqlalchemy.exc import IntegrityError

from ingestion.transcripts import SCHEMA_VERSION, SchemaVersionError, default_url, fill, open_store
from ingestion.transcripts import schema
from tests.ingestion.transcripts.helpers import document_corpus, file, meeting_corpus, turn


@pytest.fixture
def store(tmp_path):
    s = open_store("sqlite:///" + str(tmp_path / "t.sqlite"))
    yield s
    s.close()


def count(store, table, corpus=None) -> int:
    query = select(func.count()).select_from(table)
    if corpus is not None:
        column = table.c.name if table is schema.corpora else table.c.corpus
        query = query.where(column == corpus)
    with store.engine.connect() as conn:
        return conn.execute(query).scalar_one()


def tiny(sha="0" * 64, name="tiny", extra_text=""):
    files = [file("m2", title="B", team="T", kind="k", recorded_date="2025-03-04",
                  roster=["Ann", "Bob"]),
             file("m1", title="A", roster=["Ann"])]
    turns = [
        turn("m1", 0, "Ann", 0.0, 1.0, "hello" + extra_text),
        # m2: ties on start; (start, end, id) is the order, id follows the turn index
        turn("m2", 2, "Bob", 1.0, 2.0, "third"),
        turn("m2", 1, "Ann", 1.0, 1.5, "second"),
        turn("m2", 0, "Bob", 0.0, 3.0, "first"),
        turn("m2", 3, "Ann", 1.0, 2.0, "fourth"),
    ]
    return meeting_corpus(files, turns, name=name, sha=sha)


def test_fill_writes_every_row_of_a_synthetic_corpus(store, synthetic_corpus):
    report = fill(store, synthetic_corpus, progress=False)
    c = synthetic_corpus
    roster_rows = sum(len(set(f.roster)) for f in c.files)
    assert (report.files, report.turns, report.rosters) == (len(c.files), len(c.turns), roster_rows)
    assert count(store, schema.files) == len(c.files)
    assert count(store, schema.turns) == len(c.turns)
    assert count(store, schema.rosters) == roster_rows
    assert store.corpora()[c.name]["sha256"] == c.source.sha256
    first = sorted(c.files, key=lambda f: f.file_id)[0]
    with store.engine.connect() as conn:
        row = conn.execute(select(schema.files).where(schema.files.c.id == first.file_id)
                           ).mappings().one()
    assert row["title"] == first.title and row["team"] == first.team and row["kind"] == first.kind
    assert row["recorded_date"] == date.fromisoformat(first.recorded_date)
    assert row["date_source"] == first.date_source
    by_file = c.turns_by_file()[first.file_id]
    stored = store.turns(c.name, first.file_id)
    assert [t.text for t in stored] == [t.text for t in
                                        sorted(by_file, key=lambda t: (t.start, t.end, t.index))]


def test_chronological_reads_order_by_start_end_then_id(store):
    corpus = tiny()
    # the input order must not matter
    shuffled = list(corpus.turns)
    random.Random(3).shuffle(shuffled)
    fill(store, dataclasses.replace(corpus, turns=tuple(shuffled)), progress=False)
    got = [(t.turn_index, t.text) for t in store.turns("tiny", "m2")]
    # (0.0, 3.0) first; then start 1.0: end 1.5 before end 2.0; the two (1.0, 2.0) turns by id,
    # and ids were assigned in turn-index order
    assert got == [(0, "first"), (1, "second"), (2, "third"), (3, "fourth")]
    ids = [t.id for t in store.turns("tiny", "m2")]
    assert ids[2] < ids[3]


def test_refilling_an_unchanged_corpus_is_a_no_op_and_a_changed_one_is_replaced(store):
    first = fill(store, tiny(), progress=False)
    again = fill(store, tiny(), progress=False)
    assert first.written and not again.written and "unchanged" in again.message
    assert count(store, schema.turns) == 5
    fill(store, tiny(sha="2" * 64, extra_text=" again"), progress=False)
    assert count(store, schema.turns) == 5 and count(store, schema.files) == 2
    assert store.turns("tiny", "m1")[0].text == "hello again"
    assert store.corpora()["tiny"]["sha256"] == "2" * 64
    forced = fill(store, tiny(sha="2" * 64, extra_text=" again"), progress=False, force=True)
    assert forced.written


def test_replacing_one_corpus_leaves_the_others_alone(store):
    fill(store, tiny(name="one"), progress=False)
    fill(store, tiny(name="two"), progress=False)
    fill(store, tiny(name="one", sha="3" * 64, extra_text="!"), progress=False)
    assert count(store, schema.turns, "two") == 5 and count(store, schema.turns, "one") == 5
    assert store.turns("two", "m1")[0].text == "hello"
    assert store.turns("one", "m1")[0].text == "hello!"
    assert sorted(store.corpora()) == ["one", "two"]


def test_a_failing_fill_keeps_the_previous_rows_whole(store):
    fill(store, tiny(), progress=False)
    broken = tiny(sha="4" * 64)
    # a NULL text violates NOT NULL only when the turns are inserted, after the old rows
    # were deleted and the files written: the transaction must undo all of it
    bad_turns = list(broken.turns) + [turn("m1", 9, "Ann", 5.0, 6.0, None)]
    with pytest.raises(IntegrityError):
        fill(store, dataclasses.replace(broken, turns=tuple(bad_turns)), progress=False)
    assert store.corpora()["tiny"]["sha256"] == "0" * 64
    assert count(store, schema.turns) == 5 and count(store, schema.files) == 2
    assert count(store, schema.rosters) == 3


@pytest.mark.parametrize("mutate, field", [
    (lambda c: dataclasses.replace(c, files=c.files + (file("m1"),)), "m1"),
    (lambda c: dataclasses.replace(c, turns=c.turns + (turn("zz", 0, "A", 0, 1, "x"),)),
     "'file_id'"),
    (lambda c: dataclasses.replace(c, turns=c.turns + (turn("m1", 0, "A", 5, 6, "x"),)),
     "'index'"),
    (lambda c: dataclasses.replace(c, files=(file("m2", recorded_date="March 2025"),
                                             file("m1"))), "'recorded_date'"),
])
def test_bad_corpora_are_refused_naming_the_field(store, mutate, field):
    with pytest.raises(ValueError, match=field):
        fill(store, mutate(tiny()), progress=False)
    assert count(store, schema.files) == 0


def test_a_document_corpus_becomes_one_file_and_one_turn_per_document(store):
    fill(store, document_corpus(), progress=False)
    assert store.file_ids("docs") == ["d1", "d2"]
    (only,) = store.turns("docs", "d2")
    assert (only.turn_index, only.speaker, only.text) == (0, None, "Second\nText two.")
    assert store.turns("docs", "d1")[0].text == "Text one."


def test_schema_version_is_written_and_other_versions_are_refused(tmp_path):
    url = "sqlite:///" + str(tmp_path / "v.sqlite")
    with open_store(url) as s:
        with s.engine.connect() as conn:
            assert conn.execute(select(schema.schema_version.c.version)).scalars().all() == [
                SCHEMA_VERSION]
        with s.engine.begin() as conn:
            conn.execute(update(schema.schema_version).values(version=SCHEMA_VERSION + 1))
    with pytest.raises(SchemaVersionError, match=rf"version {SCHEMA_VERSION + 1} is newer"):
        open_store(url)
    with _raw(url) as conn:
        conn.execute(update(schema.schema_version).values(version=SCHEMA_VERSION - 1))
    with pytest.raises(SchemaVersionError, match=rf"version {SCHEMA_VERSION - 1} is older"):
        open_store(url)


@contextmanager
def _raw(url):
    """A plain transaction on ``url``, bypassing the store's checks."""
    engine = create_engine(url)
    try:
        with engine.begin() as conn:
            yield conn
    finally:
        engine.dispose()


def test_a_database_with_our_tables_but_no_version_is_refused(tmp_path):
    url = "sqlite:///" + str(tmp_path / "other.sqlite")
    with _raw(url) as conn:
        conn.execute(text("CREATE TABLE files (id TEXT)"))
    with pytest.raises(SchemaVersionError, match="no schema_version table"):
        open_store(url)


def test_default_url_lies_beside_the_warehouse(monkeypatch, tmp_path):
    monkeypatch.setenv("HARNESS_WAREHOUSE", str(tmp_path / "wh" / "results.duckdb"))
    assert default_url() == "sqlite:///" + str(tmp_path / "wh" / "transcripts.sqlite")
    assert default_url(tmp_path / "x" / "w.duckdb") == "sqlite:///" + str(
        tmp_path / "x" / "transcripts.sqlite")
    monkeypatch.delenv("HARNESS_WAREHOUSE")
    assert default_url() == "sqlite:///transcripts.sqlite"
    with open_store(warehouse=tmp_path / "y" / "w.duckdb") as s:
        assert s.dialect == "sqlite"
    assert (tmp_path / "y" / "transcripts.sqlite").is_file()


def test_an_unusable_url_is_a_clear_error():
    with pytest.raises(ValueError, match="not a usable SQLAlchemy URL"):
        open_store("nosuchdialect://user:secret@host/db")


def test_the_same_rows_come_back_from_postgresql(postgres, synthetic_corpus, tmp_path):
    lite = open_store("sqlite:///" + str(tmp_path / "same.sqlite"))
    pg = open_store(postgres.create_database("store_same"))
    try:
        assert pg.dialect == "postgresql"
        for s in (lite, pg):
            fill(s, synthetic_corpus, progress=False)
            fill(s, tiny(), progress=False)
        assert not fill(pg, tiny(), progress=False).written
        assert lite.corpora() == pg.corpora()
        for name in ("tiny", synthetic_corpus.name):
            assert lite.file_ids(name) == pg.file_ids(name)
            for file_id in lite.file_ids(name)[:5]:
                strip = lambda rows: [dataclasses.replace(r, id=0) for r in rows]  # noqa: E731
                assert strip(lite.turns(name, file_id)) == strip(pg.turns(name, file_id))
        with pytest.raises(SchemaVersionError):
            with pg.engine.begin() as conn:
                conn.execute(update(schema.schema_version).values(version=99))
            open_store(pg.engine.url.render_as_string(hide_password=False))
    finally:
        lite.close()
        pg.close()
