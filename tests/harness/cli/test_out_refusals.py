"""Every command that writes a directory or an output file refuses to replace what a user owns.

Issue #16: ``--out`` over an existing folder deleted it (score, bench); the same held for
intervals, calibrate, migrate, answer and the gate, ppi and agreement outputs.  Each command
here is pointed at a user's folder or file and must exit 2 with one located message, before
doing any work, leaving every byte in place.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from ingestion.cli import main as ingestion_main
from tests.user_files import snapshot, users_folder
from tests.warehouse.builders import simple_run


def refused(capsys, argv, home: Path, *, run=main) -> str:
    before = snapshot(home)
    code = run(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.startswith("error: ") and err.count("\n") == 1, err
    assert snapshot(home) == before
    return err


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    users_folder(home)
    (home / "report.pdf").write_bytes(b"%PDF-1.7 a report")
    return home


# a corpus or run that does not exist: the refusal must come before anything is read
NOWHERE = "synthetic:/nonexistent/corpus"

DIRECTORY_COMMANDS = {
    "bench": ["bench", "--corpus", NOWHERE, "--mode", "bm25", "--no-warehouse", "--out"],
    "answer": ["answer", "--corpus", NOWHERE, "--answerer", "none", "--no-warehouse", "--out"],
    "migrate": ["migrate", "--old", "minilm", "--new", "minilm-static-256", "--corpus", NOWHERE,
                "--no-warehouse", "--out"],
}


@pytest.mark.parametrize("command", sorted(DIRECTORY_COMMANDS))
def test_directory_commands_refuse_a_users_folder_a_file_and_the_working_directory(
        command, home, capsys, monkeypatch):
    argv = DIRECTORY_COMMANDS[command]
    err = refused(capsys, [*argv, str(home / "mydocs")], home)
    assert f"--out {home / 'mydocs'}: holds 2 entries this product did not write" in err
    err = refused(capsys, [*argv, str(home / "report.pdf")], home)
    assert "is a file (17 bytes), not a directory this product wrote" in err
    monkeypatch.chdir(home / "mydocs")
    err = refused(capsys, [*argv, "."], home)
    assert "is the current directory" in err


FILE_COMMANDS = {
    "calibrate": (["calibrate", "--run", "/nonexistent/run", "--out"], "certificate document"),
    "ppi": (["ppi", "--judge", "/nonexistent/judge.jsonl", "--out"], "ppi document"),
    "agreement": (["agreement", "--manifest", "/nonexistent/arms.json", "--out"],
                  "agreement document"),
    "bench --gate-out": (["bench", "--corpus", NOWHERE, "--mode", "bm25", "--gate", "point",
                          "--gate-threshold", "0.3", "--gate-out"], "gate document"),
}


@pytest.mark.parametrize("command", sorted(FILE_COMMANDS))
def test_document_outputs_refuse_a_users_file_and_a_directory(command, home, capsys):
    argv, what = FILE_COMMANDS[command]
    err = refused(capsys, [*argv, str(home / "mydocs" / "thesis.tex")], home)
    assert f"exists and is not {'an' if what[0] in 'aeiou' else 'a'} {what} written by this " \
           "product" in err
    err = refused(capsys, [*argv, str(home / "mydocs")], home)
    assert "is a directory (holds chapters/, thesis.tex), not a file" in err


def test_ppi_refuses_to_write_over_its_own_input(tmp_path, capsys):
    judge = tmp_path / "judge.jsonl"
    judge.write_text("".join(json.dumps({"item_id": f"i{i}", "score": 0.5}) + "\n"
                             for i in range(4)))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"item_id": "i0", "label": 1}) + "\n")
    for target in (judge, labels):
        err = refused(capsys, ["ppi", "--judge", str(judge), "--labels", str(labels),
                               "--out", str(target)], tmp_path)
        assert "is also an input of this command" in err


def test_intervals_checks_every_target_before_writing_any(tmp_path, capsys):
    a = simple_run(tmp_path / "a", control_name="a")
    b = simple_run(tmp_path / "b", control_name="b", offset=0.05)
    (b / "intervals.json").write_text("my hand-made intervals\n")
    err = refused(capsys, ["intervals", str(a), str(b), "--resamples", "200"], tmp_path)
    assert f"{b / 'intervals.json'}: exists and is not an intervals document" in err
    assert not (a / "intervals.json").exists()  # nothing written when any target is refused
    (b / "intervals.json").unlink()
    (b / "intervals.json").mkdir()
    err = refused(capsys, ["intervals", str(a), str(b), "--resamples", "200"], tmp_path)
    assert "is a directory (is empty), not a file" in err
    (b / "intervals.json").rmdir()
    assert main(["intervals", str(a), str(b), "--resamples", "200"]) == 0
    assert main(["intervals", str(a), str(b), "--resamples", "200"]) == 0  # its own: replaced
    assert json.loads((b / "intervals.json").read_text())["kind"] == "intervals"


def test_synth_replaces_only_an_earlier_corpus_holding_nothing_else(tmp_path, home, capsys):
    err = refused(capsys, ["synth", "--seed", "1", "--meetings", "4", "--out",
                           str(home / "mydocs")], home, run=ingestion_main)
    assert "holds 2 entries this product did not write" in err
    out = tmp_path / "corpus"
    assert ingestion_main(["synth", "--seed", "1", "--meetings", "4", "--out", str(out)]) == 0
    assert ingestion_main(["synth", "--seed", "2", "--meetings", "4", "--out", str(out)]) == 0
    (out / "meetings" / "my-notes.txt").write_text("notes\n")
    err = refused(capsys, ["synth", "--seed", "1", "--meetings", "4", "--out", str(out)],
                  tmp_path, run=ingestion_main)
    assert "is a synthetic corpus, but it also holds my-notes.txt" in err
    assert json.loads((out / "manifest.json").read_text())["seed"] == 2


def test_a_step_summary_is_appended_to_a_file_never_to_a_directory(tmp_path, home, capsys):
    run = simple_run(tmp_path / "r", control_name="r")
    gate = ["gate", "--results", str(run), "--measure", "nDCG@10", "--threshold", "0.1"]
    err = refused(capsys, [*gate, "--summary", str(home / "mydocs")], home)
    assert f"--summary {home / 'mydocs'}: is a directory" in err
    summary = home / "mydocs" / "thesis.tex"
    before = summary.read_text()
    assert main([*gate, "--summary", str(summary)]) == 0
    assert summary.read_text().startswith(before) and "gate `point`" in summary.read_text()
