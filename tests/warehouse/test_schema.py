"""Migrations, connections and the read-only guarantee."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from warehouse import change_stamp, connect, default_path, migrate
from warehouse.errors import (MigrationEdited, SchemaOutOfDate, WarehouseError,
                              WarehouseMissing, WarehouseReadOnly)
from warehouse.schema import MIGRATIONS_DIR, available


def _catalog(db):
    with connect(db, read_only=True) as conn:
        tables = conn.query_all(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "ORDER BY table_name, ordinal_position")
        ledger = conn.query_all("SELECT * FROM schema_migrations ORDER BY version")
    return tables, ledger


def _copy_migrations(tmp_path):
    folder = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS_DIR, folder)
    return folder


def _core_only(tmp_path):
    """A migrations folder holding only 001_core.sql, whatever later migrations ship."""
    folder = tmp_path / "migrations-core"
    folder.mkdir()
    shutil.copy(MIGRATIONS_DIR / "001_core.sql", folder / "001_core.sql")
    return folder


def test_migrate_twice_changes_nothing(db):
    first = migrate(db)
    assert [m.filename for m in first] == [m.filename for m in available()]
    assert first[0].filename == "001_core.sql"
    before = _catalog(db)
    stamp = change_stamp(db)
    assert migrate(db) == []
    assert _catalog(db) == before
    # the ledger records the file's checksum, computed here independently
    expected = hashlib.sha256((MIGRATIONS_DIR / "001_core.sql").read_bytes()).hexdigest()
    assert before[1][0][:3] == (1, "core", expected)
    assert change_stamp(db) == stamp


def test_edited_migration_is_refused(db, tmp_path):
    folder = _copy_migrations(tmp_path)
    migrate(db, migrations_dir=folder)
    before = _catalog(db)
    with (folder / "001_core.sql").open("a") as handle:
        handle.write("\n-- an innocent-looking edit\n")
    with pytest.raises(MigrationEdited, match="001_core.*never edited"):
        migrate(db, migrations_dir=folder)
    # readers refuse it too, and nothing changed
    from warehouse import schema

    with connect(db, read_only=True, check_schema=False) as conn:
        with pytest.raises(MigrationEdited):
            schema.check(conn, folder)
    assert _catalog(db) == before


def test_new_migrations_apply_in_order_even_when_numbers_arrive_out_of_order(db, tmp_path):
    folder = _core_only(tmp_path)
    migrate(db, migrations_dir=folder)
    (folder / "003_later.sql").write_text("CREATE TABLE later_things (x INTEGER);\n")
    assert [m.version for m in migrate(db, migrations_dir=folder)] == [3]
    (folder / "002_earlier.sql").write_text("CREATE TABLE earlier_things (y INTEGER);\n")
    (folder / "004_next.sql").write_text("CREATE TABLE next_things (z INTEGER);\n")
    assert [m.version for m in migrate(db, migrations_dir=folder)] == [2, 4]
    with connect(db, read_only=False, check_schema=False) as conn:
        ledger = conn.query_all("SELECT version, name, checksum FROM schema_migrations "
                                "ORDER BY version")
    assert [(v, n) for v, n, _ in ledger] == [(1, "core"), (2, "earlier"), (3, "later"),
                                               (4, "next")]
    assert ledger[1][2] == hashlib.sha256(b"CREATE TABLE earlier_things (y INTEGER);\n").hexdigest()


def test_a_failing_migration_leaves_nothing_behind(db, tmp_path):
    folder = _core_only(tmp_path)
    migrate(db, migrations_dir=folder)
    (folder / "002_broken.sql").write_text(
        "CREATE TABLE half_done (x INTEGER);\nTHIS IS NOT SQL;\n")
    with pytest.raises(WarehouseError, match="database error"):
        migrate(db, migrations_dir=folder)
    with connect(db, read_only=False, check_schema=False) as conn:
        assert conn.query_all("SELECT version FROM schema_migrations") == [(1,)]
        assert conn.query_one("SELECT count(*) FROM information_schema.tables "
                              "WHERE table_name = 'half_done'")[0] == 0


def test_misnamed_migration_file_is_refused(tmp_path):
    folder = _copy_migrations(tmp_path)
    (folder / "2_bad.sql").write_text("SELECT 1;\n")
    with pytest.raises(SchemaOutOfDate, match="NNN_name.sql"):
        available(folder)


def test_reader_refuses_a_warehouse_with_pending_migrations(db, tmp_path):
    folder = _core_only(tmp_path)
    migrate(db, migrations_dir=folder)
    (folder / "002_more.sql").write_text("CREATE TABLE more_things (x INTEGER);\n")
    from warehouse import schema

    with connect(db, read_only=True, check_schema=False) as conn:
        with pytest.raises(SchemaOutOfDate, match="002_more.sql"):
            schema.check(conn, folder)


def test_write_through_read_only_connection_fails(db):
    migrate(db)
    with connect(db, read_only=True) as conn:
        with pytest.raises(WarehouseReadOnly, match="read-only"):
            conn.execute("INSERT INTO documents VALUES ('x', 'k', NULL, NULL, 'A', NULL, "
                         "now()::TIMESTAMP, '{}')")
        with pytest.raises(WarehouseReadOnly):
            conn.execute("CREATE TABLE sneaky (x INTEGER)")
    with connect(db, read_only=True) as conn:
        assert conn.query_one("SELECT count(*) FROM documents")[0] == 0


def test_reading_a_missing_warehouse_says_so(tmp_path):
    with pytest.raises(WarehouseMissing, match="no warehouse at"):
        with connect(tmp_path / "absent.duckdb", read_only=True):
            pass
    assert not (tmp_path / "absent.duckdb").exists()


def test_default_path_comes_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.delenv("HARNESS_WAREHOUSE", raising=False)
    assert str(default_path()) == "warehouse.duckdb"
    monkeypatch.setenv("HARNESS_WAREHOUSE", str(tmp_path / "elsewhere.duckdb"))
    assert default_path() == tmp_path / "elsewhere.duckdb"


def test_tier_order_in_sql_comes_from_the_ranks_of_the_core(tmp_path):
    """Migration 007's ``tier_ranks`` holds harness.core.tiers' order, filled on migrate; a
    warehouse whose ranks disagree is refused; no query orders tiers by string."""
    import re

    from harness.core.tiers import TIERS, rank
    from warehouse import connect, migrate
    from warehouse.errors import SchemaOutOfDate

    db = tmp_path / "w.duckdb"
    migrate(db)
    with connect(db, read_only=True) as conn:
        assert conn.query_all("SELECT tier, rank FROM tier_ranks ORDER BY rank") == [
            (t, rank(t)) for t in TIERS]
        assert conn.query_one("SELECT stricter('A', 'B'), stricter('C', 'A'), "
                              "stricter('A', 'A')") == ("B", "C", "A")
    with connect(db, read_only=False, check_schema=False) as conn:
        conn.execute("UPDATE tier_ranks SET rank = 5 WHERE tier = 'A'")
    with pytest.raises(SchemaOutOfDate, match="tier ranks"):
        with connect(db, read_only=True):
            pass
    migrate(db)  # migrate puts the core's order back
    with connect(db, read_only=True) as conn:
        assert conn.query_one("SELECT tier_rank('A')") == (0,)
    ordering = re.compile(r"\b(max|min|greatest|least)\(\s*[\w.]*tier\b", re.IGNORECASE)
    root = Path(__file__).resolve().parents[2] / "warehouse"
    bad = [f"{p.name}:{i}" for p in [*root.glob("*.py"), *root.glob("migrations/*.sql")]
           for i, line in enumerate(p.read_text().splitlines(), 1) if ordering.search(line)]
    assert bad == []


def test_every_table_a_view_reads_has_its_publishable_relation(tmp_path):
    """The view names are derived (``<table>_publishable``), never listed: each must exist."""
    from warehouse import connect, migrate
    from warehouse.queries import TABLES, relation

    db = tmp_path / "w.duckdb"
    migrate(db)
    with connect(db, read_only=True) as conn:
        present = {name for (name,) in conn.query_all(
            "SELECT table_name FROM information_schema.tables")}
    assert {"metric_rows", "answers", "migration_decisions", "calibration", "runs"} <= TABLES
    assert {relation(v, t) for v in ("publishable", "internal") for t in TABLES} <= present
    with pytest.raises(ValueError, match="unknown table"):
        relation("publishable", "runs; DROP TABLE runs")


def test_a_migration_header_names_its_own_file():
    # a header of the form "-- NNN_name:" must name the file it heads, not another migration
    import re
    for path in sorted(MIGRATIONS_DIR.glob("*.sql")):
        first = path.read_text(encoding="utf-8").splitlines()[0]
        named = re.match(r"-- (\d{3}_\w+):", first)
        if named:
            assert named.group(1) == path.stem, f"{path.name} line 1 names {named.group(1)}"


def test_an_out_of_date_warehouse_names_the_command_that_migrates_it(tmp_path):
    """A warehouse made before a migration was added: the error prints the migrate command
    for that file (not the default warehouse's), and the command works as printed."""
    import os
    import re
    import subprocess
    import sys

    db = tmp_path / "my team" / "w.duckdb"
    db.parent.mkdir()
    older = _copy_migrations(tmp_path)
    newest = max(older.glob("*.sql"))
    newest.unlink()  # the warehouse predates the newest migration
    migrate(db, migrations_dir=older)
    with pytest.raises(SchemaOutOfDate) as caught:
        with connect(db, read_only=True):
            pass
    command = re.search(r"run `([^`]+)`", str(caught.value)).group(1)
    assert command == f"python -m warehouse migrate --db '{db}'"
    # run through a shell as printed, `python` being this interpreter
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120,
                          env=env, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    with connect(db, read_only=True) as conn:
        assert conn.query_all("SELECT max(version) FROM schema_migrations")[0][0] == max(
            m.version for m in available())


def test_a_missing_warehouse_names_the_commands_that_make_it(tmp_path):
    db = tmp_path / "none.duckdb"
    with pytest.raises(WarehouseMissing) as caught:
        with connect(db, read_only=True):
            pass
    assert f"python -m warehouse migrate --db {db}" in str(caught.value)
    assert f"python -m warehouse ingest DIR --db {db}" in str(caught.value)
