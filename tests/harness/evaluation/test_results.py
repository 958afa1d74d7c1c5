"""harness.evaluation.results: the results directory is written whole or not at all, and validated."""

from __future__ import annotations

import copy
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.formats import FormatError
from harness.claims.metrics import METRICS_JSON, run_id, validate_metrics
from harness.core.atomic import recover_stale
from harness.evaluation.results import load_metrics, load_per_query, write_results


PIN = "0" * 64


def metrics(value: float = 0.5) -> dict:
    """A claim as a writer hands it over (no pins, no schema version: the writer adds both)."""
    return {
        "control_name": "ctl",
        "corpora": [
            {"name": "a", "version": "1", "licence": "MIT", "tier": "A", "sha256": "x", "files": 1,
             "chunks": 2, "evidence": "licence MIT declared (test)"},
            {"name": "b", "version": "1", "licence": "unknown", "tier": "B", "sha256": "y", "files": 1,
             "chunks": 2},
        ],
        "index": None,
        "retrieval": {},
        "metric_engine": {"name": "pytrec_eval_terrier", "version": "0.5.10"},
        "relevance_policy": {"binary": False},
        "rows": [
            {"corpus": "a", "tier": "A", "query_class": "all", "n": 2, "metrics": {"MRR": value},
             "queries_unanswered": 1, "queries_dropped_unjudgeable": 0},
            {"corpus": "a+b", "tier": "B", "query_class": "all", "n": 3, "metrics": {"MRR": value},
             "queries_unanswered": 1, "queries_dropped_unjudgeable": 0},
        ],
    }


def written(value: float = 0.5) -> dict:
    """The claim as it is on disk: schema version 2 and the pin of its per_query.jsonl."""
    from harness.core.canonical import canonical_line, sha256_text

    row = {"corpus": "a", "tier": "A", "query_class": None, "query_id": "q", "measure": "MRR",
           "value": value}
    return {**metrics(value), "schema_version": 2,
            "files": {"per_query.jsonl": sha256_text(canonical_line(row) + "\n")}}


def write(out, value=0.5, **kwargs):
    return write_results(out, metrics(value), metrics_md=f"# {value}\n",
                         per_query=[{"corpus": "a", "tier": "A", "query_class": None, "query_id": "q",
                                     "measure": "MRR", "value": value}], **kwargs)


def listing(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.iterdir())}


def test_write_and_read_back(tmp_path):
    out = write(tmp_path / "run", runinfo={"elapsed_seconds": 1.5})
    assert sorted(p.name for p in out.iterdir()) == [
        ".harness-output.json", "metrics.json", "metrics.md", "per_query.jsonl", "runinfo.json"]
    assert load_metrics(out) == written()  # the pin is the sha256 of the file's own bytes
    assert load_per_query(out)[0]["value"] == 0.5
    info = json.loads((out / "runinfo.json").read_text())
    assert info["run_id"] == run_id(written()) and info["elapsed_seconds"] == 1.5 and "host" in info
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no staging left behind


