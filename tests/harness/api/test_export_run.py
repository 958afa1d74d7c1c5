"""``python -m harness export-run``: the refusals, the sidecar, and the limits it states."""

from __future__ import annotations

import json

import pytest

from harness.cli import main

from tests.harness.api.helpers import TOY


def score(out, qrels, run, *extra) -> None:
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                 "--no-warehouse", *map(str, extra)]) == 0


@pytest.fixture()
def toy(tmp_path):
    score(tmp_path / "toy", TOY / "qrels.txt", TOY / "run.txt", "--corpus-name", "toy",
          "--licence", "CC0-1.0")
    return tmp_path / "toy"


def test_the_run_and_its_sidecar(tmp_path, toy, capsys):
    out = tmp_path / "out" / "toy.run"
    assert main(["export-run", str(toy), "--out", str(out)]) == 0
    # q1's tie resolved as scored: chunk 3 before chunk 4; q4 was not answered
    assert out.read_text().splitlines()[:2] == ["q1 Q0 ES2006a_3 1 0.9 toy", "q1 Q0 ES2006a_4 2 0.9 toy"]
    assert len(out.read_text().splitlines()) == 8
    side = json.loads((tmp_path / "out" / "toy.run.provenance.json").read_text())
    metrics = json.loads((toy / "metrics.json").read_text())
    run_id = json.loads((toy / "runinfo.json").read_text())["run_id"]
    assert side["run"] == {"control_name": "toy", "run_id": run_id}
    assert side["corpora"] == [{"name": "toy", "licence": "CC0-1.0", "tier": "A"}]
    assert side["relevance_policy"] == metrics["relevance_policy"]
    assert (side["queries"], side["lines"], side["score_flags"], side["notes"]) == (3, 8, [], [])
    import hashlib
    assert side["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    assert "wrote" in capsys.readouterr().out


def test_an_existing_file_is_refused_unless_forced(tmp_path, toy, capsys):
    out = tmp_path / "notes.txt"
    out.write_text("my notes\n")
    assert main(["export-run", str(toy), "--out", str(out)]) == 2
    assert capsys.readouterr().err == (f"error: {out}: exists; refusing to overwrite it "
                                       "(give --force to replace it)\n")
    assert out.read_text() == "my notes\n"
    assert not (tmp_path / "notes.txt.provenance.json").exists()
    assert main(["export-run", str(toy), "--out", str(out), "--force"]) == 0
    assert out.read_text().startswith("q1 Q0 ES2006a_3 1 0.9 toy")
    assert main(["export-run", str(toy), "--out", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _directory_bytes(directory):
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir())}


@pytest.mark.parametrize("flags, name", [
    (["--format", "trec"], "rankings.jsonl"),
    (["--format", "jsonl"], "rankings.jsonl"),
    (["--format", "trec", "--qrels"], "qrels.jsonl"),
    (["--format", "jsonl"], "metrics.json"),
    (["--format", "jsonl"], "per_query.jsonl"),
])
def test_an_input_is_refused_whatever_force_says(toy, capsys, flags, name):
    before = _directory_bytes(toy)
    assert main(["export-run", str(toy), *flags, "--force", "--out", str(toy / name)]) == 2
    err = capsys.readouterr().err
    assert f"--out {toy / name}: is also an input of this command" in err
    assert _directory_bytes(toy) == before  # nothing written, no sidecar either


@pytest.mark.parametrize("link", ["symlink", "hardlink"])
def test_a_link_to_an_input_is_refused_too(tmp_path, toy, capsys, link):
    out = tmp_path / "elsewhere.run"
    (out.symlink_to if link == "symlink" else out.hardlink_to)(toy / "rankings.jsonl")
    before = _directory_bytes(toy)
    assert main(["export-run", str(toy), "--force", "--out", str(out)]) == 2
    assert "is also an input of this command" in capsys.readouterr().err
    assert _directory_bytes(toy) == before


def test_a_changed_rankings_file_is_refused(tmp_path, toy, capsys):
    path = toy / "rankings.jsonl"
    path.write_text(path.read_text().replace("ES2006a_3", "ES2006a_9"))
    assert main(["export-run", str(toy), "--out", str(tmp_path / "r.txt")]) == 2
    assert "rankings.jsonl does not match its pinned sha256" in capsys.readouterr().err
    assert not (tmp_path / "r.txt").exists()


def test_a_directory_without_qrels_says_why(tmp_path, toy, capsys):
    (toy / "qrels.jsonl").unlink()
    assert main(["export-run", str(toy), "--qrels", "--out", str(tmp_path / "q.txt")]) == 2
    assert (f"{toy / 'qrels.jsonl'}: no such file (results directories written before"
            in capsys.readouterr().err)


def test_ids_a_trec_file_cannot_hold_need_jsonl(tmp_path, capsys):
    (tmp_path / "run.jsonl").write_text('{"query_id": "q 1", "doc_id": "d1", "score": 1.0}\n')
    (tmp_path / "qrels.jsonl").write_text('{"query_id": "q 1", "doc_id": "d1", "relevance": 1}\n')
    score(tmp_path / "arm", tmp_path / "qrels.jsonl", tmp_path / "run.jsonl")
    assert main(["export-run", str(tmp_path / "arm"), "--out", str(tmp_path / "r.txt")]) == 2
    assert "field 'query_id': query_id 'q 1' cannot be written to a TREC file" in capsys.readouterr().err
    assert main(["export-run", str(tmp_path / "arm"), "--format", "jsonl",
                 "--out", str(tmp_path / "r.jsonl")]) == 0
    assert json.loads((tmp_path / "r.jsonl").read_text()) == {"query_id": "q 1", "doc_id": "d1", "rank": 1,
                                                              "score": 1.0}


def test_ties_made_by_the_stored_decimals_are_named_and_preserve_order_reproduces(tmp_path, caplog):
    """b_1 outscores a_1 by 1e-11: scored in that order, stored as a tie at 0.5, which a
    re-score by score would put the other way round (a_1 first: file a before file b)."""
    (tmp_path / "run.txt").write_text("q1 Q0 b_1 1 0.50000000001 x\nq1 Q0 a_1 2 0.5 x\n")
    (tmp_path / "qrels.txt").write_text("q1 0 b_1 1\n")
    score(tmp_path / "arm", tmp_path / "qrels.txt", tmp_path / "run.txt", "--corpus-name", "c")
    assert main(["export-run", str(tmp_path / "arm"), "--out", str(tmp_path / "r.txt")]) == 0
    assert main(["export-run", str(tmp_path / "arm"), "--qrels", "--out", str(tmp_path / "q.txt")]) == 0
    side = json.loads((tmp_path / "r.txt.provenance.json").read_text())
    assert side["reordered_on_rescore"] == ["q1"]
    assert "re-score with --preserve-order" in caplog.text
    score(tmp_path / "by-score", tmp_path / "q.txt", tmp_path / "r.txt", "--corpus-name", "c")
    score(tmp_path / "in-order", tmp_path / "q.txt", tmp_path / "r.txt", "--corpus-name", "c",
          "--preserve-order")
    rows = {name: json.loads((tmp_path / name / "metrics.json").read_text())["rows"]
            for name in ("arm", "by-score", "in-order")}
    assert rows["arm"][0]["metrics"]["MRR"] == 1.0
    assert rows["by-score"][0]["metrics"]["MRR"] == 0.5  # the limit the sidecar names
    assert rows["in-order"] == rows["arm"]


def test_lists_cut_at_keep_rankings_are_counted(tmp_path, caplog):
    score(tmp_path / "arm", TOY / "qrels.txt", TOY / "run.txt", "--keep-rankings", "2")
    assert main(["export-run", str(tmp_path / "arm"), "--out", str(tmp_path / "r.txt")]) == 0
    side = json.loads((tmp_path / "r.txt.provenance.json").read_text())
    # q1 and q2 held 3 documents, q3 held 2: all three are at the cut
    assert (side["rankings_kept"], side["queries_at_cut"], side["lines"]) == (2, 3, 6)
    assert "measures deeper than rank 2 can differ" in caplog.text


def test_a_tier_b_export_is_flagged_and_a_preserve_order_run_says_so(tmp_path, caplog, capsys):
    score(tmp_path / "arm", TOY / "qrels.txt", TOY / "run.txt", "--preserve-order", "--binary-relevance")
    assert main(["export-run", str(tmp_path / "arm"), "--out", str(tmp_path / "r.txt")]) == 0
    side = json.loads((tmp_path / "r.txt.provenance.json").read_text())
    assert side["tier"] == "B" and side["score_flags"] == ["--preserve-order", "--binary-relevance"]
    assert side["reordered_on_rescore"] == []
    assert "tier B data: internal only" in caplog.text
    assert "re-score with: --preserve-order --binary-relevance" in capsys.readouterr().out
    # the file order is the scored order (the rank column of the input), not the score order
    assert (tmp_path / "r.txt").read_text().splitlines()[0] == "q1 Q0 ES2006a_4 1 0.9 arm"


def test_an_unknown_corpus_lists_the_known_ones(toy, tmp_path, capsys):
    assert main(["export-run", str(toy), "--corpus", "nope", "--out", str(tmp_path / "r.txt")]) == 2
    assert "--corpus 'nope': not a corpus of" in capsys.readouterr().err
