"""The ``opensearch`` answerer on the session's real node: the same answers as SQL on the
synthetic corpus and on hand-built edge cases, the size limit raising, the same scoring
path, and no aggregation ever sent with a hybrid query."""

from __future__ import annotations

import json

import pytest

from harness.cli import main
from harness.studies.answers.answer import TruncatedResult
from harness.studies.answers.answerers import make_answerer
from harness.studies.answers.grading import AnswerPolicy
from harness.studies.answers.pipeline import run_answers
from ingestion.transcripts import fill, open_store
from tests.ingestion.transcripts.helpers import file, meeting_corpus, turn

PHRASE_RULES = ("R3-count-files", "R4-list-files", "R7-temporal-count")


def _answers(corpora, name, store, url=None, **options):
    if url is not None:
        options["url"] = url
    answerer = make_answerer(name, progress=False, **options) if name == "opensearch" \
        else make_answerer(name)
    try:
        return run_answers(corpora, answerer, AnswerPolicy(), store, progress=False)
    finally:
        getattr(answerer, "close", lambda: None)()


def _identical(url, corpus, store):
    sql = _answers([corpus], "reference", store)
    index = _answers([corpus], "opensearch", store, url)
    pairs = list(zip(sql.document["answers"], index.document["answers"]))
    assert len(pairs) == len(sql.document["answers"]) == len(index.document["answers"])
    for a, b in pairs:
        assert a["query_id"] == b["query_id"]
        assert b["predicted"] == a["predicted"] == a["gold"], (a["query_id"], b["predicted"])
        assert (b["EM"], b["partial"], b["answered"]) == (a["EM"], a["partial"], a["answered"])
        if a["rule"] in PHRASE_RULES:
            assert b["mechanism"].startswith("opensearch:"), b["mechanism"]
            assert b["notes"]["index"].startswith("harness-")
        else:
            assert b["mechanism"] == a["mechanism"]  # R5/R6 read the store, as SQL does
    assert {a["rule"] for a, _ in pairs} >= set(PHRASE_RULES)
    assert index.document["rows"] == sql.document["rows"]
    assert index.document["answerer"]["name"] == "opensearch"
    return len(pairs)


def test_sql_and_opensearch_answers_are_identical_on_the_synthetic_corpus(opensearch_node,
                                                                          corpus, store):
    assert _identical(opensearch_node.url, corpus, store) == 10


def test_sql_and_opensearch_answers_are_identical_on_a_larger_synthetic_corpus(
        opensearch_node, tmp_path_factory):
    from ingestion import load_corpus
    from ingestion.synthetic import generate

    root = tmp_path_factory.mktemp("answers-150")
    corpus = load_corpus(f"synthetic:{generate(11, 150, root / 'synthetic')}")
    store = open_store("sqlite:///" + str(root / "transcripts.sqlite"))
    try:
        fill(store, corpus, progress=False)
        assert _identical(opensearch_node.url, corpus, store) == 40
    finally:
        store.close()


@pytest.fixture
def small(tmp_path):
    files = [
        file("a1", title="Ops — weekly sync #1", team="Ops", kind="weekly sync",
             recorded_date="2025-03-03", roster=["Zoe Quinn"]),
        file("a2", title="Ops — weekly sync #2", team="Ops", kind="weekly sync",
             recorded_date="2025-04-07", roster=["Zoe Quinn"]),
        file("a3", title="Ops — design review #1", team="Ops", kind="design review",
             recorded_date=None, roster=["Cy Holm"]),
        file("a4", title="Ops — design review #2", team="Ops", kind="design review",
             recorded_date="2025-03-20", roster=["Cy Holm"]),
    ]
    turns = [
        turn("a1", 0, "Zoe Quinn", 0, 1, "We talked about the Ärger Lantern audit today."),
        turn("a1", 1, "Zoe Quinn", 1, 2, "The Ärger Lantern audits are separate."),
        turn("a2", 0, "Zoe Quinn", 0, 1, "the ärger lantern audit, once more"),
        turn("a3", 0, "Cy Holm", 0, 1, "Undated, but the Ärger Lantern audit came up."),
        # near misses: plural, a hyphenated compound, a longer word
        turn("a4", 0, "Cy Holm", 0, 1, "Ärger Lantern audits; pre-Ärger Lantern audit; "
                                       "Ärger Lanterns audit."),
    ]
    corpus = meeting_corpus(files, turns, name="small")
    s = open_store("sqlite:///" + str(tmp_path / "small.sqlite"))
    fill(s, corpus, progress=False)
    yield corpus, s
    s.close()