def test_an_exception_mid_write_leaves_the_previous_directory_intact(tmp_path, monkeypatch):
    out = write(tmp_path / "run", 0.5)
    before = listing(out)
    calls = {"n": 0}
    real = Path.open

    def failing(self, mode="r", *args, **kwargs):
        if "w" in mode:
            calls["n"] += 1
            if calls["n"] == 2:  # the first file is written, the second (per_query.jsonl) not
                raise OSError("disk full")
        return real(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", failing)
    from harness.core.outputs import OutputFailed

    # a located refusal (exit 2 from the CLI) naming the directory and the file
    with pytest.raises(OutputFailed, match=rf"--out {out}: cannot write per_query.jsonl \(disk "
                                           r"full\); nothing was written"):
        write(out, 0.75)
    monkeypatch.undo()
    assert listing(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def test_an_interrupt_during_the_swap_restores_the_previous_directory(tmp_path, monkeypatch):
    out = write(tmp_path / "run", 0.5)
    before = listing(out)
    real = os.replace
    raised = []

    def interrupted(src, dst):
        if Path(dst) == out and not raised:  # the new directory is about to be renamed in
            raised.append(src)
            raise KeyboardInterrupt
        return real(src, dst)

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write(out, 0.75)
    monkeypatch.undo()
    assert ".run.staging-" in Path(raised[0]).name
    assert listing(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["run"]


def dead_pid() -> int:
    proc = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(proc.stdout)


def test_stale_staging_of_a_dead_writer_is_removed_live_ones_kept(tmp_path):
    out = write(tmp_path / "run", 0.5)
    dead, live = dead_pid(), os.getppid()
    stale = tmp_path / f".run.staging-{dead}-abcd"
    busy = tmp_path / f".run.staging-{live}-abcd"
    other = tmp_path / f".runs.staging-{dead}-abcd"  # another directory's leftovers
    for path in (stale, busy, other):
        path.mkdir()
        (path / "metrics.json").write_text("{}")
    write(out, 0.75)
    assert not stale.exists() and busy.exists() and other.exists()
    assert load_metrics(out)["rows"][0]["metrics"] == {"MRR": 0.75}


def test_a_writer_killed_mid_swap_gets_its_previous_result_back(tmp_path):
    out = write(tmp_path / "run", 0.5)
    before = listing(out)
    old = tmp_path / f".run.old-{dead_pid()}-abcd"
    os.replace(out, old)  # what a writer killed between its two renames leaves
    recover_stale(out)
    assert listing(out) == before and not old.exists()


def test_two_runs_are_byte_identical_apart_from_runinfo(tmp_path):
    a = listing(write(tmp_path / "a" / "run", runinfo={"elapsed_seconds": 1.0}))
    b = listing(write(tmp_path / "b" / "run", runinfo={"elapsed_seconds": 2.0}))
    assert a.pop("runinfo.json") != b.pop("runinfo.json")
    assert a == b


def test_reserved_extra_file_names_are_refused(tmp_path):
    for name in ("metrics.json", "runinfo.json", "../x", ".hidden"):
        with pytest.raises(ValueError, match="reserved or not a plain name"):
            write(tmp_path / "run", extra_files={name: "x"})
    assert not (tmp_path / "run").exists()


# --------------------------------------------------------------------------- validation


def broken(edit) -> dict:
    doc = copy.deepcopy({**metrics(), "schema_version": 2, "files": {"per_query.jsonl": PIN}})
    edit(doc)
    return doc


@pytest.mark.parametrize("edit, field, words", [
    (lambda d: d.pop("metric_engine"), "metric_engine", "missing"),
    (lambda d: d.pop("rows"), "rows", "missing"),
    (lambda d: d.update(schema_version=3), "schema_version", "unsupported"),
    (lambda d: d.update(schema_version=1), "schema_version", "did not pin"),
    (lambda d: d.pop("files"), "files", "missing"),
    (lambda d: d["files"].pop("per_query.jsonl"), "files.per_query.jsonl", "missing"),
    (lambda d: d["files"].update({"per_query.jsonl": "x"}), "files.per_query.jsonl", "sha256"),
    (lambda d: d["files"].update({"notes.txt": PIN}), "files.notes.txt", "not a file the claim pins"),
    (lambda d: d["corpora"][0].pop("sha256"), "corpora[0].sha256", "missing"),
    (lambda d: d["corpora"][1].update(tier="D"), "corpora[1].tier", "unknown licence tier 'D'"),
    (lambda d: d["corpora"][1].update(name="a"), "corpora[1].name", "listed twice"),
    (lambda d: d["corpora"][1].update(name="x+y"), "corpora[1].name", "without '+'"),
    (lambda d: d["rows"][0].pop("queries_unanswered"), "rows[0].queries_unanswered", "missing"),
    (lambda d: d["rows"][0]["metrics"].update(MRR=math.nan), "rows[0].metrics.MRR", "not a finite number"),
    (lambda d: d["rows"][0]["metrics"].update(MRR=math.inf), "rows[0].metrics.MRR", "not a finite number"),
    (lambda d: d["rows"][0]["metrics"].update(MRR="0.5"), "rows[0].metrics.MRR", "not a finite number"),
    (lambda d: d["rows"][0].update(tier="Z"), "rows[0].tier", "unknown licence tier 'Z'"),
    (lambda d: d["rows"][0].update(tier="B"), "rows[0].tier", "expected A"),
    (lambda d: d["rows"][1].update(tier="A"), "rows[1].tier",
     "expected B, the most restrictive tier of ['a', 'b']"),
    (lambda d: d["rows"][0].update(corpus="zz"), "rows[0].corpus", "not listed in corpora"),
    (lambda d: d["rows"][0].update(n=-1), "rows[0].n", "non-negative integer"),
    (lambda d: d["rows"][0].update(queries_unanswered=5), "rows[0].queries_unanswered",
     "unanswered of only 2"),
    (lambda d: d["metric_engine"].pop("version"), "metric_engine", "name the engine and its version"),
])
def test_validate_refuses(edit, field, words):
    with pytest.raises(FormatError) as info:
        validate_metrics(broken(edit), source="x/metrics.json")
    assert info.value.field == field
    assert str(info.value).startswith(f"x/metrics.json: field '{field}'")
    assert words in str(info.value)


def test_an_invalid_claim_is_never_written(tmp_path):
    out = write(tmp_path / "run", 0.5)
    before = listing(out)
    with pytest.raises(FormatError):
        write_results(out, broken(lambda d: d["rows"][1].update(tier="A")), metrics_md="")
    assert listing(out) == before


def test_load_metrics_refuses_nan_on_disk(tmp_path):
    out = write(tmp_path / "run", 0.5)
    text = (out / METRICS_JSON).read_text().replace('"MRR": 0.5', '"MRR": NaN', 1)
    (out / METRICS_JSON).write_text(text)
    with pytest.raises(FormatError, match=r"rows\[0\].metrics.MRR"):
        load_metrics(out)
