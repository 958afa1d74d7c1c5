"""The process entry (:func:`harness.core.commands.process_main`): a command that leaves its
objects to the exit ends as the interpreter would end it (output flushed, atexit handlers run,
its exit code), and a command called in-process keeps nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from harness.core import commands

REPO = Path(__file__).resolve().parents[3]


def _process(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    script = tmp_path / "entry.py"
    script.write_text(textwrap.dedent(body), encoding="utf-8")
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          cwd=REPO, timeout=60, env={"PYTHONPATH": str(REPO), "PATH": ""})


def test_a_process_that_leaves_objects_to_the_exit_flushes_runs_atexit_and_keeps_its_code(
        tmp_path):
    marker = tmp_path / "atexit-ran"
    done = _process(tmp_path, f"""
        import atexit, sys
        from harness.core.commands import leave_to_exit, process_main

        class Noisy:
            def __del__(self):
                sys.stderr.write(" freed")  # the interpreter's teardown would free it

        def main():
            atexit.register(lambda: open({str(marker)!r}, "w").write("ran"))
            sys.stdout.write("partial line without newline")  # still buffered at exit
            sys.stderr.write("to stderr")
            leave_to_exit([list(range(1000)) for _ in range(100)], Noisy())
            return 3

        process_main(main)
        print("never reached")
    """)
    assert done.returncode == 3, done.stderr
    assert done.stdout == "partial line without newline"
    assert done.stderr == "to stderr"  # and not " freed": the exit did not free the objects
    assert marker.read_text() == "ran"


def test_with_another_thread_running_the_interpreter_ends_the_process(tmp_path):
    # a non-daemon thread is joined by the interpreter's exit: never cut short
    done = _process(tmp_path, """
        import sys, threading, time
        from harness.core.commands import leave_to_exit, process_main

        class Noisy:
            def __del__(self):
                sys.stdout.write("freed by the interpreter\\n")

        def work():
            time.sleep(0.3)
            print("thread finished", flush=True)

        def main():
            threading.Thread(target=work).start()
            leave_to_exit(Noisy())
            return 0

        process_main(main)
    """)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "thread finished\nfreed by the interpreter\n"


def test_a_command_run_in_process_keeps_nothing():
    before = commands._left
    commands.leave_to_exit(object())
    assert commands._left is before  # None outside process_main: nothing is held


def test_harness_score_as_a_process_writes_its_directory_and_prints_its_table(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n", encoding="utf-8")
    run.write_text("q1 Q0 d2 1 0.9 r\nq1 Q0 d1 2 0.8 r\nq2 Q0 d3 1 0.7 r\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "harness", "score", "--qrels", str(qrels),
                           "--run", str(run), "--out", str(tmp_path / "out"), "--no-warehouse",
                           "--measures", "MRR"], capture_output=True, text=True, cwd=REPO,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    # MRR by hand: q1's relevant d1 at rank 2 (1/2), q2's d3 at rank 1 (1): mean 0.75
    assert "| 0.7500 |" in done.stdout
    assert f"wrote {tmp_path / 'out'}" in done.stdout
    assert (tmp_path / "out" / "metrics.json").is_file()


def test_under_a_profiler_the_interpreter_ends_the_process_and_the_report_is_written(tmp_path):
    script = tmp_path / "entry.py"
    script.write_text(textwrap.dedent("""
        from harness.core.commands import leave_to_exit, process_main

        def main():
            leave_to_exit(object())
            return 0

        process_main(main)
    """), encoding="utf-8")
    report = tmp_path / "profile.out"
    done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(report), str(script)],
                          capture_output=True, text=True, cwd=REPO, timeout=60,
                          env={"PYTHONPATH": str(REPO), "PATH": ""})
    assert done.returncode == 0, done.stderr
    assert report.stat().st_size > 0  # cProfile writes it after the script returns
