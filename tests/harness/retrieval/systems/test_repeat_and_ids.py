"""``--repeat``: the run-to-run band of every measure and the queries whose ranking
changed; returned ids unknown to the corpus counted, and refused above half."""

from __future__ import annotations

import json

import pytest

from .conftest import bench, http_args
from .server import SystemServer


def _rows(path):
    return {(r["corpus"], r["query_class"]): r["metrics"]
            for r in json.loads((path / "metrics.json").read_text())["rows"]}


def test_repeat_records_the_band_and_the_changed_queries(tmp_path, synthetic, rankings,
                                                         embedded):
    moved = [q for q in sorted(rankings) if len(rankings[q]) > 9][:2]

    def second_round_swaps(query_id, attempt):
        return "swap" if query_id in moved and attempt == 2 else None

    with SystemServer(rankings, fault=second_round_swaps) as server:
        assert bench(synthetic, *http_args(server.url, "--repeat", "3"),
                     "--out", str(tmp_path / "rep")) == 0
        assert server.requests == 3 * 48
    # the swapped ranking measured on its own: the band's other end
    with SystemServer(rankings, fault=lambda q, a: "swap" if q in moved else None) as server:
        assert bench(synthetic, *http_args(server.url), "--out", str(tmp_path / "swapped")) == 0
    clean, swapped = _rows(embedded), _rows(tmp_path / "swapped")
    doc = json.loads((tmp_path / "rep" / "metrics.json").read_text())
    band = doc["system_under_test"]["repeat_band"]
    assert band["repeats"] == 3
    assert band["changed_query_ids"] == sorted(moved) and band["queries_changed"] == 2
    widest = 0.0
    for entry in band["band"]:
        key = (entry["corpus"], entry["query_class"])
        a, b = clean[key][entry["measure"]], swapped[key][entry["measure"]]
        assert entry["min"] == min(a, b) and entry["max"] == max(a, b)
        widest = max(widest, abs(a - b))
    assert widest > 0 and band["widest"] == pytest.approx(widest, abs=1e-9)
    assert _rows(tmp_path / "rep") == clean  # the claim's rows are the first repeat's
    runinfo = json.loads((tmp_path / "rep" / "runinfo.json").read_text())["backend"]
    assert len(runinfo["queries"]) == 3 * 48 and f"{moved[0]}#3" in runinfo["queries"]


def test_a_stable_system_has_a_zero_band(tmp_path, synthetic, rankings):
    with SystemServer(rankings) as server:
        assert bench(synthetic, *http_args(server.url, "--repeat", "2"),
                     "--out", str(tmp_path / "rep")) == 0
    band = json.loads((tmp_path / "rep" / "metrics.json").read_text())[
        "system_under_test"]["repeat_band"]
    assert band["widest"] == 0.0 and band["changed_query_ids"] == []


def test_unknown_ids_are_counted_below_half(tmp_path, synthetic, rankings):
    with SystemServer(rankings, fault=lambda q, a: "few-text-ids") as server:
        assert bench(synthetic, *http_args(server.url), "--out", str(tmp_path / "out")) == 0
    sut = json.loads((tmp_path / "out" / "metrics.json").read_text())["system_under_test"]
    returned = sum(len(v) for v in rankings.values())
    answered = sum(1 for v in rankings.values() if v)
    assert sut["returned_ids"] == {"returned": returned, "unknown_to_corpus": answered}


def test_more_than_half_unknown_ids_are_refused_with_three_examples(tmp_path, synthetic,
                                                                    rankings, capsys):
    with SystemServer(rankings, fault=lambda q, a: "text-ids") as server:
        code = bench(synthetic, *http_args(server.url), "--out", str(tmp_path / "out"))
    err = capsys.readouterr().err
    returned = sum(len(v) for v in rankings.values())
    assert code == 5
    assert f"{returned} of {returned} returned document ids (100%) are not in the corpus" in err
    assert "(e.g. 'other-0', 'other-1', 'other-10';" in err
    assert "likely mismatch: the system indexes another id scheme" in err
    assert not (tmp_path / "out").exists()


def test_file_ids_from_a_chunked_corpus_name_the_mismatch(tmp_path, synthetic, rankings,
                                                          capsys):
    from harness.core.doc_ids import file_of

    files = {q: list({file_of(d): s for d, s in docs}.items()) for q, docs in rankings.items()}
    with SystemServer(files) as server:
        code = bench(synthetic, *http_args(server.url), "--out", str(tmp_path / "out"))
    err = capsys.readouterr().err
    assert code == 5 and "returns file (meeting) ids where the corpus is chunked" in err
