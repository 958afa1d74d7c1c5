"""Faults against real servers: each gives one clear error, exit 5 (or 130 for Ctrl-C),
and no results directory; retried faults (HTTP 429, timeouts) are counted."""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from harness.retrieval.backends import BACKENDS
from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.opensearch.backend import OpenSearchBackend
from tests.servers import opensearch as servers

from . import fakes
from .helpers import bench, docs_and_queries


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_node_down_at_start(tiny_qmsum, tmp_path, capsys):
    url = f"http://127.0.0.1:{free_port()}"
    assert bench(tmp_path / "out", url, f"qmsum:{tiny_qmsum}", extra=["--mode", "bm25"]) == 5
    err = capsys.readouterr().err
    assert f"OpenSearch at {url} is unreachable while reading the server's version" in err
    assert "is the node running, and is this its URL?" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


class NotOpenSearch(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the handler's API
        body = json.dumps({"name": "some other service", "version": {"number": "1.0"}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_url_that_is_not_opensearch(tiny_qmsum, tmp_path, capsys):
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotOpenSearch)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert bench(tmp_path / "out", url, f"qmsum:{tiny_qmsum}", extra=["--mode", "bm25"]) == 5
    finally:
        server.shutdown()
        server.server_close()
    assert f"{url} answers HTTP but not as OpenSearch" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_malformed_url_is_bad_input(tiny_qmsum, tmp_path, capsys):
    assert bench(tmp_path / "out", "localhost:9200", f"qmsum:{tiny_qmsum}",
                 extra=["--mode", "bm25"]) == 2
    assert "expected http://HOST:PORT" in capsys.readouterr().err


def test_the_index_deleted_mid_run(monkeypatch, opensearch_node, os_url, tiny_qmsum, tmp_path,
                                   capsys):
    monkeypatch.setitem(BACKENDS, "opensearch",
                        "tests.harness.retrieval.opensearch.fakes:FaultAfterFirstBatch")
    monkeypatch.setitem(fakes.AFTER_FIRST_BATCH, "fault", fakes.delete_the_index)
    out = tmp_path / "out"
    assert bench(out, os_url, f"qmsum:{tiny_qmsum}",
                 extra=["--mode", "bm25", "--opensearch-index-prefix", "deleted"]) == 5
    err = capsys.readouterr().err
    assert "the index does not exist (deleted during the run?)" in err and "Traceback" not in err
    assert not out.exists()


@pytest.mark.service
def test_the_node_killed_mid_run(monkeypatch, tiny_qmsum, tmp_path, capsys):
    ok, why = servers.available()
    if not ok:
        servers.unavailable(why)
    node = servers.start_node(tmp_path / "node", timeout=servers.START_TIMEOUT)
    try:
        monkeypatch.setitem(BACKENDS, "opensearch",
                            "tests.harness.retrieval.opensearch.fakes:FaultAfterFirstBatch")
        monkeypatch.setitem(fakes.AFTER_FIRST_BATCH, "fault", lambda backend: node.kill())
        out = tmp_path / "out"
        assert bench(out, node.url, f"qmsum:{tiny_qmsum}", extra=["--mode", "bm25"]) == 5
        err = capsys.readouterr().err
        assert f"OpenSearch at {node.url} is unreachable while searching bm25" in err
        assert "Traceback" not in err and not out.exists()
        assert not node.is_running()
    finally:
        node.stop()


def test_ctrl_c_during_the_load_leaves_no_index_and_no_results(monkeypatch, opensearch_node,
                                                               os_url, synthetic_path, tmp_path,
                                                               capsys):
    monkeypatch.setitem(BACKENDS, "opensearch",
                        "tests.harness.retrieval.opensearch.fakes:InterruptedLoad")
    out = tmp_path / "out"
    assert bench(out, os_url, f"synthetic:{synthetic_path}", extra=["--mode", "bm25"]) == 130
    assert "interrupted: nothing half-written was kept" in capsys.readouterr().err
    assert not out.exists()
    status, body = opensearch_node.request("GET", "/_cat/indices/interrupted-*?format=json")
    assert status == 200 and body == []


# --------------------------------------------------------------------------- retried


@pytest.fixture(scope="module")
def tiny_index(os_url, tiny_qmsum):
    docs, queries = docs_and_queries(f"qmsum:{tiny_qmsum}", 200)
    backend = OpenSearchBackend(url=os_url, progress=False, index_prefix="retries")
    backend.index(docs, ["bm25"])
    expected = backend.search("bm25", queries, 10)
    yield backend, queries, expected
    backend.close()


def _in_thread(fn):
    box = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test thread
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, box


def _wait_for(predicate, seconds=20.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "the fault was never observed"
        time.sleep(0.01)


BREAKER = "network.breaker.inflight_requests.limit"


def test_http_429_is_retried_with_backoff_and_counted(opensearch_node, tiny_index):
    """The node's own in-flight-requests circuit breaker answers 429 for every request
    body larger than its limit; the settings call that lifts it is exempt."""
    backend, queries, expected = tiny_index
    before = backend.node.counts()
    assert opensearch_node.request("PUT", "/_cluster/settings",
                                   {"transient": {BREAKER: "60b"}})[0] == 200
    try:
        thread, box = _in_thread(lambda: backend.search("bm25", queries, 10))
        _wait_for(lambda: backend.node.counts()["rejected_429"] > before["rejected_429"])
    finally:
        assert opensearch_node.request("PUT", "/_cluster/settings",
                                       {"transient": {BREAKER: None}})[0] == 200
    thread.join()
    assert "error" not in box, box.get("error")
    assert box["value"] == expected
    after = backend.node.counts()
    assert after["retries"] > before["retries"] and after["backoff_seconds"] >= 0.25
    assert backend.run_stats()["opensearch"]["requests"]["rejected_429"] == after["rejected_429"]


def test_http_429_past_the_retries_is_a_clear_error(opensearch_node, os_url, tiny_qmsum):
    docs, queries = docs_and_queries(f"qmsum:{tiny_qmsum}", 200)
    backend = OpenSearchBackend(url=os_url, progress=False, index_prefix="retries", retries=1)
    backend.index(docs, ["bm25"])
    assert opensearch_node.request("PUT", "/_cluster/settings",
                                   {"transient": {BREAKER: "60b"}})[0] == 200
    try:
        with pytest.raises(BackendError, match=r"failed 2 times \(HTTP 429: circuit_breaking_"
                                               r"exception.*gave up after 1 retries"):
            backend.search("bm25", queries, 10)
    finally:
        opensearch_node.request("PUT", "/_cluster/settings", {"transient": {BREAKER: None}})
        backend.close()


def test_a_timeout_is_retried_with_backoff_and_counted(opensearch_node, os_url, tiny_qmsum):
    """The node's process is stopped (SIGSTOP) until the client has timed out once."""
    docs, queries = docs_and_queries(f"qmsum:{tiny_qmsum}", 200)
    backend = OpenSearchBackend(url=os_url, progress=False, index_prefix="retries", timeout=0.5)
    try:
        backend.index(docs, ["bm25"])
        expected = backend.search("bm25", queries, 10)
        os.kill(opensearch_node.pid, signal.SIGSTOP)
        try:
            thread, box = _in_thread(lambda: backend.search("bm25", queries, 10))
            _wait_for(lambda: backend.node.counts()["timeouts"] >= 1)
        finally:
            os.kill(opensearch_node.pid, signal.SIGCONT)
        thread.join()
        assert "error" not in box, box.get("error")
        assert box["value"] == expected
        counts = backend.node.counts()
        assert counts["timeouts"] >= 1 and counts["retries"] >= 1
    finally:
        backend.close()


def test_a_document_the_node_refuses_fails_the_load_and_removes_the_index(
        monkeypatch, opensearch_node, os_url, tiny_qmsum, tmp_path, capsys):
    monkeypatch.setitem(BACKENDS, "opensearch",
                        "tests.harness.retrieval.opensearch.fakes:RejectedDocument")
    out = tmp_path / "out"
    assert bench(out, os_url, f"qmsum:{tiny_qmsum}", extra=["--mode", "bm25"]) == 5
    err = capsys.readouterr().err
    assert "refused 1 documents of the load into rejected-" in err
    assert "strict_dynamic_mapping_exception" in err and "Traceback" not in err
    assert not out.exists()
    assert opensearch_node.request("GET", "/_cat/indices/rejected-*?format=json")[1] == []
