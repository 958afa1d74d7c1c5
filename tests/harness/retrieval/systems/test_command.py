"""``--backend command`` faults: a program that crashes is restarted a bounded number of
times, one that prints garbage or hangs fails the run naming the query."""

from __future__ import annotations

import json

from .conftest import bench, command_args, write_rankings


def test_a_crashing_program_is_restarted_and_the_results_are_unchanged(
        tmp_path, synthetic, rankings, embedded):
    table = write_rankings(rankings, tmp_path / "rankings.json")
    state = tmp_path / "answered.txt"
    # each process answers 20 queries and dies on the 21st: 48 queries need 2 restarts
    assert bench(synthetic, *command_args(table, "--http-concurrency", "1",
                                          script_args=("--crash-after", "20",
                                                       "--state", str(state))),
                 "--out", str(tmp_path / "out")) == 0
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["rows"] == \
        json.loads((embedded / "metrics.json").read_text())["rows"]
    runinfo = json.loads((tmp_path / "out" / "runinfo.json").read_text())["backend"]
    assert runinfo["restarts"] == 2 and runinfo["retries"] == 2
    assert len(state.read_text().split()) == 48


def _failed(tmp_path, synthetic, rankings, capsys, *flags, script_args=()) -> str:
    """A bench over the stand-in program that must fail cleanly: exit 5, nothing written;
    returns what it printed on stderr."""
    table = write_rankings(rankings, tmp_path / "rankings.json")
    code = bench(synthetic, *command_args(table, *flags, script_args=script_args),
                 "--out", str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 5, err
    assert not (tmp_path / "out").exists()
    assert "Traceback" not in err
    return err


def test_restarts_are_bounded_then_the_run_fails_cleanly(tmp_path, synthetic, rankings,
                                                         capsys):
    err = _failed(tmp_path, synthetic, rankings, capsys, "--http-concurrency", "1",
                  "--command-restarts", "2", script_args=("--crash-after", "5"))
    assert "restarts are capped at 2 (--command-restarts)" in err
    assert "the command exited (code 3)" in err


def test_a_program_that_prints_garbage_fails_naming_the_query(tmp_path, synthetic, rankings,
                                                             capsys):
    bad = sorted(rankings)[4]
    err = _failed(tmp_path, synthetic, rankings, capsys, script_args=("--garbage-at", bad))
    assert f"query {bad}: the command's answer is not JSON" in err
    assert "starts 'this is not json'" in err


def test_a_program_that_hangs_is_killed_and_the_run_fails(tmp_path, synthetic, rankings,
                                                          capsys):
    stuck = sorted(rankings)[1]
    err = _failed(tmp_path, synthetic, rankings, capsys, "--http-concurrency", "1",
                  "--http-timeout", "0.5", "--http-retries", "1",
                  script_args=("--hang-at", stuck))
    assert f"query {stuck}: no answer within 0.5 s (after 2 attempts" in err


def test_a_per_query_program_that_crashes_fails_naming_the_query(tmp_path, synthetic,
                                                                 rankings, capsys):
    err = _failed(tmp_path, synthetic, rankings, capsys, "--command-mode", "per-query",
                  "--http-retries", "1", script_args=("--crash-after", "0"))
    assert "the command exited with code 3" in err and "query syn-" in err


def test_a_program_that_cannot_start_fails_cleanly(tmp_path, synthetic, capsys):
    code = bench(synthetic, "--backend", "command", "--command", str(tmp_path / "absent"),
                 "--out", str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 5 and "cannot start" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
