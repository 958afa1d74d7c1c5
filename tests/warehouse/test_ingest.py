"""Ingest: whole runs, idempotent, malformed input refused with nothing written."""

from __future__ import annotations

import hashlib
import json
import math

import pytest

from tests.warehouse.builders import build_results, simple_run
from warehouse import change_stamp, connect, ingest, ingest_results
from warehouse.errors import IngestRefused
from warehouse.load import load_results

TABLES = ("runs", "corpora", "metric_rows", "per_query", "rankings", "latency", "run_files",
          "documents")


def snapshot(db):
    with connect(db, read_only=True) as conn:
        counts = {t: conn.query_one(f"SELECT count(*) FROM {t}")[0] for t in TABLES}
        runs = conn.query_all("SELECT run_id FROM runs ORDER BY run_id")
    return counts, runs, change_stamp(db)


def test_ingest_stores_the_claim_and_every_value(tmp_path, db):
    out = simple_run(tmp_path / "r", n_queries=3, control_name="first")
    report = ingest_results(out, db)
    assert report.inserted
    assert report.run_id == hashlib.sha256((out / "metrics.json").read_bytes()).hexdigest()
    assert "ingested run" in report.message and "first" in report.message
    with connect(db, read_only=True) as conn:
        rows = dict(conn.query_all(
            "SELECT measure, value FROM metric_rows WHERE query_class = 'all'"))
        assert rows["nDCG@10"] == pytest.approx((0.1 + 0.2 + 0.3) / 3)
        assert rows["MRR"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
        assert conn.query_all("SELECT DISTINCT corpus, tier FROM per_query") == [("pub", "A")]
        assert conn.query_one("SELECT count(*) FROM per_query")[0] == 3 * 2
        stored = conn.query_one("SELECT metrics_json, control_name, corpus, tier FROM runs")
    assert stored[0] == (out / "metrics.json").read_text()
    assert stored[1:] == ("first", "pub", "A")


def test_same_directory_twice_is_a_no_op_that_says_so(tmp_path, db):
    out = simple_run(tmp_path / "r")
    first = ingest_results(out, db)
    before = snapshot(db)
    again = ingest_results(out, db)
    assert not again.inserted
    assert again.run_id == first.run_id
    assert "already" in again.message and "nothing to do" in again.message
    assert snapshot(db)[:2] == before[:2]


def test_bench_shaped_run_fills_configuration_columns(tmp_path, db):
    values = {("pub", "q1"): {"nDCG@10": 0.25}, ("pub", "q2"): {"nDCG@10": 0.75}}
    retrieval = {"backend": "embedded", "mode": "hybrid", "stage": "rerank", "scope": "corpus",
                 "granularity": "chunk", "size": 48,
                 "fusion": {"method": "rrf", "rank_constant": 60}}
    index = {"embedding_models": ["all-MiniLM-L6-v2"], "embedding_verdict": "consistent",
             "embedding_dimension": 384, "configured_embedding_model": "all-MiniLM-L6-v2"}
    rankings = [{"corpus": "pub", "query_id": "q1", "rank": 1, "doc_id": "d1", "score": 2.0},
                {"corpus": "pub", "query_id": "q1", "rank": 2, "doc_id": "d2", "score": 1.0}]
    out = build_results(tmp_path / "b", values, corpora={"pub": ("A", "MIT")},
                        retrieval=retrieval, index=index, rankings=rankings)
    report = ingest_results(out, db)
    with connect(db, read_only=True) as conn:
        row = conn.query_one(
            "SELECT backend, mode, stage, scope, granularity, fusion->>'$.method', "
            "embedding_dimension, configured_embedding_model, embedding_models->>'$[0]' "
            "FROM runs")
        ranks = conn.query_all("SELECT corpus, tier, query_id, rank, doc_id, score "
                               "FROM rankings ORDER BY rank")
    assert row == ("embedded", "hybrid", "rerank", "corpus", "chunk", "rrf", 384,
                   "all-MiniLM-L6-v2", "all-MiniLM-L6-v2")
    assert ranks == [("pub", "A", "q1", 1, "d1", 2.0), ("pub", "A", "q1", 2, "d2", 1.0)]
    from warehouse import queries

    stored = queries.rankings(report.run_id, "publishable", ["q1"], db_path=db)
    assert stored[["rank", "doc_id"]].values.tolist() == [[1, "d1"], [2, "d2"]]


def test_change_stamp_changes_after_every_ingest_and_not_after_a_read(tmp_path, db):
    stamps = [change_stamp(db)]
    for i in range(3):
        ingest_results(simple_run(tmp_path / f"r{i}", offset=i / 100, control_name=f"r{i}"), db)
        stamps.append(change_stamp(db))
        with connect(db, read_only=True) as conn:
            conn.query_all("SELECT * FROM runs")
        assert change_stamp(db) == stamps[-1]
    assert len(set(stamps)) == 4


def test_row_by_row_inserts_store_the_same_tables(tmp_path):
    out = build_results(tmp_path / "r", {
        ("pub", "q1"): {"nDCG@10": 0.5}, ("pub", "q2"): {"nDCG@10": 0.25},
        ("nc", "q3"): {"nDCG@10": 1.0}},
        corpora={"pub": ("A", "MIT"), "nc": ("B", "CC-BY-NC-4.0")}, latency=[1.0, 2.0])
    dumps = []
    from benchmarks.bench_warehouse import insert_row_by_row

    for name, inserter in (("bulk", ingest.insert_bulk), ("rows", insert_row_by_row)):
        db = tmp_path / f"{name}.duckdb"
        ingest.store(load_results(out), db, inserter=inserter)
        with connect(db, read_only=True) as conn:
            dumps.append({t: conn.query_all(f"SELECT * EXCLUDE (run_id) FROM {t} ORDER BY ALL")
                          for t in ("corpora", "metric_rows", "per_query", "latency")})
    assert dumps[0] == dumps[1]
    assert len(dumps[0]["metric_rows"]) == 3  # nc all, pub all, pooled nc+pub all


def test_interrupt_inside_the_transaction_keeps_nothing(tmp_path, db, monkeypatch):
    ingest_results(simple_run(tmp_path / "a", control_name="a"), db)
    before = snapshot(db)

    def interrupt(run_id):
        raise KeyboardInterrupt

    monkeypatch.setattr(ingest, "in_transaction_hook", interrupt)
    with pytest.raises(KeyboardInterrupt):
        ingest_results(simple_run(tmp_path / "b", offset=0.05, control_name="b"), db)
    monkeypatch.setattr(ingest, "in_transaction_hook", None)
    assert snapshot(db)[:2] == before[:2]
    # the writer lock was released: the next writer gets in at once
    assert ingest_results(tmp_path / "b", db).inserted


# --------------------------------------------------------------------------- refusals


def _edit_json(path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _edit_lines(path, change):
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(line + "\n" for line in change(lines)))


def _dumps_lines(rows):
    return [json.dumps(r) for r in rows]


def _drop_measure(rows):
    del rows[1]["measure"]
    return _dumps_lines(rows)


def _set(rows, index, **fields):
    rows[index].update(fields)
    return _dumps_lines(rows)


MALFORMED = {
    # name: (file, how to break it, expected words in the message)
    "metrics missing field": ("metrics.json", lambda d: d.pop("metric_engine"),
                              ["metrics.json", "metric_engine", "missing"]),
    "metrics NaN": ("metrics.json",
                    lambda d: d["rows"][0]["metrics"].__setitem__("MRR", math.nan),
                    ["metrics.json", "rows[0].metrics.MRR", "finite"]),
    "unknown tier": ("metrics.json", lambda d: d["corpora"][0].__setitem__("tier", "Z"),
                     ["metrics.json", "corpora[0].tier", "unknown licence tier"]),
    "row without class": ("metrics.json", lambda d: d["rows"][0].__setitem__("query_class", None),
                          ["metrics.json", "rows[0].query_class"]),
    "per_query line missing a field": ("per_query.jsonl", _drop_measure,
                                       ["per_query.jsonl:2", "measure", "missing"]),
    "per_query NaN": ("per_query.jsonl", lambda r: _set(r, 0, value=math.nan),
                      ["per_query.jsonl:1", "value", "finite"]),
    "per_query tier disagrees": ("per_query.jsonl", lambda r: _set(r, 2, tier="B"),
                                 ["per_query.jsonl:3", "tier", "disagrees"]),
    "per_query unknown corpus": ("per_query.jsonl", lambda r: _set(r, 3, corpus="other"),
                                 ["per_query.jsonl:4", "corpus", "not listed"]),
    "per_query unreported measure": ("per_query.jsonl", lambda r: _set(r, 4, measure="P@5"),
                                     ["per_query.jsonl:5", "measure", "not reported"]),
    "per_query duplicate": ("per_query.jsonl", lambda r: _dumps_lines(r + [r[0]]),
                            ["per_query.jsonl:7", "query_id", "two"]),
    "per_query value not the claim": ("per_query.jsonl", lambda r: _set(r, 0, value=0.9),
                                      ["per_query.jsonl", "value", "average"]),
    "per_query query missing": ("per_query.jsonl", lambda r: _dumps_lines(r[:-2]),
                                ["metrics.json", "rows[", "per_query.jsonl holds", "but the row says n="]),
    "runinfo from another claim": ("runinfo.json", lambda d: d.__setitem__("run_id", "0" * 64),
                                   ["runinfo.json", "run_id", "changed after"]),
    "latency sample negative": ("runinfo.json",
                                lambda d: d["retrieval_latency_ms"]["samples"].__setitem__(1, -4),
                                ["runinfo.json", "retrieval_latency_ms.samples[1]"]),
    "latency concurrency zero": ("runinfo.json",
                                 lambda d: d["retrieval_latency_ms"].__setitem__("concurrency", 0),
                                 ["runinfo.json", "concurrency"]),
}


def _drop_class(rows):
    del rows[2]["query_class"]
    return _dumps_lines(rows)


# Only with query classes (no null class) does per_query.jsonl take the Arrow fast path;
# these must fall back to the harness's line-by-line validator and its wording.
FAST_PATH_ONLY = {
    "per_query class key missing": ("per_query.jsonl", _drop_class,
                                    ["per_query.jsonl:3", "query_class", "missing"]),
    "per_query two objects on a line": (
        "per_query.jsonl", lambda r: [json.dumps(r[0]) + " " + json.dumps(r[1])]
        + _dumps_lines(r[2:]), ["per_query.jsonl:1", "not valid JSON"]),
    "per_query value as text": ("per_query.jsonl", lambda r: _set(r, 1, value="0.5"),
                                ["per_query.jsonl:2", "value", "finite"]),
}
CASES = [(case, False) for case in sorted(MALFORMED)] + [
    (case, True) for case in sorted(MALFORMED) if MALFORMED[case][0] == "per_query.jsonl"] + [
    (case, True) for case in sorted(FAST_PATH_ONLY)]


@pytest.mark.parametrize("case,classed", CASES)
def test_malformed_results_are_refused_with_nothing_written(tmp_path, db, case, classed):
    ingest_results(simple_run(tmp_path / "good", control_name="good"), db)
    before = snapshot(db)
    bad = simple_run(tmp_path / "bad", control_name="bad", offset=0.01, latency=[1.0, 2.0],
                     classed=classed)
    name, change, words = {**MALFORMED, **FAST_PATH_ONLY}[case]
    path = bad / name
    if name.endswith(".jsonl"):
        _edit_lines(path, change)
    else:
        _edit_json(path, change)
    with pytest.raises(IngestRefused) as info:
        ingest_results(bad, db)
    for word in words:
        assert word in str(info.value)
    assert snapshot(db) == before


def test_missing_per_query_file_is_refused(tmp_path, db):
    out = simple_run(tmp_path / "r")
    (out / "per_query.jsonl").unlink()
    with pytest.raises(IngestRefused, match="per_query.jsonl.*missing"):
        ingest_results(out, db)
    assert not db.exists()


def test_bad_ranking_rows_are_refused(tmp_path, db):
    rankings = [{"corpus": "pub", "query_id": "q1", "rank": 0, "doc_id": "d1", "score": 1.0}]
    out = build_results(tmp_path / "r", {("pub", "q1"): {"MRR": 1.0}},
                        corpora={"pub": ("A", "MIT")}, rankings=rankings)
    with pytest.raises(IngestRefused, match=r"rankings.jsonl:1: field 'rank'"):
        ingest_results(out, db)


def test_fast_and_exact_per_query_readers_agree(tmp_path):
    from warehouse.load import _exact_per_query, _fast_per_query

    out = simple_run(tmp_path / "r", n_queries=5, classed=True)
    path = out / "per_query.jsonl"
    fast = _fast_per_query(path)
    assert fast is not None and fast.num_rows == 5 * 2
    assert fast.equals(_exact_per_query(out, path))
    # a null class is ambiguous with a missing one: the exact path decides
    assert _fast_per_query(simple_run(tmp_path / "u") / "per_query.jsonl") is None


def test_blank_lines_count_in_line_numbers_and_any_edit_breaks_the_pin(tmp_path, db):
    out = simple_run(tmp_path / "r", classed=True)
    path = out / "per_query.jsonl"
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n")
    # the claim pins the bytes it summarises: even a blank line is a change after writing
    with pytest.raises(IngestRefused, match=r"metrics.json: field 'files.per_query.jsonl'.*"
                                            r"changed after the claim was written"):
        ingest_results(out, db)
    bad = simple_run(tmp_path / "b", classed=True, offset=0.2)
    lines = [json.loads(line) for line in (bad / "per_query.jsonl").read_text().splitlines()]
    lines[1]["tier"] = "B"
    (bad / "per_query.jsonl").write_text(
        json.dumps(lines[0]) + "\n\n" + "".join(json.dumps(r) + "\n" for r in lines[1:]))
    with pytest.raises(IngestRefused, match=r"per_query.jsonl:3: field 'tier'"):
        ingest_results(bad, db)
