"""QMSum loader: upstream layout, deduplication, spans, classes, timings; the real val split."""

from __future__ import annotations

import json

import pytest

from harness.core.formats import FormatError
from ingestion import load_corpus
from ingestion.chunking import chunk_corpus
from ingestion.cli import main
from ingestion.judgements import RelevancePolicy, judge
from ingestion.loaders.qmsum import classify_query
from ingestion.timing import MS_PER_WORD

from .helpers import qmsum_meeting, write_json


def _upstream(root):
    """A fake upstream repository: the same meetings under ALL/<split>, <Domain>/all and
    <Domain>/<split>, like the real one.

    Academic: B1 (train, 5 turns), B2 (val, 6 turns); Product: P1 (test, 4 turns, one
    query with two spans); Committee: C1 only under Committee/all (no split).
    """
    b1 = qmsum_meeting(5, [("What did A think about X?", [(0, 2)])])
    b2 = qmsum_meeting(6, [("Summarize the discussion about Y.", [(1, 3)]),
                           ("Why did B disagree?", [(4, 5)])])
    p1 = qmsum_meeting(4, [("Give an overview of Z", [(0, 0), (2, 3)])])
    c1 = qmsum_meeting(3, [("What was decided?", [(0, 2)])])
    data = root / "data"
    for folder, meeting, doc in [
        ("ALL/train", "B1", b1), ("Academic/all", "B1", b1), ("Academic/train", "B1", b1),
        ("ALL/val", "B2", b2), ("Academic/all", "B2", b2), ("Academic/val", "B2", b2),
        ("ALL/test", "P1", p1), ("Product/all", "P1", p1), ("Product/test", "P1", p1),
        ("Committee/all", "C1", c1),
    ]:
        write_json(data / folder / f"{meeting}.json", doc)
    (data / "ALL" / "jsonl").mkdir(parents=True)
    (data / "ALL" / "jsonl" / "train.jsonl").write_text("ignored\n", encoding="utf-8")
    return root


def test_overlapping_upstream_folders_are_deduplicated_by_meeting_id(tmp_path):
    corpus = load_corpus(f"qmsum:{_upstream(tmp_path / 'QMSum')}")
    assert corpus.name == "qmsum"
    assert [f.file_id for f in corpus.files] == ["B1", "B2", "C1", "P1"]
    assert len(corpus.turns) == 5 + 6 + 3 + 4
    assert len(corpus.queries) == 1 + 2 + 1 + 1
    domains = {f.file_id: f.domain for f in corpus.files}
    splits = {f.file_id: f.split for f in corpus.files}
    assert domains == {"B1": "Academic", "B2": "Academic", "C1": "Committee", "P1": "Product"}
    assert splits == {"B1": "train", "B2": "val", "C1": None, "P1": "test"}
    notes = dict(corpus.notes)
    # 10 JSON copies of 4 meetings: 6 duplicates; every copy identical
    assert (notes["json_files_read"], notes["duplicate_copies"], notes["copies_differing"]) == (10, 6, 0)
    assert notes["general_queries_skipped"] == 4


def test_a_domain_folder_is_its_own_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("INGESTION_DATA_DIR", str(tmp_path / "no-fetch-cache"))
    root = _upstream(tmp_path / "QMSum")
    corpus = load_corpus(f"qmsum:{root / 'data' / 'Academic'}")
    assert corpus.name == "qmsum-academic"
    assert [f.file_id for f in corpus.files] == ["B1", "B2"]
    # the fake tree has no LICENSE and no fetch manifest: the name proves nothing
    assert (corpus.source.registry_source, corpus.source.tier) == (None, "B")


def test_differing_copies_use_the_most_specific_folder_and_are_counted(tmp_path):
    root = _upstream(tmp_path / "QMSum")
    write_json(root / "data" / "ALL" / "train" / "B1.json",
               qmsum_meeting(9, [("What did A think about X?", [(0, 2)])]))
    corpus = load_corpus(f"qmsum:{root}")
    assert sum(1 for t in corpus.turns if t.file_id == "B1") == 5  # Academic/train wins
    assert dict(corpus.notes)["copies_differing"] == 1


