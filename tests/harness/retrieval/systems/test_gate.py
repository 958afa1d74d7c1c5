"""A sequential gate against a live system sends fewer requests than the full set, and the
count it reports as sent is the count that reached the server."""

from __future__ import annotations

import json

import pytest

from harness.core.doc_ids import file_of

from .conftest import bench, http_args
from .server import SystemServer


@pytest.fixture(scope="module")
def file_rankings(rankings):
    """The chunk rankings as file rankings (each file at its first chunk's rank and score)."""
    out = {}
    for q, docs in rankings.items():
        seen = {}
        for d, s in docs:
            seen.setdefault(file_of(d), s)
        out[q] = list(seen.items())
    return out


def _gate(tmp_path, synthetic, url, *extra):
    doc = tmp_path / "gate.json"
    summary = tmp_path / "summary.md"
    code = bench(synthetic, *http_args(url), "--granularity", "file", "--gate", "sequential",
                 "--gate-measure", "R@100", "--gate-threshold", "0.5", "--gate-out", str(doc),
                 "--summary", str(summary), *extra)
    return code, json.loads(doc.read_text()), summary.read_text()


def test_a_decided_gate_sends_fewer_requests_and_reports_the_real_count(tmp_path, synthetic,
                                                                        file_rankings, capsys):
    with SystemServer(file_rankings) as server:
        code, doc, summary = _gate(tmp_path, synthetic, server.url)
        sent = server.requests
    out = capsys.readouterr().out
    assert code == 0 and doc["verdict"] == "pass"
    assert doc["queries_scored"] < doc["queries_available"] == len(file_rankings)
    assert sent == doc["queries_scored"] < len(file_rankings)
    saved = doc["queries_available"] - doc["queries_scored"]
    line = (f"requests sent to the system: {sent} (retries included); saved: {saved} "
            "queries never sent")
    assert line in out and line in summary


def test_retries_during_a_gate_are_counted_as_sent(tmp_path, synthetic, file_rankings,
                                                   capsys):
    with SystemServer(file_rankings, fault=lambda q, a: "500" if a == 1 else None) as server:
        code, doc, _ = _gate(tmp_path, synthetic, server.url)
        sent = server.requests
    assert code == 0
    assert sent == 2 * doc["queries_scored"]  # every query failed once, then answered
    assert f"requests sent to the system: {sent} (retries included)" in capsys.readouterr().out


def test_the_gate_order_is_seeded(tmp_path, synthetic, file_rankings):
    orders = []
    for seed in ("1", "1", "2"):
        order = []
        with SystemServer(file_rankings, fault=lambda q, a, order=order: order.append(q)) \
                as server:
            _gate(tmp_path, synthetic, server.url, "--gate-seed", seed,
                  "--http-concurrency", "1")
        orders.append(order)
    assert orders[0] == orders[1] != orders[2]
