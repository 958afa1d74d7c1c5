"""``--out`` never destroys what a user owns (issue #16, "--out over an existing folder deletes it").

The review's repro: ``harness score --out ~/mydocs`` printed "wrote" and the thesis was gone.
A results directory replaces only an empty directory or one this product wrote that holds
nothing else; everything else is refused, naming what is there, and left byte for byte.
"""

from __future__ import annotations

import json
import os

import pytest

from harness.core.outputs import MARKER, OutputRefused
from harness.evaluation.results import write_directory
from tests.user_files import snapshot, users_folder


FILES = {"metrics.json": "{}\n", "metrics.md": "# m\n"}


def test_a_users_folder_is_refused_naming_what_is_there_and_kept(tmp_path):
    docs = users_folder(tmp_path)
    before = snapshot(tmp_path)
    with pytest.raises(OutputRefused) as err:
        write_directory(docs, FILES, {"command": "test"})
    message = str(err.value)
    assert str(docs) in message and "chapters/" in message and "thesis.tex" in message
    assert "did not write" in message
    assert snapshot(tmp_path) == before  # nothing touched, no staging or .old leftovers


def test_an_empty_directory_and_a_new_path_are_written(tmp_path):
    (tmp_path / "empty").mkdir()
    for name in ("empty", "new"):
        out = write_directory(tmp_path / name, FILES, {"command": "test"})
        assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, "runinfo.json", MARKER])
        marker = json.loads((out / MARKER).read_text())
        assert marker == {"files": sorted([*FILES, "runinfo.json"]),
                          "kind": "results-directory"}


def test_a_directory_this_product_wrote_is_replaced_whole(tmp_path):
    out = tmp_path / "r"
    write_directory(out, {**FILES, "rankings.jsonl": "x\n"}, {"command": "one"})
    (out / "intervals.json").write_text('{"kind": "intervals"}\n')  # harness intervals adds it
    write_directory(out, FILES, {"command": "two"})
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES, "runinfo.json", MARKER])
    assert json.loads((out / "runinfo.json").read_text())["command"] == "two"
    assert [p.name for p in tmp_path.iterdir()] == ["r"]


def test_a_results_directory_holding_a_users_file_is_refused(tmp_path):
    out = write_directory(tmp_path / "r", FILES, {"command": "one"})
    (out / "notes.txt").write_text("my notes\n")
    (out / "plots").mkdir()
    before = snapshot(tmp_path)
    with pytest.raises(OutputRefused, match=r"also holds notes\.txt, plots/, which this product "
                                            r"did not write there"):
        write_directory(out, FILES, {"command": "two"})
    assert snapshot(tmp_path) == before


def test_a_results_directory_written_before_the_marker_is_still_recognised(tmp_path):
    out = write_directory(tmp_path / "old", FILES, {"command": "one"})
    (out / MARKER).unlink()  # as every directory written before the marker existed
    write_directory(out, FILES, {"command": "two"})
    assert json.loads((out / "runinfo.json").read_text())["command"] == "two"
    # a runinfo.json alone (no host record) proves nothing
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "runinfo.json").write_text('{"command": "mine"}')
    with pytest.raises(OutputRefused, match="did not write"):
        write_directory(fake, FILES, {"command": "two"})


def test_an_existing_file_is_refused_not_hidden_as_old(tmp_path):
    target = tmp_path / "report.pdf"
    target.write_bytes(b"%PDF-1.7 my report")
    with pytest.raises(OutputRefused, match=r"is a file \(18 bytes\)"):
        write_directory(target, FILES, {"command": "test"})
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]
    assert target.read_bytes() == b"%PDF-1.7 my report"


def test_the_working_directory_and_its_parents_are_refused(tmp_path, monkeypatch):
    docs = users_folder(tmp_path)
    monkeypatch.chdir(docs)
    before = snapshot(tmp_path)
    for out in (".", "..", "chapters/..", str(docs)):
        with pytest.raises(OutputRefused, match="is the current directory"):
            write_directory(out, FILES, {"command": "test"})
    assert snapshot(tmp_path) == before
    # even an empty working directory: replacing it would leave the shell in a deleted folder
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    with pytest.raises(OutputRefused, match="is the current directory"):
        write_directory(".", FILES, {"command": "test"})
    assert empty.is_dir() and not any(empty.iterdir())


