"""Faults injected by a real server: each fails the run with a message naming the query and
what was wrong (exit 5, no traceback, no results directory), or is retried and counted."""

from __future__ import annotations

import json

import pytest

from .conftest import bench, http_args
from .server import SystemServer


def _index(rankings, query_id):
    return sorted(rankings).index(query_id)


def test_ten_percent_500s_and_ten_percent_timeouts_give_the_clean_results(
        tmp_path, synthetic, rankings, embedded):
    def fault(query_id, attempt):
        i = _index(rankings, query_id)
        if attempt == 1 and i % 10 == 0:
            return "500"
        if attempt == 1 and i % 10 == 5:
            return "timeout"
        return None

    faulted = sum(1 for q in rankings if _index(rankings, q) % 10 in (0, 5))
    assert faulted == 10  # 5 + 5 of 48 queries
    with SystemServer(rankings, fault=fault, slow=2.0) as server:
        assert bench(synthetic, *http_args(server.url, "--http-timeout", "0.5"),
                     "--out", str(tmp_path / "out")) == 0
        sent = server.requests
    assert sent == 48 + faulted
    got = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert got["rows"] == json.loads((embedded / "metrics.json").read_text())["rows"]
    runinfo = json.loads((tmp_path / "out" / "runinfo.json").read_text())["backend"]
    assert runinfo["requests_sent"] == sent and runinfo["retries"] == faulted
    attempts = {q: r["attempts"] for q, r in runinfo["queries"].items()}
    assert sorted(q for q, n in attempts.items() if n == 2) == sorted(
        q for q in rankings if _index(rankings, q) % 10 in (0, 5))


@pytest.mark.parametrize("kind, needle", [
    ("malformed", "the response is not JSON"),
    ("missing", "is missing"),
    ("duplicate", "is returned twice"),
    ("nan", "not a finite number"),
])
def test_a_bad_answer_fails_the_run_naming_the_query(tmp_path, synthetic, rankings, capsys,
                                                     kind, needle):
    bad = sorted(rankings)[7]

    def fault(query_id, attempt):
        return kind if query_id == bad else None

    with SystemServer(rankings, fault=fault) as server:
        code = bench(synthetic, *http_args(server.url, "--http-concurrency", "1"),
                     "--out", str(tmp_path / "out"))
        at_bad = server.attempts[bad]
    err = capsys.readouterr().err
    assert code == 5
    assert f"query {bad}" in err and needle in err and "nothing was written" in err
    assert "Traceback" not in err
    assert at_bad == 1  # a wrong answer is not retried
    assert not (tmp_path / "out").exists()


def test_429_with_retry_after_is_honoured_and_counted(tmp_path, synthetic, rankings, embedded):
    first = sorted(rankings)[3]
    times = []

    def fault(query_id, attempt):
        if query_id == first:
            import time

            times.append(time.monotonic())
            return "429" if attempt == 1 else None
        return None

    with SystemServer(rankings, fault=fault) as server:
        assert bench(synthetic, *http_args(server.url), "--out", str(tmp_path / "out")) == 0
    assert len(times) == 2 and times[1] - times[0] >= 0.95  # Retry-After: 1
    runinfo = json.loads((tmp_path / "out" / "runinfo.json").read_text())["backend"]
    assert runinfo["retry_after_waits"] == 1 and runinfo["retries"] == 1
    assert runinfo["queries"][first]["attempts"] == 2
    assert json.loads((tmp_path / "out" / "metrics.json").read_text())["rows"] == \
        json.loads((embedded / "metrics.json").read_text())["rows"]


def test_a_server_that_hangs_forever_fails_after_the_retries(tmp_path, synthetic, rankings,
                                                             capsys):
    stuck = sorted(rankings)[0]

    def fault(query_id, attempt):
        return "hang" if query_id == stuck else None

    with SystemServer(rankings, fault=fault) as server:
        code = bench(synthetic, *http_args(server.url, "--http-timeout", "0.3",
                                           "--http-retries", "2", "--http-concurrency", "1"),
                     "--out", str(tmp_path / "out"))
        assert server.attempts[stuck] == 3
    err = capsys.readouterr().err
    assert code == 5 and f"query {stuck}: no complete answer within 0.3 s (after 3 attempts" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_retries_spent_on_5xx_fail_naming_the_query(tmp_path, synthetic, rankings, capsys):
    broken = sorted(rankings)[2]
    with SystemServer(rankings, fault=lambda q, a: "500" if q == broken else None) as server:
        code = bench(synthetic, *http_args(server.url, "--http-retries", "1",
                                           "--http-concurrency", "1"),
                     "--out", str(tmp_path / "out"))
        assert server.attempts[broken] == 2
        # the run stops at the failure: queries after it are never sent
        assert server.requests == 3 + 1
    err = capsys.readouterr().err
    assert code == 5 and f"query {broken}: HTTP 500 (after 2 attempts" in err
    assert not (tmp_path / "out").exists()


def test_the_request_budget_is_never_exceeded(tmp_path, synthetic, rankings, capsys):
    with SystemServer(rankings) as server:
        code = bench(synthetic, *http_args(server.url, "--request-budget", "10"),
                     "--out", str(tmp_path / "out"))
        assert server.requests == 10
    err = capsys.readouterr().err
    assert code == 5 and "request budget of 10 requests is exhausted" in err
    assert not (tmp_path / "out").exists()


def test_a_refused_connection_is_retried_then_fails(tmp_path, synthetic, capsys):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = bench(synthetic, *http_args(f"http://127.0.0.1:{port}", "--http-retries", "1"),
                 "--out", str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 5 and "connection error" in err and "after 2 attempts" in err
    assert not (tmp_path / "out").exists()
