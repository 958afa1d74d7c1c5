"""Hostile values give a located exit, never a traceback: a score too large for a float,
JSON nested past the parser's limit, a timeout that is not a finite positive number, a
query that is not valid Unicode, a results location that cannot be written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from harness.retrieval.backends.base import SearchQuery

from .conftest import bench, http_args
from tests.harness.retrieval.hostile import HostileServer, whole


def _failed(tmp_path, capsys, code, expected: int = 5) -> str:
    err = capsys.readouterr().err
    assert code == expected, err
    assert "Traceback" not in err and not (tmp_path / "out").exists()
    return err


def test_an_integer_score_too_large_for_a_float_names_the_field(tmp_path, synthetic,
                                                                capsys):
    body = b'{"hits": [{"doc_id": "syn0001_1", "score": 1' + b"0" * 400 + b"}]}"
    with HostileServer(whole(body)) as server:
        code = bench(synthetic, *http_args(server.url, "--http-concurrency", "1"),
                     "--out", str(tmp_path / "out"))
    err = _failed(tmp_path, capsys, code)
    assert "response field 'hits[0].score' is 1000000000000000000000000000000000000..., " \
           "not a finite number" in err


def test_json_nested_past_the_parsers_limit_is_a_bad_answer(tmp_path, synthetic, capsys):
    body = b"[" * 100_000 + b"]" * 100_000
    with HostileServer(whole(body)) as server:
        code = bench(synthetic, *http_args(server.url, "--http-concurrency", "1"),
                     "--out", str(tmp_path / "out"))
    err = _failed(tmp_path, capsys, code)
    assert "the response is JSON nested too deeply to read" in err


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0"])
@pytest.mark.parametrize("backend", ["http", "command"])
def test_a_timeout_that_is_not_finite_and_positive_is_bad_input(tmp_path, synthetic, capsys,
                                                                value, backend):
    target = (http_args("http://127.0.0.1:9") if backend == "http"
              else ["--backend", "command", "--command", "true"])
    code = bench(synthetic, *target, "--http-timeout", value, "--out", str(tmp_path / "out"))
    err = _failed(tmp_path, capsys, code, expected=2)
    assert f"--http-timeout must be a finite positive number of seconds, got {float(value)}" \
        in err


def test_a_query_holding_a_lone_surrogate_is_refused_naming_it():
    with pytest.raises(ValueError, match=r"query 'q7': its text holds a lone surrogate "
                                         r"\(U\+D800\) at character 3, which is not valid "
                                         r"Unicode"):
        SearchQuery("q7", "ab\ud800cd")
    assert SearchQuery("q8", "caf\u00e9 \U0001f600").text == "caf\u00e9 \U0001f600"


def test_a_results_location_that_fills_up_is_a_clear_error_and_nothing_half_written(
        tmp_path, synthetic, embedded, repo_root):
    """The bench runs with its file size limit (RLIMIT_FSIZE) below the size of the rankings
    it writes: the write fails as on a full disk (EFBIG, SIGXFSZ ignored)."""
    out = tmp_path / "out"
    limit = 64 * 1024
    # so the write must fail
    assert (embedded / "rankings.jsonl").stat().st_size > limit
    prelude = ("import resource, runpy, signal, sys; "
               "signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
               f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
               "sys.argv = ['harness'] + sys.argv[1:]; "
               "runpy.run_module('harness', run_name='__main__')")
    env = {**os.environ, "PYTHONPATH": str(repo_root)}
    done = subprocess.run(
        [sys.executable, "-c", prelude, "bench", "--corpus", f"synthetic:{synthetic}",
         "--mode", "bm25", "--no-progress", "--no-warehouse", "--out", str(out)],
        cwd=repo_root, env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    assert re.search(rf"error: --out {re.escape(str(out))}: cannot write [a-z_]+\.jsonl "
                     r"\(File too large\); nothing was written", done.stderr), done.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == []  # no staging directory left behind
    assert json.loads((embedded / "metrics.json").read_text())  # the control is untouched