def test_spans_become_inclusive_integer_ranges_and_ids_follow_the_meeting(tmp_path):
    corpus = load_corpus(f"qmsum:{_upstream(tmp_path / 'QMSum')}")
    q = {q.query_id: q for q in corpus.queries}
    assert set(q) == {"B1-s0", "B2-s0", "B2-s1", "C1-s0", "P1-s0"}
    assert q["P1-s0"].gold_spans == (("P1", 0, 0), ("P1", 2, 3))
    assert q["P1-s0"].gold_files == ("P1",)
    assert q["B2-s1"].gold_spans == (("B2", 4, 5),)
    assert (q["B2-s0"].query_class, q["B2-s1"].query_class) == ("summarize", "lookup")
    assert dict(q["B1-s0"].extra)["split"] == "train"


def test_synthetic_timings_from_word_counts(tmp_path):
    write_json(tmp_path / "d" / "Product" / "val" / "M.json",
               {"meeting_transcripts": [{"speaker": "A", "content": "one two three"},
                                        {"speaker": "B", "content": ""},
                                        {"speaker": "A", "content": "four five"}],
                "specific_query_list": []})
    corpus = load_corpus(f"qmsum:{tmp_path / 'd' / 'Product'}")
    # 400 ms per word (2.5 words/s); an empty turn still lasts one word's time
    assert MS_PER_WORD == 400
    assert [(t.start, t.end) for t in corpus.turns] == [(0.0, 1.2), (1.2, 1.6), (1.6, 2.4)]
    (record,) = corpus.files
    assert (record.timing, record.recorded_date, record.duration) == ("synthetic", None, 2.4)


@pytest.mark.parametrize("span, message", [
    (["3", "1"], "first<=last"),
    (["a", "2"], "must be integers"),
    (["1"], "pair"),
])
def test_bad_spans_name_the_file_and_field(tmp_path, span, message):
    doc = qmsum_meeting(4, [])
    doc["specific_query_list"] = [{"query": "q", "answer": "a", "relevant_text_span": [span]}]
    write_json(tmp_path / "d" / "Product" / "val" / "M.json", doc)
    with pytest.raises(FormatError, match=message) as err:
        load_corpus(f"qmsum:{tmp_path / 'd'}")
    assert "M.json" in str(err.value)
    assert "specific_query_list[0].relevant_text_span" in str(err.value)


def test_spans_past_the_transcript_are_clipped_and_counted(tmp_path):
    write_json(tmp_path / "d" / "Product" / "val" / "M.json",
               qmsum_meeting(4, [("q", [(2, 9)]), ("r", [(7, 8), (0, 1)])]))
    corpus = load_corpus(f"qmsum:{tmp_path / 'd'}")
    q = {q.query_id: q for q in corpus.queries}
    assert q["M-s0"].gold_spans == (("M", 2, 3),)
    assert q["M-s1"].gold_spans == (("M", 0, 1),)
    notes = dict(corpus.notes)
    assert (notes["spans_clipped"], notes["spans_out_of_range"]) == (1, 1)


def test_not_a_qmsum_layout(tmp_path):
    with pytest.raises(FileNotFoundError, match="no QMSum layout"):
        load_corpus(f"qmsum:{tmp_path}")
    with pytest.raises(ValueError, match=r"\['beir', 'qmsum', 'synthetic', 'trec'\]"):
        load_corpus(f"ami:{tmp_path}")