@pytest.mark.parametrize("question, expected", [
    ("How many meetings discussed the Ärger Lantern audit?", 3),
    ("Which meetings mention the Ärger Lantern audit?", ["a1", "a2", "a3"]),
    ("How many meetings in March 2025 discussed the Ärger Lantern audit?", 1),
])
def test_phrase_edge_cases_match_sql(opensearch_node, small, question, expected):
    corpus, store = small
    sql = make_answerer("reference").answer(question, store, "small")
    answerer = make_answerer("opensearch", url=opensearch_node.url, progress=False,
                             index_prefix="answers-small")
    try:
        answerer.prepare([corpus])
        got = answerer.answer(question, store, "small")
        answerer.finish()
    finally:
        answerer.close()
    assert got.value == sql.value == expected
    assert got.notes.get("undated_files_excluded") == sql.notes.get("undated_files_excluded")


def test_a_bucket_list_at_its_size_limit_raises(opensearch_node, small):
    corpus, store = small
    answerer = make_answerer("opensearch", row_limit=2, url=opensearch_node.url, progress=False,
                             index_prefix="answers-small")
    try:
        answerer.prepare([corpus])
        with pytest.raises(TruncatedResult, match="more than 2 files contain 'Ärger Lantern "
                                                  "audit'; the terms aggregation reached its "
                                                  "size limit"):
            answerer.answer("Which meetings mention the Ärger Lantern audit?", store, "small")
        exactly = make_answerer("opensearch", row_limit=3, url=opensearch_node.url,
                                progress=False, index_prefix="answers-small")
        exactly.prepare([corpus])
        assert exactly.answer("How many meetings discussed the Ärger Lantern audit?", store,
                              "small").value == 3
        exactly.close()
    finally:
        answerer.close()


def test_no_aggregation_is_ever_sent_with_a_hybrid_query():
    from harness.retrieval.backends.opensearch.client import Node

    node = Node("http://127.0.0.1:9")  # refused before any request: nothing listens there
    body = {"size": 0, "query": {"hybrid": {"queries": [{"match_all": {}}]}},
            "aggs": {"files": {"terms": {"field": "file_id"}}}}
    with pytest.raises(ValueError, match="aggregation with a hybrid query"):
        node.search("test", "i", body)
    nested = {"query": {"bool": {"must": [{"hybrid": {"queries": []}}]}}, "aggregations": {}}
    nested["aggregations"] = {"x": {"terms": {"field": "file_id"}}}
    with pytest.raises(ValueError, match="aggregation with a hybrid query"):
        node.search("test", "i", nested)


def test_the_cli_scores_opensearch_answers_on_the_same_path(opensearch_node, corpus_dir,
                                                            tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_WAREHOUSE", str(tmp_path / "w.duckdb"))
    out = tmp_path / "answers"
    assert main(["answer", "--corpus", f"synthetic:{corpus_dir}", "--answerer", "opensearch",
                 "--opensearch-url", opensearch_node.url, "--out", str(out), "--no-warehouse",
                 "--no-progress"]) == 0
    doc = json.loads((out / "answers.json").read_text(encoding="utf-8"))
    (row,) = [r for r in doc["rows"] if r["rule"] == "all"]
    assert (row["EM"], row["partial"], row["answered"], row["unanswered"]) == (1.0, 1.0, 1.0, 0)
    assert main(["answer", "--corpus", f"synthetic:{corpus_dir}", "--answerer", "reference",
                 "--opensearch-url", opensearch_node.url, "--out", str(tmp_path / "x"),
                 "--no-warehouse", "--no-progress"]) == 2
