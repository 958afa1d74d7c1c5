"""Gold turn ranges -> graded chunk judgements, with every coverage worked out by hand."""

from __future__ import annotations

import pytest

from harness.core.records import Chunk, Query
from ingestion.chunking import chunk_corpus
from ingestion.corpus import DOCUMENTS, MEETING, Corpus, Document, FileRecord, SourceInfo, Turn
from ingestion.judgements import RelevancePolicy, file_qrels, judge

INFO = SourceInfo(name="t", version=None, licence="MIT", tier="A", evidence="test", sha256="0" * 64)


def q(query_id, *spans, scored_on="rank"):
    return Query(query_id, "text", "lookup", "t", gold_spans=tuple(("m", a, b) for a, b in spans),
                 gold_files=("m",), scored_on=scored_on)


def corpus(turns, queries):
    return Corpus(source=INFO, kind=MEETING, files=(FileRecord("m"),), turns=tuple(turns),
                  queries=tuple(queries))


def window(doc_id, speaker, start, end):
    """A chunk from an indexer that records only speaker and time window (no turn ids)."""
    return Chunk(doc_id, "m", int(doc_id.split("_")[1]), "chunk", speaker, start, end, "text")


# turn 0: A 0-4 s, 8 words; turn 1: B 3-7 s, 20 words (overlaps A); turn 2: A 6-10 s, 12 words
OVERLAP = [Turn("m", 0, "A", 0.0, 4.0, " ".join(["a"] * 8)),
           Turn("m", 1, "B", 3.0, 7.0, " ".join(["b"] * 20)),
           Turn("m", 2, "A", 6.0, 10.0, " ".join(["c"] * 12))]
# chunk of A over 2-10 s: half of turn 0 (8 x 2/4 = 4 words) + all of turn 2 (12) = 16 words
CLIPPED = window("m_0", "A", 2.0, 10.0)


def test_chunk_clipped_by_a_span():
    result = judge(corpus(OVERLAP, [q("clip", (0, 0))]), [CLIPPED])
    assert result.coverage[("clip", "m_0")] == pytest.approx(4 / 16)  # 0 < 0.25 < 0.5
    assert result.qrels == {"clip": {"m_0": 1}}


def test_overlapping_turn_of_another_speaker_does_not_count():
    result = judge(corpus(OVERLAP, [q("mixed", (1, 2)), q("only_b", (1, 1))]), [CLIPPED])
    # B's 20 words overlap the window but are not A's: 12 / 16, not (20 + 12) / (4 + 20 + 12)
    assert result.coverage[("mixed", "m_0")] == pytest.approx(12 / 16)
    assert result.qrels == {"mixed": {"m_0": 2}}
    # a span holding only B's turn maps to none of A's chunks: dropped and counted
    assert result.dropped == ("only_b",)


def test_adjacent_spans_are_unioned_before_grading():
    turns = [Turn("m", 0, "A", 0.0, 2.0, "one two three four five"),
             Turn("m", 1, "A", 2.0, 4.0, "six seven eight nine ten"),
             Turn("m", 2, "A", 4.0, 8.0, " ".join(["x"] * 10))]
    chunk = window("m_0", "A", 0.0, 8.0)  # 5 + 5 + 10 = 20 words
    result = judge(corpus(turns, [q("both", (0, 0), (1, 1)), q("one", (0, 0))]), [chunk])
    # each span alone: 5 / 20 = 0.25 -> grade 1; together 10 / 20 = 0.5 >= 0.5 -> grade 2
    assert result.coverage[("one", "m_0")] == pytest.approx(5 / 20)
    assert result.coverage[("both", "m_0")] == pytest.approx(10 / 20)
    assert result.qrels == {"both": {"m_0": 2}, "one": {"m_0": 1}}


def test_recorded_turn_fractions_are_used_and_other_speakers_skipped():
    turns = [Turn("m", 0, "A", 0.0, 10.0, " ".join(["a"] * 40)),
             Turn("m", 1, "B", 2.0, 3.0, "b b b b b b b b b b")]
    # 30 of turn 0's 40 words; turn 1 listed but spoken by B: skipped
    chunk = Chunk("m_0", "m", 0, "chunk", "A", 0.0, 7.5, "x", turn_indexes=(0, 1),
                  turn_fractions=(0.75, 1.0))
    result = judge(corpus(turns, [q("a", (0, 0)), q("b", (1, 1))]), [chunk])
    assert result.coverage == {("a", "m_0"): 1.0}
    assert result.qrels == {"a": {"m_0": 2}}
    assert result.dropped == ("b",)