def test_a_symbolic_link_and_a_path_below_a_file_are_refused(tmp_path):
    real = write_directory(tmp_path / "real", FILES, {"command": "one"})
    link = tmp_path / "link"
    link.symlink_to(real, target_is_directory=True)
    with pytest.raises(OutputRefused, match="is a symbolic link"):
        write_directory(link, FILES, {"command": "two"})
    assert link.is_symlink() and json.loads((real / "runinfo.json").read_text())["command"] == "one"
    (tmp_path / "afile").write_text("x")
    with pytest.raises(OutputRefused, match="is not a directory"):
        write_directory(tmp_path / "afile" / "r", FILES, {"command": "test"})


def test_a_refusal_is_exit_2_from_every_results_writing_command(tmp_path, capsys):
    from harness.cli import main
    from tests.harness.cli.helpers import make_inputs

    qrels, run, _ = make_inputs(tmp_path)
    docs = users_folder(tmp_path / "home")
    before = snapshot(tmp_path / "home")
    code = main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(docs),
                 "--no-warehouse"])
    err = capsys.readouterr()
    assert code == 2 and "wrote" not in err.out
    assert f"error: --out {docs}: holds 2 entries this product did not write " \
           "(chapters/, thesis.tex)" in err.err
    assert "Traceback" not in err.err
    assert snapshot(tmp_path / "home") == before
    # the same command into a new directory, then again over its own output: fine
    out = tmp_path / "results" / "toy"
    for _ in range(2):
        assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                     "--no-warehouse"]) == 0
    assert (out / "metrics.json").is_file() and (out / MARKER).is_file()


def test_a_claim_document_replaces_only_its_own_kind(tmp_path):
    from harness.claims import write_claim as write_document

    doc = {"kind": "intervals", "schema_version": 1, "run_id": "0" * 64, "confidence": 0.95,
           "rows": []}
    target = tmp_path / "intervals.json"
    write_document(target, doc)
    write_document(target, {**doc, "confidence": 0.9})  # its own kind: replaced
    assert json.loads(target.read_text())["confidence"] == 0.9
    for text in ("my own notes\n", '{"kind": "agreement"}\n', "[1, 2]\n"):
        target.write_text(text)
        with pytest.raises(OutputRefused, match="is not an intervals document written by this "
                                                "product"):
            write_document(target, doc)
        assert target.read_text() == text
    target.unlink()
    target.mkdir()
    with pytest.raises(OutputRefused, match=r"is a directory \(is empty\), not a file"):
        write_document(target, doc)
    assert [p.name for p in tmp_path.iterdir()] == ["intervals.json"]
    empty = tmp_path / "empty.json"
    empty.touch()  # an empty file (mktemp) is nobody's work
    write_document(empty, doc)
    assert json.loads(empty.read_text())["kind"] == "intervals"


def test_a_document_over_an_input_is_refused(tmp_path):
    from harness.core.outputs import is_document, write_file

    def write_document(path, doc, inputs):
        write_file(path, json.dumps(doc), recognise=is_document(doc["kind"]),
                   what="gate document", inputs=inputs)

    judge = tmp_path / "judge.jsonl"
    judge.write_text('{"kind": "gate"}\n')  # even one that looks like the output
    with pytest.raises(OutputRefused, match=r"is also an input of this command \(--judge"):
        write_document(judge, {"kind": "gate"}, inputs=[("--judge", judge)])
    hard = tmp_path / "hard.json"
    os.link(judge, hard)  # the same file under another name
    with pytest.raises(OutputRefused, match="is also an input"):
        write_document(hard, {"kind": "gate"}, inputs=[("--judge", judge)])
    assert judge.read_text() == '{"kind": "gate"}\n'
