"""ingest_run(): a busy warehouse leaves the written results intact and says how to retry."""

from __future__ import annotations

import argparse

import pytest

import warehouse
from harness.cli.ingest import NOT_INGESTED, ingest_run
from warehouse.errors import WarehouseBusy


def test_busy_warehouse_exits_with_retry_command_and_keeps_results(tmp_path, monkeypatch, capsys):
    results = tmp_path / "run"
    results.mkdir()
    (results / "metrics.json").write_text("{}\n")

    def busy(results_dir, db_path=None):
        raise WarehouseBusy("held by pid 123 (python -m warehouse ingest) since 12:00")

    monkeypatch.setattr(warehouse, "ingest_results", busy)
    with pytest.raises(SystemExit) as exit_info:
        ingest_run(results, argparse.Namespace(no_warehouse=False, db=str(tmp_path / "w.duckdb")))
    assert exit_info.value.code == NOT_INGESTED
    err = capsys.readouterr().err
    assert "held by pid 123" in err
    assert f"python -m warehouse ingest {results}" in err
    assert (results / "metrics.json").read_text() == "{}\n"


def test_refused_input_propagates_as_value_error(tmp_path, monkeypatch):
    def refuse(results_dir, db_path=None):
        raise ValueError("metrics.json: field 'rows': missing")

    monkeypatch.setattr(warehouse, "ingest_results", refuse)
    with pytest.raises(ValueError, match="field 'rows'"):
        ingest_run(tmp_path, argparse.Namespace(no_warehouse=False, db=None))


def test_no_warehouse_skips_ingest(tmp_path, monkeypatch):
    def explode(*a, **k):  # pragma: no cover - must not be called
        raise AssertionError("ingest called despite --no-warehouse")

    monkeypatch.setattr(warehouse, "ingest_results", explode)
    ingest_run(tmp_path, argparse.Namespace(no_warehouse=True, db=None))
