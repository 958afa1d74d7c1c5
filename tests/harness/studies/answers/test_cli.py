"""``python -m harness answer``: the results directory, its determinism, SQLite vs PostgreSQL."""

from __future__ import annotations

import json

import pytest

from harness.claims import AnswersClaim
from harness.claims.answers import ANSWERS_JSON
from harness.studies.answers.document import ANSWERS_MD
from harness.cli import main
from harness.core.formats import FormatError



def validate_document(doc, source="answers.json"):
    AnswersClaim.from_dict(doc, source)


def run_cli(tmp_path, corpus_dir, out, *extra, store_url=None):
    url = store_url or "sqlite:///" + str(tmp_path / "cli.sqlite")
    return main(["answer", "--corpus", f"synthetic:{corpus_dir}", "--store-url", url,
                 "--out", str(out), "--no-warehouse", "--no-progress", *extra])


def read(out):
    return ((out / ANSWERS_JSON).read_bytes(), (out / ANSWERS_MD).read_bytes())


def test_reference_scores_one_byte_identically_on_two_runs(tmp_path, corpus_dir, corpus):
    first, second = tmp_path / "r1", tmp_path / "r2"
    assert run_cli(tmp_path, corpus_dir, first, "--answerer", "reference") == 0
    # the second run finds the store already filled and reads the same rows
    assert run_cli(tmp_path, corpus_dir, second, "--answerer", "reference") == 0
    assert read(first) == read(second)
    doc = json.loads((first / ANSWERS_JSON).read_text())
    validate_document(doc)
    n = sum(1 for q in corpus.queries if q.scored_on == "answer")
    assert doc["kind"] == "answers" and doc["tier"] == "A" and doc["corpus"] == corpus.name
    assert doc["answerer"]["name"] == "reference"
    assert doc["answerer"]["is_production_path"] is False and doc["answerer"]["model"] is None
    assert doc["policy"]["count_tolerance"] == 0 and doc["policy"]["set_credit"] == "f1"
    (corpus_entry,) = doc["corpora"]
    assert corpus_entry["sha256"] == corpus.source.sha256 and corpus_entry["licence"] == "CC0-1.0"
    for row in doc["rows"]:
        assert (row["EM"], row["partial"], row["answered"], row["unanswered"]) == (1.0, 1.0, 1.0, 0)
        assert row["scored_on"] == "answer" and row["query_class"] == "aggregation"
    assert [r for r in doc["rows"] if r["rule"] == "all"][0]["n"] == n
    for floor in doc["floor_rows"]:
        assert (floor["EM"], floor["answered"], floor["unanswered"]) == (0.0, 0.0, floor["n"])
    assert len(doc["answers"]) == n and all(a["mechanism"].startswith("sql") for a in doc["answers"])
    md = (first / ANSWERS_MD).read_text()
    assert "| synthetic | A | aggregation | all | %d | 0 | 1.0000 | 1.0000 | 1.0000 |" % n in md
    assert "| synthetic | A | aggregation | all | %d | %d | 0.0000 | 0.0000 | 0.0000 |" % (n, n) in md
    assert "## Policy" in md and "none" in md
    info = json.loads((first / "runinfo.json").read_text())
    assert info["store"]["dialect"] == "sqlite" and info["elapsed_seconds"] > 0
    assert "elapsed" not in (first / ANSWERS_JSON).read_text()


def test_none_scores_zero_with_answered_zero(tmp_path, corpus_dir):
    out = tmp_path / "none"
    assert run_cli(tmp_path, corpus_dir, out, "--answerer", "none") == 0
    doc = json.loads((out / ANSWERS_JSON).read_text())
    for row in doc["rows"]:
        assert (row["EM"], row["partial"], row["answered"]) == (0.0, 0.0, 0.0)
        assert row["unanswered"] == row["n"]
    assert doc["rows"] == doc["floor_rows"]
    assert not (tmp_path / "cli.sqlite").exists()  # the none answerer needs no store


