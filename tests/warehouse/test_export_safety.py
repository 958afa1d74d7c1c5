"""``warehouse export --out`` never destroys an input or a user's file (issue #16).

The review's repro: ``--out`` naming the warehouse file replaced it with the export (every
run gone); ``--out`` naming an existing directory left ``.NAME.tmp-PID`` files and a
traceback.  Each variant is run as the CLI runs it and must exit 2 with one line, leaving
the warehouse and every file byte for byte.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.user_files import snapshot, users_folder
from tests.warehouse.builders import simple_run
from warehouse import ingest_results, queries
from warehouse.cli import main


@pytest.fixture
def setup(tmp_path):
    db = tmp_path / "w.duckdb"
    results = simple_run(tmp_path / "results" / "r1", control_name="r1")
    ingest_results(results, db)
    users_folder(tmp_path)
    return tmp_path, db, results


def export(db, out, *extra):
    return main(["export", "--view", "internal", "--format", "csv", "--db", str(db),
                 "--out", str(out), *extra])


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_an_output_over_the_warehouse_or_its_files_is_refused(setup, capsys, monkeypatch):
    root, db, _ = setup
    before = snapshot(root)
    for out in (db, root / "w.duckdb.wal", root / "w.duckdb.lock", root / "link.csv"):
        if out.name == "link.csv":
            out.symlink_to(db)
            before = snapshot(root)
        assert export(db, out) == 2
        assert "is also an input of this command (the warehouse" in one_error(capsys)
        assert snapshot(root) == before
    # the warehouse named by the environment is an input too
    monkeypatch.setenv("HARNESS_WAREHOUSE", str(db))
    assert main(["export", "--view", "internal", "--format", "md", "--out", str(db)]) == 2
    one_error(capsys)
    assert queries.health(db_path=db)["runs"] == 1


def test_an_output_over_a_directory_is_refused_without_leftovers(setup, capsys):
    root, db, results = setup
    before = snapshot(root)
    for out in (results, root / "mydocs", root / "results"):
        assert export(db, out) == 2
        assert "is a directory" in one_error(capsys)
    assert snapshot(root) == before  # no .NAME.tmp-PID file anywhere
    assert export(db, root / "mydocs" / "thesis.tex") == 2
    assert "exists and is not a csv export written by this product" in one_error(capsys)
    assert export(db, root / "mydocs" / "thesis.tex" / "t.csv") == 2
    assert "is not a directory" in one_error(capsys)
    assert snapshot(root) == before


def test_an_earlier_export_is_replaced_and_a_users_sidecar_name_is_not(setup, capsys):
    root, db, _ = setup
    out = root / "table.csv"
    assert export(db, out) == 0
    first = out.read_bytes()
    assert export(db, out) == 0 and out.read_bytes() == first
    assert json.loads((root / "table.csv.provenance.json").read_text())["view"] == "internal"
    other = root / "notes.md"
    (root / "notes.md.provenance.json").write_text("my notes on provenance\n")
    before = snapshot(root)
    assert export(db, other) == 2
    assert "notes.md.provenance.json: exists and is not a provenance sidecar" in one_error(capsys)
    assert snapshot(root) == before


def test_a_failure_while_writing_removes_every_temporary_file(setup, capsys, monkeypatch):
    root, db, _ = setup
    assert export(db, root / "old.csv") == 0
    before = snapshot(root)
    real = os.replace

    def failing(src, dst):
        if ".tmp-" in str(src) and str(dst).endswith(".provenance.json"):
            raise OSError("disk full")  # the table is in place, its sidecar fails
        return real(src, dst)

    monkeypatch.setattr(os, "replace", failing)
    for out in ("old.csv", "new.csv"):  # an earlier export is put back, a new one removed
        assert export(db, root / out, "--class", "all") == 1
        assert one_error(capsys) == "error: disk full\n"
        assert snapshot(root) == before  # no temporary, no backup, no half of a pair
