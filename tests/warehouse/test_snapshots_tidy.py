"""warehouse.snapshots.tidy: a killed publisher's temporary files go, a live one's stay."""

from __future__ import annotations

import os

from warehouse import snapshots


def test_tidy_keeps_the_temporary_files_of_this_process(tmp_path):
    # this process may be publishing (another thread): its files are not leftovers
    mine = tmp_path / f".snapshot-tmp-{os.getpid()}-abcd-internal.duckdb"
    mine.write_text("x")
    stray = tmp_path / ".snapshot-tmp-nopid-internal.duckdb"
    stray.write_text("x")
    snapshots.tidy(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [mine.name]
