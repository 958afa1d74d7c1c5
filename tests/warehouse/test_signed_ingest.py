"""``warehouse ingest --trusted-keys``: tier A only from a signature by a listed key; an
unsigned or foreign-signed run (consistent pins, a publishable licence) is stored capped at
tier B and never reaches a publishable view.  Without --trusted-keys nothing changes."""

from __future__ import annotations

import pytest

from tests.warehouse.builders import simple_run
from tests.warehouse.signing_builders import keys
from warehouse import connect
from warehouse.cli import main


@pytest.fixture
def signed(tmp_path, monkeypatch):
    ci, forger, trusted = keys(tmp_path)
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(ci))
    good = simple_run(tmp_path / "good", control_name="good")
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(forger))
    foreign = simple_run(tmp_path / "foreign", control_name="foreign", offset=0.01)
    monkeypatch.delenv("HARNESS_SIGNING_KEY")
    unsigned = simple_run(tmp_path / "unsigned", control_name="unsigned", offset=0.02)
    return trusted, good, foreign, unsigned


def tiers(db):
    with connect(db, read_only=True) as conn:
        runs = dict(conn.query_all("SELECT control_name, tier FROM runs"))
        rows = dict(conn.query_all("SELECT r.control_name, list(DISTINCT m.tier) FROM "
                                   "metric_rows m JOIN runs r USING (run_id) GROUP BY 1"))
        public = {n for (n,) in conn.query_all(
            "SELECT DISTINCT r.control_name FROM metric_rows_publishable m "
            "JOIN runs r USING (run_id)")}
        pq = {n for (n,) in conn.query_all(
            "SELECT DISTINCT r.control_name FROM per_query_publishable p "
            "JOIN runs r USING (run_id)")}
    return runs, rows, public, pq


def test_only_the_trusted_signature_keeps_tier_a(signed, tmp_path, capsys):
    trusted, good, foreign, unsigned = signed
    db = tmp_path / "w.duckdb"
    assert main(["ingest", str(good), str(foreign), str(unsigned), "--db", str(db),
                 "--trusted-keys", str(trusted)]) == 0
    err = capsys.readouterr().err
    assert f"{foreign}: stored with its tier capped at B: signature.json: signed by key" in err
    assert f"{unsigned}: stored with its tier capped at B: unsigned: no signature.json" in err
    runs, rows, public, pq = tiers(db)
    assert runs == {"good": "A", "foreign": "B", "unsigned": "B"}
    assert rows == {"good": ["A"], "foreign": ["B"], "unsigned": ["B"]}
    assert public == pq == {"good"}


def test_local_mode_without_keys_keeps_working_unsigned(signed, tmp_path):
    _, good, foreign, unsigned = signed
    db = tmp_path / "w.duckdb"
    assert main(["ingest", str(good), str(foreign), str(unsigned), "--db", str(db)]) == 0
    runs, _, public, _ = tiers(db)
    assert runs == {"good": "A", "foreign": "A", "unsigned": "A"}
    assert public == {"good", "foreign", "unsigned"}


def test_a_bad_keys_file_is_exit_2_naming_it(signed, tmp_path, capsys):
    _, good, _, _ = signed
    (tmp_path / "bad.pem").write_text("nothing here")
    assert main(["ingest", str(good), "--db", str(tmp_path / "w.duckdb"),
                 "--trusted-keys", str(tmp_path / "bad.pem")]) == 2
    assert "bad.pem: holds no PEM 'PUBLIC KEY' block" in capsys.readouterr().err
    assert not (tmp_path / "w.duckdb").exists()


def test_an_extra_file_of_a_capped_run_is_capped_too(tmp_path, monkeypatch):
    """``harness intervals`` adds intervals.json after the directory was signed: it is not
    covered, so the run is capped at B, and so are the interval rows stored from it."""
    from harness.cli import main as harness

    ci, _, trusted = keys(tmp_path)
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(ci))
    run = simple_run(tmp_path / "run", n_queries=5)
    monkeypatch.delenv("HARNESS_SIGNING_KEY")
    assert harness(["intervals", str(run)]) == 0
    db = tmp_path / "w.duckdb"
    assert main(["ingest", str(run), "--db", str(db), "--trusted-keys", str(trusted)]) == 0
    with connect(db, read_only=True) as conn:
        assert conn.query_all("SELECT DISTINCT tier FROM intervals") == [("B",)]
        assert conn.query_one("SELECT count(*) FROM intervals_publishable") == (0,)
        assert conn.query_all("SELECT DISTINCT tier FROM per_query") == [("B",)]
