"""BEIR and TREC loaders: layouts, splits, names and licences, strict errors."""

from __future__ import annotations

import json

import pytest

from harness.core.formats import FormatError
from ingestion import load_corpus
from ingestion.chunking import chunk_corpus
from ingestion.judgements import judge

from .helpers import write_beir


def test_beir_loads_the_test_split_by_default(tmp_path):
    corpus = load_corpus(f"beir:{write_beir(tmp_path / 'ToySet')}")
    assert corpus.name == "beir-toyset" and corpus.kind == "documents"
    assert [d.doc_id for d in corpus.documents] == ["d1", "d2", "d3", "d4"]
    queries = {q.query_id: q for q in corpus.queries}
    assert set(queries) == {"q1", "q2"}  # q3 is judged only in dev
    assert queries["q2"].gold_docs == (("d3", 2), ("d4", 0))
    assert queries["q2"].gold_files == ("d3",)  # positive judgements only
    assert queries["q1"].query_class is None
    notes = dict(corpus.notes)
    assert (notes["split"], notes["queries_without_judgements_skipped"]) == ("test", 1)
    # unregistered dataset: fails closed
    assert (corpus.source.licence, corpus.source.tier, corpus.source.registry_source) == \
        ("unknown", "B", None)


def test_beir_split_is_chosen_by_pointing_at_a_qrels_file(tmp_path):
    folder = write_beir(tmp_path / "toyset")
    corpus = load_corpus(f"beir:{folder / 'qrels' / 'dev.tsv'}")
    assert [q.query_id for q in corpus.queries] == ["q3"]
    assert dict(corpus.notes)["split"] == "dev"


def test_beir_registered_dataset_gets_its_traced_licence(tmp_path, monkeypatch):
    monkeypatch.setenv("INGESTION_DATA_DIR", str(tmp_path / "no-fetch-cache"))
    corpus = load_corpus(f"beir:{write_beir(tmp_path / 'scifact')}")
    assert corpus.name == "beir-scifact"
    assert (corpus.source.licence, corpus.source.tier) == ("CC-BY-NC-2.0", "B")
    # a publishable registered licence needs evidence tied to the files (a name is not)
    named = load_corpus(f"beir:{write_beir(tmp_path / 'x')}", name="beir-hotpotqa")
    assert (named.name, named.source.licence, named.source.tier) == \
        ("beir-hotpotqa", "unknown", "B")


def test_beir_without_test_split_and_several_others_must_be_named(tmp_path):
    folder = write_beir(tmp_path / "t", qrels={"train": [("q1", "d1", 1)], "dev": [("q3", "d2", 1)]})
    with pytest.raises(ValueError, match=r"several splits \['dev', 'train'\]"):
        load_corpus(f"beir:{folder}")


def test_beir_errors_name_file_line_and_field(tmp_path):
    folder = write_beir(tmp_path / "dup", docs=[{"_id": "d1", "text": "a"}, {"_id": "d1", "text": "b"}])
    with pytest.raises(FormatError, match=r"corpus.jsonl:2: field '_id': duplicate document id"):
        load_corpus(f"beir:{folder}")
    folder = write_beir(tmp_path / "missing", queries=[{"_id": "q1", "text": "x"}])
    with pytest.raises(FormatError, match=r"test.tsv: field 'query_id': 1 judged queries have no text"):
        load_corpus(f"beir:{folder}")
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="missing corpus.jsonl"):
        load_corpus(f"beir:{tmp_path / 'empty'}")


def test_beir_chunks_and_judgements(tmp_path):
    corpus = load_corpus(f"beir:{write_beir(tmp_path / 'toyset')}")
    result = judge(corpus, chunk_corpus(corpus))
    assert result.qrels == {"q1": {"d1": 1}, "q2": {"d3": 2, "d4": 0}}


SGML = """<top>
<num> Number: 301
<title> International Organized Crime
<desc> Description:
Identify organizations.
</top>
<top>
<num> Number: 302
<title> Poliomyelitis and
Post-Polio
<narr> Narrative: anything.
</top>
"""

XML = """<topics>
<topic number="1"><query>coronavirus origin</query><question>What is it?</question></topic>
<topic number="2"><query>masks &amp; spread</query></topic>
</topics>
"""


def _trec(folder, topics_name, topics_text, docs_field="docno"):
    folder.mkdir(parents=True)
    docs = [{docs_field: "D1", "text": "organized crime groups"}, {docs_field: "D2", "text": "polio"}]
    (folder / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    (folder / topics_name).write_text(topics_text, encoding="utf-8")
    return folder


def test_trec_sgml_topics(tmp_path):
    folder = _trec(tmp_path / "Robust-Mini", "topics.txt", SGML)
    (folder / "qrels.txt").write_text("301 0 D1 1\n302 0 D2 2\n302 0 D1 0\n", encoding="utf-8")
    corpus = load_corpus(f"trec:{folder}")
    assert corpus.name == "trec-robust-mini" and corpus.source.tier == "B"
    texts = {q.query_id: q.text for q in corpus.queries}
    assert texts == {"301": "International Organized Crime", "302": "Poliomyelitis and Post-Polio"}
    assert {q.query_id: q.gold_docs for q in corpus.queries}["302"] == (("D1", 0), ("D2", 2))


def test_trec_xml_and_tsv_topics(tmp_path):
    folder = _trec(tmp_path / "covid", "topics.xml", XML, docs_field="doc_id")
    (folder / "qrels").write_text("1 0 D1 1\n2 0 D2 1\n", encoding="utf-8")
    corpus = load_corpus(f"trec:{folder}")
    assert {q.query_id: q.text for q in corpus.queries} == {"1": "coronavirus origin", "2": "masks & spread"}
    folder = _trec(tmp_path / "tsv", "topics.tsv", "7\tfirst topic\n8\tsecond topic\n")
    (folder / "qrels.txt").write_text("7 0 D1 1\n", encoding="utf-8")
    corpus = load_corpus(f"trec:{folder}")
    assert [(q.query_id, q.text) for q in corpus.queries] == [("7", "first topic")]


def test_trec_missing_files_are_named(tmp_path):
    folder = _trec(tmp_path / "t", "topics.tsv", "7\tx\n")
    with pytest.raises(FileNotFoundError, match=r"no qrels file; expected one of \['qrels.txt'"):
        load_corpus(f"trec:{folder}")
    (folder / "qrels.txt").write_text("7 0 D1 1\n", encoding="utf-8")
    (folder / "topics.tsv").write_text("7\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"topics.tsv:1: expected 'query_id<TAB>text'"):
        load_corpus(f"trec:{folder}")
