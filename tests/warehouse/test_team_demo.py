"""``make team-demo --no-serve``: the demo's store, keys, submissions and ingester end with
the signed publishable runs alone in publishable.duckdb."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.warehouse.team_builders import REPO, read


@pytest.mark.service
def test_the_team_demo_publishes_only_signed_publishable_runs(tmp_path):
    done = subprocess.run([sys.executable, str(REPO / "tools" / "team_demo.py"), "--no-serve",
                           "--dir", str(tmp_path)], capture_output=True, text=True,
                          timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "capped at tier B" in done.stdout and "unsigned: no signature.json" in done.stdout
    snaps = tmp_path / "snapshots"
    assert read(snaps / "publishable.duckdb", "SELECT control_name FROM runs ORDER BY 1") == \
        [("bm25-cc-by",), ("bm25-mit",)]
    assert read(snaps / "internal.duckdb", "SELECT control_name, tier FROM runs ORDER BY 1") == \
        [("bm25-cc-by", "A"), ("bm25-mit", "A"), ("bm25-noncommercial", "B"),
         ("bm25-unsigned", "B")]


def test_the_demo_key_is_created_owner_only_and_never_overwritten(tmp_path, monkeypatch):
    import importlib.util
    import os
    import stat

    spec = importlib.util.spec_from_file_location("team_demo", REPO / "tools" / "team_demo.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # a chmod after the write would leave the key readable by others until it ran
    monkeypatch.setattr(os, "chmod", lambda *a, **k: None)
    old = os.umask(0o022)
    try:
        private, _ = module.make_keys(tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    before = private.read_bytes()
    with pytest.raises(FileExistsError):
        module.make_keys(tmp_path)
    assert private.read_bytes() == before
