"""Parity: a system that serves the embedded backend's rankings, measured through
``bench --backend http`` (GET and POST) and ``--backend command``, gives the same rows as
``harness score`` on those rankings written as a TREC run."""

from __future__ import annotations

import json

from harness.cli import main
from harness.core.measures import DEFAULT_MEASURES

from .conftest import (
    bench,
    command_args,
    comparable_rows,
    http_args,
    write_rankings,
    write_trec,
)
from .server import SystemServer


def _scored(tmp_path, embedded, rankings):
    files = write_trec(embedded, rankings, tmp_path)
    out = tmp_path / "scored"
    assert main(["score", "--qrels", str(files["qrels"]), "--run", str(files["run"]),
                 "--query-classes", str(files["classes"]), "--corpus-name", "synthetic",
                 "--licence", "CC0-1.0", "--out", str(out), "--no-warehouse"]) == 0
    return json.loads((out / "metrics.json").read_text())


def test_http_get_rows_equal_harness_score_on_the_same_rankings(tmp_path, synthetic,
                                                                 embedded, rankings):
    expected = _scored(tmp_path, embedded, rankings)
    with SystemServer(rankings) as server:
        assert bench(synthetic, *http_args(server.url), "--out", str(tmp_path / "http")) == 0
        sent = server.requests
    got = json.loads((tmp_path / "http" / "metrics.json").read_text())
    assert comparable_rows(got, DEFAULT_MEASURES) == comparable_rows(expected, DEFAULT_MEASURES)
    assert sent == len(rankings) == 48  # one request per query, no retries
    runinfo = json.loads((tmp_path / "http" / "runinfo.json").read_text())
    assert runinfo["backend"]["requests_sent"] == sent
    records = runinfo["backend"]["queries"]
    assert sorted(records) == sorted(rankings)
    assert all(r["attempts"] == 1 and r["status"] == 200 and r["latency_ms"] > 0
               for r in records.values())
    sut = got["system_under_test"]
    assert sut["kind"] == "http" and sut["method"] == "GET"
    assert sut["url_template"].startswith(server.url + "/search?")
    assert sut["field_map"] == {"hits": "hits[*]", "doc_id": "doc_id", "score": "score"}
    assert got["retrieval"]["mode"] == "system" and got["retrieval"]["backend"] == "http"
    lat = runinfo["retrieval_latency_ms"]
    assert lat["concurrency"] == 4 and lat["n"] == 48


def test_http_post_with_an_opensearch_shaped_answer_gives_the_same_rows(tmp_path, synthetic,
                                                                        embedded, rankings):
    expected = _scored(tmp_path, embedded, rankings)
    with SystemServer(rankings, opensearch_shape=True) as server:
        code = bench(synthetic, "--backend", "http", "--url-template", server.url + "/_search",
                     "--method", "POST", "--body-template",
                     '{"query_id": "{query_id}", "query": {"match": {"text": "{query}"}}, '
                     '"size": {k}}',
                     "--field-map", "hits=hits.hits[*],doc_id=_id,score=_score",
                     "--out", str(tmp_path / "post"))
        assert code == 0
        assert server.requests == 48
    got = json.loads((tmp_path / "post" / "metrics.json").read_text())
    assert comparable_rows(got, DEFAULT_MEASURES) == comparable_rows(expected, DEFAULT_MEASURES)
    assert got["system_under_test"]["method"] == "POST"
    assert got["system_under_test"]["field_map"]["hits"] == "hits.hits[*]"


def test_persistent_command_rows_equal_harness_score(tmp_path, synthetic, embedded, rankings):
    expected = _scored(tmp_path, embedded, rankings)
    state = tmp_path / "answered.txt"
    table = write_rankings(rankings, tmp_path / "rankings.json")
    assert bench(synthetic, *command_args(table, "--http-concurrency", "2",
                                          script_args=("--state", str(state))),
                 "--out", str(tmp_path / "cmd")) == 0
    got = json.loads((tmp_path / "cmd" / "metrics.json").read_text())
    assert comparable_rows(got, DEFAULT_MEASURES) == comparable_rows(expected, DEFAULT_MEASURES)
    assert sorted(state.read_text().split()) == sorted(rankings)  # each query asked once
    assert got["system_under_test"]["kind"] == "command"
    assert got["system_under_test"]["command_mode"] == "persistent"


def test_per_query_command_gives_the_same_rows(tmp_path, synthetic, embedded, rankings):
    table = write_rankings(rankings, tmp_path / "rankings.json")
    assert bench(synthetic, *command_args(table, "--command-mode", "per-query"),
                 "--out", str(tmp_path / "per-query")) == 0
    got = json.loads((tmp_path / "per-query" / "metrics.json").read_text())
    expected = json.loads((embedded / "metrics.json").read_text())
    assert got["rows"] == expected["rows"]


def test_two_runs_against_an_unchanged_system_are_byte_identical(tmp_path, synthetic, rankings):
    with SystemServer(rankings) as server:
        for name in ("a", "b"):
            assert bench(synthetic, *http_args(server.url, "--http-concurrency", "3"),
                         "--control-name", "same",
                         "--out", str(tmp_path / name)) == 0
    for name in ("metrics.json", "per_query.jsonl", "rankings.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_preserve_order_scores_the_systems_own_order(tmp_path, synthetic, embedded, rankings):
    # the system's order is the embedded one, but its scores rise down the list: only the
    # system's own order reproduces the embedded arm; the tie rule reverses every list
    rising = {q: [(d, float(i)) for i, (d, _) in enumerate(docs)] for q, docs in rankings.items()}
    files = write_trec(embedded, rising, tmp_path)
    expected = {}
    for flag in ("--preserve-order", None):
        out = tmp_path / f"scored{flag or ''}"
        assert main(["score", "--qrels", str(files["qrels"]), "--run", str(files["run"]),
                     "--query-classes", str(files["classes"]), "--corpus-name", "synthetic",
                     "--licence", "CC0-1.0", "--out", str(out), "--no-warehouse",
                     *([flag] if flag else [])]) == 0
        expected[flag] = json.loads((out / "metrics.json").read_text())
    with SystemServer(rising) as server:
        for flag in ("--preserve-order", None):
            assert bench(synthetic, *http_args(server.url, *([flag] if flag else [])),
                         "--out", str(tmp_path / f"http{flag or ''}")) == 0
    kept = json.loads((tmp_path / "http--preserve-order" / "metrics.json").read_text())
    tied = json.loads((tmp_path / "http" / "metrics.json").read_text())
    assert comparable_rows(kept, DEFAULT_MEASURES) == comparable_rows(
        expected["--preserve-order"], DEFAULT_MEASURES)
    assert comparable_rows(tied, DEFAULT_MEASURES) == comparable_rows(expected[None],
                                                                      DEFAULT_MEASURES)
    assert comparable_rows(kept, DEFAULT_MEASURES) != comparable_rows(tied, DEFAULT_MEASURES)
    assert kept["rows"] == json.loads((embedded / "metrics.json").read_text())["rows"]
    assert kept["metric_engine"]["tie_break"] == expected["--preserve-order"]["metric_engine"][
        "tie_break"]
    assert kept["system_under_test"]["preserve_order"] is True
