"""Settling: an index is measured only when it is provably the one loaded, its counters
are recorded before and after, and a write during the measurement refuses the result."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest

from harness.retrieval.backends import BACKENDS
from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.opensearch import settling
from harness.retrieval.backends.opensearch.client import Node

from . import fakes
from .helpers import bench, index_name, read


def test_problems_names_each_unsettled_condition():
    expected = {"a": 2, "b": 1}
    assert settling.problems({"a": 2, "b": 1}, Counter({"L": 3}), expected, "L") == []
    [missing] = settling.problems({"a": 2}, Counter({"L": 2}), expected, "L")
    assert missing == "1 of 2 expected files have no chunks (first: b)"
    [short] = settling.problems({"a": 1, "b": 1}, Counter({"L": 2}), expected, "L")
    assert short.startswith("1 files hold a different number of chunks") and "a has 1, expected 2" in short
    [extra] = settling.problems({"a": 2, "b": 1, "z": 4}, Counter({"L": 7}), expected, "L")
    assert extra.startswith("1 files that are not in this corpus (first: z)")
    [old] = settling.problems({"a": 2, "b": 1}, Counter({"L": 2, "old": 1}), expected, "L")
    assert old == "1 documents predate this index's load (load ids ['old'], expected only L)"


def rewrite_file(node, name: str, file_id: str, change=None) -> int:
    """Delete (``change`` None) or re-index with ``change(source)`` every document of one
    file, through _bulk (the node has no by-query APIs); returns how many."""
    status, found = node.request("POST", f"/{name}/_search", {
        "size": 10_000, "query": {"term": {"file_id": file_id}}})
    assert status == 200, found
    hits = found["hits"]["hits"]
    lines = []
    for hit in hits:
        if change is None:
            lines.append(json.dumps({"delete": {"_id": hit["_id"]}}))
        else:
            lines += [json.dumps({"index": {"_id": hit["_id"]}}), json.dumps(change(hit["_source"]))]
    status, body = node.request("POST", f"/{name}/_bulk?refresh=true", "\n".join(lines) + "\n")
    assert status == 200 and not body["errors"], body
    return len(hits)


@pytest.fixture
def loaded(os_url, tiny_qmsum, tmp_path):
    """A bm25 run's index on the tiny corpus, under a prefix of this test's own."""
    spec = f"qmsum:{tiny_qmsum}"
    flags = ["--mode", "bm25", "--opensearch-index-prefix", "settling",
             "--opensearch-settle-timeout", "3", "--opensearch-rebuild"]
    assert bench(tmp_path / "first", os_url, spec, extra=flags) == 0
    return spec, flags[:-1], index_name(tmp_path / "first"), tmp_path


def test_the_index_counters_are_recorded_before_and_after(loaded):
    _, _, name, tmp_path = loaded
    block = read(tmp_path / "first" / "metrics.json")["index"]["backend"]["index"]
    documents = read(tmp_path / "first" / "metrics.json")["index"]["documents"]
    assert block["name"] == name
    assert block["before_measurement"] == block["after_measurement"] == {
        "docs_count": documents, "docs_deleted": 0, "indexing_total": documents,
        "segments": 1, "max_seq_no": documents - 1}


def test_a_file_without_chunks_is_refused(opensearch_node, os_url, loaded, capsys):
    spec, flags, name, tmp_path = loaded
    assert rewrite_file(opensearch_node, name, "Ta002") > 0
    capsys.readouterr()
    assert bench(tmp_path / "refused", os_url, spec, extra=flags) == 5
    err = capsys.readouterr().err
    assert f"refusing to measure index {name!r}: not settled" in err
    assert "1 of 3 expected files have no chunks (first: Ta002)" in err
    assert not (tmp_path / "refused").exists()


def test_documents_from_another_load_are_refused(opensearch_node, os_url, loaded, capsys):
    spec, flags, name, tmp_path = loaded
    changed = rewrite_file(opensearch_node, name, "Ta003",
                           lambda source: {**source, "load_id": "an-older-load"})
    assert changed > 0
    capsys.readouterr()
    assert bench(tmp_path / "refused", os_url, spec, extra=flags) == 5
    err = capsys.readouterr().err
    assert f"{changed} documents predate this index's load (load ids ['an-older-load']" in err
    assert not (tmp_path / "refused").exists()


def test_a_write_after_the_seal_is_refused_even_when_the_counts_agree(opensearch_node, os_url,
                                                                       loaded, capsys):
    spec, flags, name, tmp_path = loaded
    status, hit = opensearch_node.request("GET", f"/{name}/_doc/Ta001_0")
    assert opensearch_node.request("PUT", f"/{name}/_doc/Ta001_0?refresh=true",
                                   hit["_source"])[0] == 200
    capsys.readouterr()
    assert bench(tmp_path / "refused", os_url, spec, extra=flags) == 5
    err = capsys.readouterr().err
    documents = read(tmp_path / "first" / "metrics.json")["index"]["documents"]
    assert (f"it was written after this product loaded and sealed it (max_seq_no {documents}, "
            f"sealed at {documents - 1}): 1 writes since") in err
    assert not (tmp_path / "refused").exists()


def test_settling_needs_two_agreeing_polls_and_refuses_a_moving_index(opensearch_node, os_url,
                                                                      loaded):
    _, _, name, _ = loaded
    node = Node(os_url)
    files, loads = settling.observe(node, name)
    (load_id,) = loads
    assert settling.await_settled(node, name, files, load_id, poll_seconds=0.01) == 2

    stop = threading.Event()

    def writer():  # documents of a foreign file come and go
        i = 0
        while not stop.is_set():
            opensearch_node.request("PUT", f"/{name}/_doc/zz_{i}?refresh=true", {
                "doc_id": f"zz_{i}", "file_id": "zz", "text": "noise", "load_id": load_id})
            if i % 2:
                opensearch_node.request("DELETE", f"/{name}/_doc/zz_{i - 1}?refresh=true")
            i += 1

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        with pytest.raises(BackendError, match="not settled after"):
            settling.await_settled(node, name, files, load_id, poll_seconds=0.05, timeout=1.5)
    finally:
        stop.set()
        thread.join()


def test_a_write_during_the_measurement_refuses_the_result(monkeypatch, os_url, loaded, capsys):
    spec, flags, name, tmp_path = loaded
    monkeypatch.setitem(BACKENDS, "opensearch",
                        "tests.harness.retrieval.opensearch.fakes:FaultAfterFirstBatch")
    monkeypatch.setitem(fakes.AFTER_FIRST_BATCH, "fault", fakes.overwrite_one_document)
    capsys.readouterr()
    assert bench(tmp_path / "refused", os_url, spec, extra=flags) == 5
    err = capsys.readouterr().err
    assert f"refusing to write a result: index {name!r} changed during the measurement" in err
    assert "indexing_total" in err and "max_seq_no" in err
    assert not (tmp_path / "refused").exists()
