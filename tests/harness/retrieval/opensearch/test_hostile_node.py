"""Something posing as the OpenSearch node (a local socket server, no JVM): each answer it
controls is bounded (a deadline per request, not per read; a byte cap) and an answer that is
not the node's is a clear error naming the URL, never a traceback."""

from __future__ import annotations

import time

import pytest

from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.opensearch.client import Node
from tests.harness.retrieval.hostile import HostileServer, drip, endless_chunks, whole

from .helpers import bench

HTML = b"<!doctype html><html><body><h1>Sign in</h1></body></html>"


def test_an_html_page_is_not_taken_for_a_node(tmp_path, synthetic_path, capsys):
    with HostileServer(whole(HTML, content_type="text/html")) as server:
        code = bench(tmp_path / "out", server.url, f"synthetic:{synthetic_path}",
                     extra=["--mode", "bm25"])
    err = capsys.readouterr().err
    assert code == 5, err
    assert f"{server.url} answered reading the server's version with something that is not " \
           "JSON" in err
    assert "is this an OpenSearch node's URL?" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_a_dripping_node_is_cut_off_at_the_deadline():
    """One byte every 0.3 s never trips a per-read timeout of 1 s; the deadline does."""
    with HostileServer(drip(0.3)) as server:
        node = Node(server.url, timeout=1.0, retries=1)
        started = time.monotonic()
        with pytest.raises(BackendError, match=r"reading the server's version failed 2 times "
                                               r"\(timeout: no answer within 1 s\)"):
            node.server()
        elapsed = time.monotonic() - started
        assert len(server.requests) == 2
    assert elapsed < 2 * 1.0 + 0.25 + 1.0  # two deadlines, one backoff, slack
    assert node.counts()["timeouts"] == 2 and node.counts()["retries"] == 1


def test_an_endless_answer_stops_at_the_byte_cap():
    with HostileServer(endless_chunks()) as server:
        node = Node(server.url, retries=0, max_response_bytes=1 << 20)
        with pytest.raises(BackendError, match=r"larger than 1048576 bytes "
                                               r"\(--opensearch-max-response-bytes\)"):
            node.server()


def test_json_nested_past_the_parsers_limit_is_a_clear_error():
    body = b"[" * 100_000 + b"]" * 100_000
    with HostileServer(whole(body)) as server:
        node = Node(server.url, retries=0)
        with pytest.raises(BackendError, match="JSON nested too deeply to read"):
            node.server()


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -1.0, 0.0])
def test_a_timeout_that_is_not_finite_and_positive_is_refused(value):
    with pytest.raises(ValueError, match="--opensearch-timeout must be a finite positive "
                                         "number of seconds"):
        Node("http://127.0.0.1:9", timeout=value)
