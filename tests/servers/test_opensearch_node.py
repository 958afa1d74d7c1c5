"""The node the OpenSearch tests run on: what it is, and that it never outlives its parent."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from tests.servers import opensearch


def test_the_session_node_is_opensearch_2_19_with_knn_and_neural_search(opensearch_node):
    status, root = opensearch_node.request("GET", "/")
    assert status == 200
    assert (root["version"]["distribution"], root["version"]["number"]) == ("opensearch",
                                                                             opensearch.VERSION)
    status, plugins = opensearch_node.request("GET", "/_cat/plugins?format=json")
    names = {p["component"] for p in plugins}
    assert {"org.opensearch.knn.plugin.KNNPlugin",
            "org.opensearch.neuralsearch.plugin.NeuralSearch"} <= names
    assert opensearch_node.startup_seconds < opensearch.START_TIMEOUT
    print(f"session node up (yellow) in {opensearch_node.startup_seconds:.1f} s")


@pytest.mark.service  # starts a node of its own
def test_a_node_stops_when_its_parent_dies(tmp_path):
    """A parent killed by SIGKILL closes the node's stdin: the node exits by itself."""
    ok, why = opensearch.available()
    if not ok:
        opensearch.unavailable(why)
    code = (
        "import sys, time\n"
        "from tests.servers import opensearch\n"
        f"node = opensearch.start_node({str(tmp_path / 'node')!r}, timeout=opensearch.START_TIMEOUT)\n"
        "print(node.pid, flush=True)\n"
        "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                              cwd=opensearch.REPO)
    try:
        pid = int(parent.stdout.readline())
    finally:
        parent.kill()
        parent.wait()
    # the launcher sees end-of-file on stdin and closes the node
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        if open(f"/proc/{pid}/stat").read().split()[2] == "Z":
            return  # exited, waiting for init to reap it
        time.sleep(0.2)
    os.kill(pid, 9)
    raise AssertionError(f"node {pid} outlived its parent by 60 s")


def _pytest_without_java(tmp_path, **env):
    target = ("tests/servers/test_opensearch_node.py::"
              "test_the_session_node_is_opensearch_2_19_with_knn_and_neural_search")
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", target],
        cwd=opensearch.REPO, capture_output=True, text=True, timeout=300,
        env={"PATH": str(tmp_path), "HOME": str(tmp_path), "PYTHONPATH": str(opensearch.REPO),
             **env})


def test_without_java_the_tests_skip_with_the_reason_unless_required(tmp_path):
    skipped = _pytest_without_java(tmp_path)
    assert skipped.returncode == 0, skipped.stdout[-2000:]
    assert "1 skipped" in skipped.stdout and "no java found" in skipped.stdout
    required = _pytest_without_java(tmp_path, REQUIRE_OPENSEARCH="1")
    assert required.returncode == 1, required.stdout[-2000:]
    assert "REQUIRE_OPENSEARCH=1 but no OpenSearch node can start here: no java found" in \
        required.stdout
