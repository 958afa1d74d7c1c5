"""Chunk-level and file-level runs never share a measure column, in any export format; every
export carries each arm's parameters as columns (issue 29, items 4 and 5)."""

from __future__ import annotations

import io

import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.warehouse.builders import build_results
from warehouse import ingest_results
from warehouse.exports import export_table

CORPORA = {"pub": ("A", "MIT")}


@pytest.fixture(scope="module")
def two_levels(tmp_path_factory):
    root = tmp_path_factory.mktemp("levels")
    db = root / "w.duckdb"
    chunk = {("pub", f"q{i}"): {"nDCG@10": 0.1 * i} for i in range(1, 5)}
    file_level = {("pub", f"q{i}"): {"nDCG@10": 0.2 * i} for i in range(1, 5)}
    runs = [("bm25-chunk", chunk, {"granularity": "chunk", "backend": "embedded",
                                   "mode": "bm25", "scope": "corpus",
                                   "bm25": {"k1": 0.9, "b": 0.4}}),
            ("rrf-file", file_level, {"granularity": "file", "backend": "embedded",
                                      "mode": "hybrid", "scope": "corpus",
                                      "fusion": {"strategy": "rrf", "rank_constant": 60}})]
    for minute, (name, values, retrieval) in enumerate(runs):
        out = build_results(root / name, values, corpora=CORPORA, control_name=name,
                            retrieval=retrieval,
                            runinfo_fields={"created_at": f"2026-01-05T09:0{minute}:00Z"})
        ingest_results(out, db_path=db)
    return db


def test_latex_puts_each_granularity_in_a_table_of_its_own(two_levels):
    latex = export_table("publishable", "latex", measures=["nDCG@10"], db_path=two_levels)
    tables = latex.split("\\begin{table}")[1:]
    assert len(tables) == 2
    assert "chunk-level, graded" in tables[0] and "bm25-chunk" in tables[0]
    assert "rrf-file" not in tables[0]
    assert "file-level, graded" in tables[1] and "rrf-file" in tables[1]
    assert "bm25-chunk" not in tables[1]


def test_markdown_has_one_table_per_group(two_levels):
    md = export_table("publishable", "md", measures=["nDCG@10"], db_path=two_levels)
    chunk, file_level = md.split("**file-level, graded**")
    assert "**chunk-level, graded**" in chunk and "bm25-chunk" in chunk
    assert "rrf-file" not in chunk
    assert "rrf-file" in file_level.split("**Provenance**")[0]
    assert "bm25-chunk" not in file_level.split("**Provenance**")[0]


def test_csv_and_parquet_name_the_group_and_the_arm_parameters(two_levels):
    frame = pd.read_csv(io.StringIO(export_table("publishable", "csv", measures=["nDCG@10"],
                                                 db_path=two_levels)))
    by_run = frame[frame["class"] == "all"].set_index("run")
    assert by_run.loc["bm25-chunk", "group"] == "chunk-level, graded"
    assert by_run.loc["rrf-file", "group"] == "file-level, graded"
    assert by_run.loc["bm25-chunk", "bm25_k1"] == 0.9 and by_run.loc["bm25-chunk", "bm25_b"] == 0.4
    assert by_run.loc["rrf-file", "fusion"] == "rrf" and by_run.loc["rrf-file", "fusion_k"] == 60
    assert pd.isna(by_run.loc["bm25-chunk", "fusion_k"])
    assert by_run.loc["rrf-file", "granularity"] == "file"
    parquet = pq.read_table(io.BytesIO(export_table("publishable", "parquet",
                                                    measures=["nDCG@10"],
                                                    db_path=two_levels))).to_pandas()
    assert set(parquet["group"]) == {"chunk-level, graded", "file-level, graded"}


def test_csv_says_which_runs_are_tied_with_the_best(two_levels):
    """Per group: one run each, so nothing is tied; the column is there when the test is."""
    from harness.stats.best import tied_with_best

    frame = pd.read_csv(io.StringIO(export_table("publishable", "csv", measures=["nDCG@10"],
                                                 tie_test=tied_with_best,
                                                 db_path=two_levels)))
    assert "nDCG@10 tied_with_best" in frame.columns
    assert not frame["nDCG@10 tied_with_best"].any()