@pytest.mark.parametrize("text, cls", [
    ("Summarize the discussion about the remote control.", "summarize"),
    ("summarise what the group said", "summarize"),
    ("  Sum up the budget debate", "summarize"),
    ("Give an overview of the evaluation", "summarize"),
    ("What was the general discussion of the meeting?", "summarize"),
    ("What did the professor think about clustering?", "lookup"),
    ("Why did Marketing want to summarize the trends?", "lookup"),
    ("How did the team summarise the results of the survey?", "lookup"),
])
def test_summarize_rule(text, cls):
    assert classify_query(text) == cls


# --------------------------------------------------------------------------- real val split


@pytest.fixture(scope="module")
def val_corpus(qmsum_val):
    return load_corpus(f"qmsum:{qmsum_val}")


def test_real_val_split_counts(val_corpus):
    corpus = val_corpus
    # figures from the split's PROVENANCE: 35 meetings (9 Academic, 6 Committee, 20 Product),
    # 237 specific queries, 20,123 turns
    assert len(corpus.files) == 35
    assert len(corpus.queries) == 237
    assert len(corpus.turns) == 20123
    domains = {}
    for f in corpus.files:
        domains[f.domain] = domains.get(f.domain, 0) + 1
    assert domains == {"Academic": 9, "Committee": 6, "Product": 20}
    assert {f.split for f in corpus.files} == {"val"}
    assert {q.query_class for q in corpus.queries} == {"lookup", "summarize"}
    assert corpus.source.tier == "A"


def test_real_val_every_gold_span_maps_to_a_chunk(val_corpus):
    corpus = val_corpus
    chunks = chunk_corpus(corpus)
    judged = judge(corpus, chunks, RelevancePolicy())
    assert judged.dropped == ()
    assert set(judged.qrels) == {q.query_id for q in corpus.queries}
    # each span on its own (not only the union per query) reaches a judged chunk
    by_file = {}
    for c in chunks:
        by_file.setdefault(c.file_id, []).append(c)
    for q in corpus.queries:
        for file_id, first, last in q.gold_spans:
            hits = [c for c in by_file[file_id]
                    if any(first <= i <= last for i in c.turn_indexes)
                    and c.doc_id in judged.qrels[q.query_id]]
            assert hits, f"{q.query_id}: span {first}-{last} maps to no chunk"


def test_real_val_stats_json(qmsum_val, capsys):
    assert main(["stats", f"qmsum:{qmsum_val}", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    # words counted independently of the loader, straight from the JSON files
    words = 0
    for path in sorted((qmsum_val / "data").glob("*/*/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        words += sum(len(t["content"].split()) for t in doc["meeting_transcripts"])
    assert {k: stats[k] for k in ("corpus", "files", "turns", "queries", "words", "domains",
                                  "splits", "licence", "tier")} == {
        "corpus": "qmsum", "files": 35, "turns": 20123, "queries": 237, "words": words,
        "domains": {"Academic": 9, "Committee": 6, "Product": 20}, "splits": {"val": 35},
        "licence": "MIT", "tier": "A"}
    assert sum(stats["queries_per_class"].values()) == 237
    assert stats["timing"] == {"synthetic": 35} and stats["dated_files"] == 0


def test_real_val_composition_orders_the_domains(qmsum_val, val_corpus):
    """The methodology's finding holds on the val split: the one-scenario Product domain has
    the most near-duplicates and the lowest R@1, Committee the fewest and the highest."""
    from ingestion.composition import composition

    groups = composition(val_corpus)["groups"]
    per_domain = {}
    for path in sorted((qmsum_val / "data").glob("*/*/*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        domain = path.parent.parent.name
        per_domain[domain] = per_domain.get(domain, 0) + len(doc["specific_query_list"])
    assert {d: groups[d]["queries"] for d in per_domain} == per_domain
    assert groups["all"]["queries"] == 237
    assert groups["Product"]["r_at_1"] < groups["Academic"]["r_at_1"] < groups["Committee"]["r_at_1"]
    assert groups["Product"]["near_duplicate_rate"] > groups["Committee"]["near_duplicate_rate"]