def test_the_policy_flags_reach_the_file(tmp_path, corpus_dir):
    out = tmp_path / "policy"
    assert run_cli(tmp_path, corpus_dir, out, "--answerer", "product",
                   "--answer-count-tolerance", "2", "--answer-set-credit", "exact") == 0
    doc = json.loads((out / ANSWERS_JSON).read_text())
    assert doc["policy"]["count_tolerance"] == 2 and doc["policy"]["set_credit"] == "exact"
    assert doc["answerer"]["is_production_path"] is True
    assert "count_tolerance`: 2" in (out / ANSWERS_MD).read_text()


def test_bad_flags_fail_before_anything_is_written(tmp_path, corpus_dir, capsys):
    out = tmp_path / "bad"
    assert run_cli(tmp_path, corpus_dir, out, "--answer-count-tolerance", "-1") == 2
    assert "non-negative" in capsys.readouterr().err and not out.exists()


def test_a_truncated_read_fails_the_run_and_keeps_the_previous_results(tmp_path, corpus_dir,
                                                                      capsys):
    out = tmp_path / "kept"
    assert run_cli(tmp_path, corpus_dir, out, "--answerer", "reference") == 0
    before = read(out)
    assert run_cli(tmp_path, corpus_dir, out, "--answerer", "reference", "--row-limit", "1") == 2
    assert "truncated" in capsys.readouterr().err
    assert read(out) == before


def test_an_interrupted_write_leaves_the_previous_directory(tmp_path, monkeypatch):
    from pathlib import Path

    from harness.evaluation.results import write_directory

    out = tmp_path / "res"
    write_directory(out, {"answers.json": "{}\n", "answers.md": "old\n"})
    real = Path.open
    calls = []

    def flaky(self, mode="r", *args, **kwargs):
        if "w" in mode:
            calls.append(self.name)
            if len(calls) == 2:
                raise KeyboardInterrupt
        return real(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", flaky)
    with pytest.raises(KeyboardInterrupt):
        write_directory(out, {"answers.json": "{\"new\": 1}\n", "answers.md": "new\n"})
    monkeypatch.undo()
    assert (out / "answers.md").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["res"]


def test_validation_catches_a_row_that_is_not_the_mean_of_its_answers(tmp_path, corpus_dir):
    out = tmp_path / "tamper"
    assert run_cli(tmp_path, corpus_dir, out, "--answerer", "reference") == 0
    doc = json.loads((out / ANSWERS_JSON).read_text())
    doc["answers"][0]["EM"] = 0.0
    with pytest.raises(FormatError, match=r"rows\[0\]\.EM"):
        validate_document(doc)
    doc = json.loads((out / ANSWERS_JSON).read_text())
    doc["rows"][0]["tier"] = "B"
    with pytest.raises(FormatError, match=r"rows\[0\]\.tier"):
        validate_document(doc)


def test_the_answers_are_ingested_with_a_message(tmp_path, corpus_dir, capsys):
    out = tmp_path / "wh"
    code = main(["answer", "--corpus", f"synthetic:{corpus_dir}", "--answerer", "none",
                 "--out", str(out), "--db", str(tmp_path / "w" / "warehouse.duckdb"),
                 "--no-progress"])
    assert code == 0 and (out / ANSWERS_JSON).is_file()
    printed = capsys.readouterr().out
    assert "ingested answers document" in printed


@pytest.mark.parametrize("answerer", ["reference", "product"])
def test_sqlite_and_postgresql_give_byte_identical_answers(tmp_path, corpus_dir, postgres,
                                                           answerer):
    lite, pg = tmp_path / "lite", tmp_path / "pg"
    assert run_cli(tmp_path, corpus_dir, lite, "--answerer", answerer) == 0
    url = postgres.create_database(f"answers_{answerer}")
    assert run_cli(tmp_path, corpus_dir, pg, "--answerer", answerer, store_url=url) == 0
    assert json.loads((pg / "runinfo.json").read_text())["store"]["dialect"] == "postgresql"
    assert read(lite) == read(pg)
    doc = json.loads((pg / ANSWERS_JSON).read_text())
    assert [r["EM"] for r in doc["rows"]] == [1.0] * len(doc["rows"])
