"""Speaker-turn chunking: sentence splitting, the total order, ids, whole files, documents."""

from __future__ import annotations

import pytest

from harness.core.records import Query
from ingestion.chunking import chunk_corpus, split_sentences, split_turn_text
from ingestion.corpus import DOCUMENTS, MEETING, Corpus, Document, FileRecord, SourceInfo, Turn

INFO = SourceInfo(name="t", version=None, licence="MIT", tier="A", evidence="test", sha256="0" * 64)


def meeting(turns, files=("m",), title="Team — sync #1") -> Corpus:
    return Corpus(source=INFO, kind=MEETING,
                  files=tuple(FileRecord(f, title=title) for f in files), turns=tuple(turns))


def words(n, start=0):
    return " ".join(f"w{i}" for i in range(start, start + n))


def test_split_sentences_is_a_fixed_regex():
    text = 'First one. Second? "Third!" Fourth . Fifth'
    assert split_sentences(text) == ["First one.", "Second?", '"Third!"', "Fourth .", "Fifth"]


def test_long_turn_splits_at_sentence_boundaries():
    # sentences of 90, 90 and 60 words: 90+90 fit in 200, the 60-word one starts a new chunk
    s1, s2, s3 = words(89) + " end.", words(89, 100) + " end.", words(59, 200) + " end."
    parts = split_turn_text(f"{s1} {s2} {s3}", 200)
    assert [len(p) for p in parts] == [180, 60]
    assert parts[0][-1] == "end." and parts[1][0] == "w200"


def test_a_sentence_longer_than_the_limit_is_cut_every_max_words():
    parts = split_turn_text(words(450) + ".", 200)
    assert [len(p) for p in parts] == [200, 200, 50]


def test_chunks_carry_fractions_times_and_ids():
    # one 250-word turn of five 50-word sentences, 10 s long: chunks of 200 and 50 words
    text = " ".join(words(50, 50 * k) + "." for k in range(5))
    corpus = meeting([Turn("m", 0, "A", 0.0, 10.0, text), Turn("m", 1, "B", 10.0, 11.0, "ok then")])
    chunks = chunk_corpus(corpus)
    assert [c.doc_id for c in chunks] == ["m_0", "m_1", "m_2"]
    first, second, third = chunks
    assert (first.turn_indexes, first.turn_fractions) == ((0,), (200 / 250,))
    assert (second.turn_indexes, second.turn_fractions) == ((0,), (50 / 250,))
    assert (first.start, first.end) == (0.0, 10.0 * 200 / 250)
    assert (second.start, second.end) == (10.0 * 200 / 250, 10.0)
    assert (third.speaker, third.text, third.turn_fractions) == ("B", "ok then", (1.0,))
    assert all(c.title == "Team — sync #1" and c.doc_type == "chunk" for c in chunks)
    assert len(first.text.split()) == 200


def test_tied_onsets_follow_the_total_order_start_end_id():
    # a backchannel with the same onset as a long turn sorts first (it ends first);
    # two turns with identical times are ordered by turn index
    turns = [
        Turn("m", 0, "A", 0.0, 5.0, "a long turn here"),
        Turn("m", 1, "B", 0.0, 0.5, "Mm-hmm."),
        Turn("m", 2, "C", 6.0, 7.0, "third"),
        Turn("m", 3, "D", 6.0, 7.0, "fourth"),
    ]
    chunks = chunk_corpus(meeting(turns))
    assert [(c.chunk_index, c.turn_indexes[0]) for c in chunks] == [(0, 1), (1, 0), (2, 2), (3, 3)]
    assert chunk_corpus(meeting(list(reversed(turns)))) == chunks  # input order never matters


def test_empty_turns_make_no_chunk():
    chunks = chunk_corpus(meeting([Turn("m", 0, "A", 0.0, 0.4, ""), Turn("m", 1, "B", 0.4, 0.8, "hi")]))
    assert [(c.doc_id, c.turn_indexes) for c in chunks] == [("m_0", (1,))]


def test_file_granularity_is_one_document_per_file():
    turns = [Turn("m", 0, "A", 0.0, 1.0, "one"), Turn("m", 1, "B", 1.0, 2.0, "two"),
             Turn("n", 0, "C", 0.0, 3.0, "three")]
    docs = chunk_corpus(meeting(turns, files=("m", "n")), granularity="file")
    assert [(d.doc_id, d.file_id, d.doc_type, d.text) for d in docs] == [
        ("m", "m", "doc", "A: one\nB: two"), ("n", "n", "doc", "C: three")]
    assert (docs[0].start, docs[0].end, docs[0].turn_indexes) == (0.0, 2.0, (0, 1))


def test_document_corpus_is_one_chunk_per_document():
    corpus = Corpus(source=INFO, kind=DOCUMENTS,
                    documents=(Document("d2", "", "b"), Document("d1", "T", "a")),
                    queries=(Query("q", "x", None, "t"),))
    chunks = chunk_corpus(corpus)
    assert [(c.doc_id, c.file_id, c.doc_type, c.title, c.text) for c in chunks] == [
        ("d1", "d1", "doc", "T", "a"), ("d2", "d2", "doc", None, "b")]


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match=r"\['chunk', 'file'\]"):
        chunk_corpus(meeting([]), granularity="page")
    with pytest.raises(ValueError, match="max_words"):
        chunk_corpus(meeting([]), max_words=0)