def test_policy_thresholds_and_binary():
    c = corpus(OVERLAP, [q("clip", (0, 0)), q("mixed", (1, 2))])
    assert judge(c, [CLIPPED], RelevancePolicy(binary=True)).qrels == \
        {"clip": {"m_0": 1}, "mixed": {"m_0": 1}}
    # high 0.8: 0.75 is only a 1; low 0.3: 0.25 is a 0, so "clip" has nothing and is dropped
    strict = judge(c, [CLIPPED], RelevancePolicy(relevance_high=0.8, relevance_low=0.3))
    assert strict.qrels == {"mixed": {"m_0": 1}}
    assert strict.dropped == ("clip",)


def test_policy_block_and_validation():
    block = RelevancePolicy().block()
    assert {k: block[k] for k in ("gain", "binary", "relevance_high", "relevance_low")} == \
        {"gain": "linear", "binary": False, "relevance_high": 0.5, "relevance_low": 0.0}
    assert set(block) == {"graded_from", "gain", "binary", "relevance_high", "relevance_low",
                          "negative_labels"}
    with pytest.raises(ValueError, match="relevance_low < relevance_high"):
        RelevancePolicy(relevance_high=0.2, relevance_low=0.3)
    with pytest.raises(ValueError, match="finite"):
        RelevancePolicy(relevance_high=float("nan"))


def test_aggregation_queries_and_digests_are_not_judged():
    c = corpus(OVERLAP, [q("agg", (0, 0), scored_on="answer")])
    digest = Chunk("m_digest", "m", -1, "digest", None, 0.0, 10.0, "summary")
    result = judge(c, [CLIPPED, digest])
    assert (result.qrels, result.dropped) == ({}, ())


def test_whole_file_documents_use_the_same_rule():
    # 8 + 20 + 12 = 40 words; span turn 1: 20 / 40 = 0.5 -> grade 2
    c = corpus(OVERLAP, [q("b", (1, 1))])
    result = judge(c, chunk_corpus(c, granularity="file"))
    assert result.coverage == {("b", "m"): 0.5}
    assert result.qrels == {"b": {"m": 2}}


def test_chunker_output_maps_a_split_turn_fully():
    text = " ".join(f"w{i}." for i in range(250))
    c = corpus([Turn("m", 0, "A", 0.0, 100.0, text)], [q("all", (0, 0))])
    chunks = chunk_corpus(c)
    assert len(chunks) == 2
    assert judge(c, chunks).qrels == {"all": {"m_0": 2, "m_1": 2}}


def test_document_corpus_judgements_come_from_gold_docs():
    c = Corpus(source=INFO, kind=DOCUMENTS,
               documents=(Document("d1", "", "x"), Document("d2", "", "y")),
               queries=(Query("q1", "t", None, "t", gold_docs=(("d1", 2), ("d2", 0), ("d9", 1)),
                              gold_files=("d1", "d9")),
                        Query("q2", "t", None, "t", gold_docs=(("d2", 0),))))
    chunks = chunk_corpus(c)
    result = judge(c, chunks)
    assert result.qrels == {"q1": {"d1": 2, "d2": 0}}
    assert (result.dropped, result.unmatched_judgements) == (("q2",), 1)
    assert judge(c, chunks, RelevancePolicy(binary=True)).qrels == {"q1": {"d1": 1, "d2": 0}}
    assert file_qrels(c) == {"q1": {"d1": 1, "d9": 1}}


def test_file_qrels_of_a_meeting_corpus():
    c = corpus(OVERLAP, [q("a", (0, 0)), q("agg", scored_on="answer"),
                         Query("none", "t", "lookup", "t")])
    assert file_qrels(c) == {"a": {"m": 1}}


def test_chunk_of_an_unknown_file_is_an_error():
    with pytest.raises(ValueError, match="file 'x' is not in corpus"):
        judge(corpus(OVERLAP, [q("a", (0, 0))]), [Chunk("x_0", "x", 0, "chunk", "A", 0.0, 1.0, "t")])
