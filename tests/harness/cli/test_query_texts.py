"""Query text kept with a run (issue 37, item 10): ``harness score --queries`` writes
queries.jsonl, the claim pins it, the warehouse stores it at its corpus's tier, and the
publishable view never shows a tier-B query's text."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from tests.harness.cli.helpers import make_inputs
from warehouse import queries


def _texts(tmp_path, jsonl: bool):
    """Texts for q00..q44: q40..q44 are not in the qrels and must be left out."""
    ids = [f"q{i:02d}" for i in range(45)]
    if jsonl:
        path = tmp_path / "queries.jsonl"
        path.write_text("".join(json.dumps({"_id": q, "text": f"what about {q}?"}) + "\n"
                                for q in ids))
    else:
        path = tmp_path / "queries.tsv"
        path.write_text("".join(f"{q}\twhat about {q}?\n" for q in ids))
    return path


@pytest.mark.parametrize("jsonl", [False, True])
def test_score_writes_the_qrels_queries_texts_pinned_by_the_claim(tmp_path, jsonl):
    qrels, run, _ = make_inputs(tmp_path)
    out = tmp_path / "out"
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                 "--queries", str(_texts(tmp_path, jsonl)), "--corpus-name", "toy",
                 "--no-warehouse"]) == 0
    lines = [json.loads(x) for x in (out / "queries.jsonl").read_text().splitlines()]
    # the 40 qrels queries (q07, judged only non-relevant, included), sorted; none of q40..q44
    assert [r["query_id"] for r in lines] == [f"q{i:02d}" for i in range(40)]
    assert lines[3] == {"corpus": "toy", "tier": "B", "query_id": "q03",
                        "text": "what about q03?"}
    doc = json.loads((out / "metrics.json").read_text())
    assert set(doc["files"]) == {"per_query.jsonl", "rankings.jsonl", "qrels.jsonl",
                                 "queries.jsonl"}


def test_without_queries_no_file_is_written(tmp_path):
    qrels, run, _ = make_inputs(tmp_path)
    out = tmp_path / "out"
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                 "--no-warehouse"]) == 0
    assert not (out / "queries.jsonl").exists()
    assert "queries.jsonl" not in json.loads((out / "metrics.json").read_text())["files"]


def test_a_bad_queries_file_exits_2_naming_its_line(tmp_path, capsys):
    qrels, run, _ = make_inputs(tmp_path)
    bad = tmp_path / "queries.tsv"
    bad.write_text("q00\tfirst\nq01 no tab here\n")
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out",
                 str(tmp_path / "o"), "--queries", str(bad), "--no-warehouse"]) == 2
    assert f"{bad}:2:" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    dup = tmp_path / "dup.jsonl"
    dup.write_text('{"_id": "q00", "text": "a"}\n{"_id": "q00", "text": "b"}\n')
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out",
                 str(tmp_path / "o"), "--queries", str(dup), "--no-warehouse"]) == 2
    err = capsys.readouterr().err
    assert f"{dup}:2: field '_id'" in err and "duplicate query id 'q00'" in err


@pytest.mark.parametrize("licence, shown", [("CC0-1.0", True), ("unknown", False)])
def test_the_warehouse_shows_query_text_only_where_its_tier_allows(tmp_path, licence, shown):
    qrels, run, _ = make_inputs(tmp_path)
    db = tmp_path / "w.duckdb"
    out = tmp_path / "out"
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                 "--queries", str(_texts(tmp_path, False)), "--corpus-name", "toy",
                 "--licence", licence, "--db", str(db)]) == 0
    run_id = json.loads((out / "runinfo.json").read_text())["run_id"]
    internal = queries.query_texts(run_id, "internal", db_path=db)
    assert len(internal) == 40
    assert internal.set_index("query_id").loc["q05", "text"] == "what about q05?"
    assert set(internal["tier"]) == {"A" if shown else "B"}
    public = queries.query_texts(run_id, "publishable", db_path=db)
    assert len(public) == (40 if shown else 0)
