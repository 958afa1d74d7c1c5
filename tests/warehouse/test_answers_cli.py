"""``python -m harness answer`` ingests its answers.json into the warehouse (kind
``answers``), once; and the demo's answers step reruns only what changed."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from warehouse import connect, queries

SEED = 11
MEETINGS = 30


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from ingestion import load_corpus
    from ingestion.synthetic import generate

    out = generate(SEED, MEETINGS, tmp_path_factory.mktemp("answers-cli") / "synthetic")
    corpus = load_corpus(f"synthetic:{out}")
    gold = sum(1 for q in corpus.queries if q.scored_on == "answer")
    return out, corpus.name, corpus.source.sha256, gold


def answer(synthetic_dir, out, db, answerer, *extra) -> int:
    return main(["answer", "--corpus", f"synthetic:{synthetic_dir}", "--answerer", answerer,
                 "--out", str(out), "--db", str(db), "--no-progress", *extra])


def test_harness_answer_ingests_into_the_warehouse_once(tmp_path, synthetic, capsys):
    corpus_dir, name, _, gold = synthetic
    db = tmp_path / "w.duckdb"
    assert answer(corpus_dir, tmp_path / "ref", db, "reference") == 0
    assert "ingested answers document" in capsys.readouterr().out
    # the transcript store defaults to a file beside the warehouse
    assert (tmp_path / "transcripts.sqlite").is_file()
    assert answer(corpus_dir, tmp_path / "none", db, "none") == 0
    capsys.readouterr()

    table = queries.answer_table("publishable", db_path=db)
    ref = table[(table.answerer == "reference") & (table.rule == "all")].iloc[0]
    none = table[(table.answerer == "none") & (table.rule == "all")].iloc[0]
    assert (ref.corpus, ref.tier, ref.n, ref.unanswered) == (name, "A", gold, 0)
    # the synthetic corpus's gold is answered exactly by the reference; the floor beside it
    # and the none run itself score 0 with nothing answered
    assert (ref.em, ref.partial, ref.answered_share) == (1.0, 1.0, 1.0)
    assert (ref.floor_em, ref.floor_answered_share, ref.floor_unanswered) == (0.0, 0.0, gold)
    assert (none.em, none.answered_share, none.unanswered) == (0.0, 0.0, gold)
    runs = queries.answer_runs("publishable", db_path=db)
    assert sorted(runs.answerer) == ["none", "reference"]
    details = queries.answer_details(runs[runs.answerer == "none"].iloc[0].document_id,
                                     "publishable", db_path=db)
    assert len(details) == gold and details.predicted.isna().all()

    # the same answers again: byte-identical document, nothing new in the warehouse
    assert answer(corpus_dir, tmp_path / "ref-again", db, "reference") == 0
    assert "already in" in capsys.readouterr().out
    with connect(db, read_only=True) as conn:
        assert conn.query_one("SELECT count(*) FROM answer_runs")[0] == 2
        assert conn.query_one("SELECT count(*) FROM documents WHERE kind = 'answers'")[0] == 2


def test_no_warehouse_writes_no_warehouse(tmp_path, synthetic, capsys):
    corpus_dir = synthetic[0]
    db = tmp_path / "w.duckdb"
    assert answer(corpus_dir, tmp_path / "none", db, "none", "--no-warehouse") == 0
    assert (tmp_path / "none" / "answers.json").is_file()
    assert not db.exists()
    assert "ingested" not in capsys.readouterr().out


def test_a_busy_warehouse_keeps_the_results_and_prints_the_retry(tmp_path, synthetic, capsys,
                                                                 monkeypatch):
    import warehouse.db
    from harness.cli.ingest import NOT_INGESTED
    from warehouse import migrate

    corpus_dir = synthetic[0]
    db = tmp_path / "w.duckdb"
    migrate(db)
    monkeypatch.setattr(warehouse.db, "WRITE_TIMEOUT_SECONDS", 0.2)
    with warehouse.db.connect(db, read_only=True):  # a reader holds the file
        with pytest.raises(SystemExit) as stopped:
            answer(corpus_dir, tmp_path / "none", db, "none")
    assert stopped.value.code == NOT_INGESTED
    assert (tmp_path / "none" / "answers.json").is_file()
    err = capsys.readouterr().err
    assert f"python -m warehouse ingest {tmp_path / 'none' / 'answers.json'}" in err


def test_the_demo_answers_step_skips_unchanged_runs(tmp_path, synthetic, capsys, monkeypatch):
    from harness.cli.demo import ANSWER_RUNS, STAMP, answers, code_digest

    corpus_dir, _, sha256, _ = synthetic
    store = tmp_path / "transcripts.sqlite"
    docs, ran = answers(tmp_path / "r", corpus_dir, sha256, store, force=False)
    assert ran == list(ANSWER_RUNS)
    assert [json.loads(p.read_text())["answerer"]["name"] for p in docs] == list(ANSWER_RUNS)
    first = {p: p.read_bytes() for p in docs}
    assert json.loads((docs[0].parent / STAMP).read_text()) == {
        "answerer": ANSWER_RUNS[0], "corpus": sha256, "code": code_digest()}
    _, ran = answers(tmp_path / "r", corpus_dir, sha256, store, force=False)
    assert ran == []
    # another corpus checksum (or --force) runs them again, to the same bytes
    _, ran = answers(tmp_path / "r", corpus_dir, "1" * 64, store, force=False)
    assert ran == list(ANSWER_RUNS)
    _, ran = answers(tmp_path / "r", corpus_dir, "1" * 64, store, force=True)
    assert ran == list(ANSWER_RUNS)
    assert {p: p.read_bytes() for p in docs} == first
    # other harness code: a stored answer is not reused
    import harness.cli.demo as demo

    monkeypatch.setattr(demo, "code_digest", lambda: "0" * 64)
    _, ran = answers(tmp_path / "r", corpus_dir, "1" * 64, store, force=False)
    assert ran == list(ANSWER_RUNS)
