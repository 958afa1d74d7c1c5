"""Every resource a system under test controls is bounded: the time an answer takes (a
deadline per attempt, not per read), the bytes an answer holds (HTTP bodies, command lines
and outputs) and the processes a command leaves behind.  Each failure is exit 5 with a
message naming the query and the bound, no traceback and no results directory."""

from __future__ import annotations

import json
import os
import sys
import time

import pytest

from .conftest import bench, command_args, http_args, write_rankings
from tests.harness.retrieval.hostile import HostileServer, drip, endless_chunks, huge


def _refused(tmp_path, capsys, code) -> str:
    err = capsys.readouterr().err
    assert code == 5, err
    assert "Traceback" not in err and not (tmp_path / "out").exists()
    return err


def test_a_dripping_server_is_cut_off_at_the_deadline(tmp_path, synthetic, capsys):
    """One byte every 0.5 s never trips a per-read timeout of 1 s; the 1 s deadline of the
    whole answer does (1000 bytes would take 500 s)."""
    with HostileServer(drip(0.5)) as server:
        started = time.monotonic()
        code = bench(synthetic, *http_args(server.url, "--http-timeout", "1",
                                           "--http-retries", "1", "--http-concurrency", "1"),
                     "--out", str(tmp_path / "out"))
        elapsed = time.monotonic() - started
        assert len(server.requests) == 2  # the first attempt and one retry, each cut off
    err = _refused(tmp_path, capsys, code)
    assert "no complete answer within 1 s (after 2 attempts" in err
    # two deadlines of 1 s, one backoff of at most 0.05 s, and the corpus load
    assert elapsed < 2 * 1 + 0.05 + 15


@pytest.mark.parametrize("script", [huge(10 ** 12), endless_chunks()],
                         ids=["declared-1TB", "endless-chunked"])
def test_an_answer_over_the_byte_cap_fails_the_run(tmp_path, synthetic, capsys, script):
    with HostileServer(script) as server:
        code = bench(synthetic, *http_args(server.url, "--max-response-bytes", "1M",
                                           "--http-concurrency", "1"),
                     "--out", str(tmp_path / "out"))
        requests = len(server.requests)
    err = _refused(tmp_path, capsys, code)
    assert "the answer is larger than 1048576 bytes (--max-response-bytes)" in err
    assert requests == 1  # not retried: a wrong answer


def test_the_byte_cap_flag_is_checked(tmp_path, synthetic, capsys):
    with pytest.raises(SystemExit) as exit_:
        bench(synthetic, *http_args("http://127.0.0.1:9", "--max-response-bytes", "lots"),
              "--out", str(tmp_path / "out"))
    assert exit_.value.code == 2
    assert "--max-response-bytes" in capsys.readouterr().err


def _program(tmp_path, body: str) -> str:
    script = tmp_path / "program.py"
    script.write_text("import json, os, subprocess, sys, time\n" + body, encoding="utf-8")
    return f"{sys.executable} {script}"


def test_a_command_printing_an_endless_line_fails_at_the_cap(tmp_path, synthetic, capsys):
    command = _program(tmp_path, "sys.stdin.readline()\n"
                                 "while True:\n    sys.stdout.write('x' * 65536)\n")
    code = bench(synthetic, "--backend", "command", "--command", command,
                 "--max-response-bytes", "256K", "--out", str(tmp_path / "out"))
    err = _refused(tmp_path, capsys, code)
    assert "the command's answer line is longer than 262144 bytes (--max-response-bytes)" in err


def test_a_per_query_command_printing_without_end_fails_at_the_cap(tmp_path, synthetic,
                                                                   capsys):
    command = _program(tmp_path, "while True:\n    sys.stdout.write('x' * 65536)\n")
    code = bench(synthetic, "--backend", "command", "--command", command, "--command-mode",
                 "per-query", "--max-response-bytes", "256K", "--out", str(tmp_path / "out"))
    err = _refused(tmp_path, capsys, code)
    assert "the command printed more than 262144 bytes (--max-response-bytes)" in err


def test_a_per_query_commands_stderr_passes_through(tmp_path, synthetic, rankings,
                                                    repo_root):
    """Its stderr is the harness's (a real process, so the file descriptor is checked, not
    a capture), and what it printed is not kept for the message."""
    import subprocess

    table = write_rankings(rankings, tmp_path / "rankings.json")
    script = tmp_path / "noisy.py"
    script.write_text(
        "import runpy, sys\n"
        "sys.stderr.write('noisy-marker ' * 1000 + '\\n')\n"
        f"sys.argv = ['retriever.py', {str(table)!r}, '--per-query']\n"
        f"runpy.run_path({str(repo_root / 'tests/harness/retrieval/systems/retriever.py')!r},"
        " run_name='__main__')\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    done = subprocess.run(
        [sys.executable, "-m", "harness", "bench", "--corpus", f"synthetic:{synthetic}",
         "--no-progress", "--no-warehouse", "--backend", "command", "--command",
         f"{sys.executable} {script}", "--command-mode", "per-query",
         "--out", str(tmp_path / "out")],
        cwd=repo_root, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("noisy-marker " * 1000) == len(rankings)  # one per query


def _sleeper_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.parametrize("mode", ["persistent", "per-query"])
def test_a_commands_children_are_killed_with_it(tmp_path, synthetic, rankings, embedded,
                                                mode):
    """The program starts ``sleep 300`` holding its stdout and stderr; when the run ends
    (or the program is restarted) the sleeper is gone too."""
    table = write_rankings(rankings, tmp_path / "rankings.json")
    pids = tmp_path / "sleepers.txt"
    flags = ("--command-mode", "per-query") if mode == "per-query" else ()
    script_args = ("--spawn-sleeper", str(pids)) + (("--per-query",) if mode == "per-query"
                                                    else ())
    assert bench(synthetic, *command_args(table, *flags, "--http-concurrency", "2",
                                          script_args=script_args),
                 "--out", str(tmp_path / "out")) == 0
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["rows"] == \
        json.loads((embedded / "metrics.json").read_text())["rows"]
    sleepers = [int(p) for p in pids.read_text().split()]
    assert len(sleepers) == (len(rankings) if mode == "per-query" else 2)
    deadline = time.monotonic() + 5
    while any(map(_sleeper_alive, sleepers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in sleepers if _sleeper_alive(p)]
