"""Every key part of the prepared-corpus and BM25 index caches, changed in turn: the entries
it names are rebuilt (a miss), the others are still served (a hit), and the claim files are
byte-identical to a run that uses no cache at all."""

from __future__ import annotations

import json

import pytest

from harness.retrieval import index_cache
from harness.retrieval.prepared import prepared_cache
from harness.retrieval.cache_store import source_revision

from ..tiny import write_qmsum
from .helpers import claims, outcomes, run_one_arm


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("HARNESS_PREPARED_CACHE", raising=False)


@pytest.fixture
def corpus(tmp_path):
    root = write_qmsum(tmp_path / "corpora" / "qmsum")
    return root, f"qmsum:{root}"


def _edit_turn(root):
    path = sorted((root / "data" / "Product" / "val").glob("*.json"))[0]
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["meeting_transcripts"][0]["content"] += " battery"
    path.write_text(json.dumps(doc), encoding="utf-8")


def _licence_above(root):
    (root.parent / "LICENSE").write_text("all rights reserved\n", encoding="utf-8")


def _new_code(monkeypatch):
    monkeypatch.setattr(prepared_cache, "code_revision", lambda: "another revision")
    monkeypatch.setattr(index_cache, "code_revision", lambda: "another revision")


#: change -> (arm options, edit of the world, expected (source, prepared, bm25 index)).
#: Chunking changes the indexed texts, so the index too; judgements do not; BM25
#: parameters change only the index; the corpus's bytes change everything; a licence file
#: where attribution looks changes only the source entry (same content digest).
CASES = {
    "max_words": ({"max_words": 5}, None, ("hit", "miss", "miss")),
    "granularity": ({"granularity": "file"}, None, ("hit", "miss", "miss")),
    "relevance_high": ({"relevance_high": 0.8}, None, ("hit", "miss", "hit")),
    "relevance_low": ({"relevance_low": 0.2}, None, ("hit", "miss", "hit")),
    "binary": ({"binary": True}, None, ("hit", "miss", "hit")),
    "k1": ({"k1": 0.9}, None, ("hit", "hit", "miss")),
    "b": ({"b": 0.4}, None, ("hit", "hit", "miss")),
    "corpus_bytes": ({}, "edit", ("miss", "miss", "miss")),
    "licence_evidence": ({}, "licence", ("miss", "hit", "hit")),
    "code_revision": ({}, "code", ("miss", "miss", "miss")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_key_part_invalidates_what_it_names(case, corpus, tmp_path, monkeypatch):
    root, spec = corpus
    cache = tmp_path / "cache"
    run_one_arm(spec, tmp_path / "first", cache)
    assert outcomes(tmp_path / "first") == ("miss", "miss", "miss")
    run_one_arm(spec, tmp_path / "again", cache)
    assert outcomes(tmp_path / "again") == ("hit", "hit", "hit")

    options, edit, expected = CASES[case]
    if edit == "edit":
        _edit_turn(root)
    elif edit == "licence":
        _licence_above(root)
    elif edit == "code":
        _new_code(monkeypatch)
    run_one_arm(spec, tmp_path / "changed", cache, **options)
    assert outcomes(tmp_path / "changed") == expected
    run_one_arm(spec, tmp_path / "uncached", tmp_path / "unused", prepared_cache=False, **options)
    assert claims(tmp_path / "changed") == claims(tmp_path / "uncached")
    assert not (tmp_path / "unused").exists()  # the uncached run wrote no cache


def test_an_edited_corpus_changes_the_numbers_the_cache_serves(corpus, tmp_path):
    """The invalidation matters: the edited corpus's claim differs from the first one."""
    root, spec = corpus
    cache = tmp_path / "cache"
    run_one_arm(spec, tmp_path / "first", cache)
    _edit_turn(root)
    run_one_arm(spec, tmp_path / "changed", cache)
    first = json.loads(claims(tmp_path / "first")["metrics.json"])
    changed = json.loads(claims(tmp_path / "changed")["metrics.json"])
    assert first["corpora"][0]["sha256"] != changed["corpora"][0]["sha256"]


def test_an_unreadable_entry_is_rebuilt(corpus, tmp_path):
    _, spec = corpus
    cache = tmp_path / "cache"
    run_one_arm(spec, tmp_path / "first", cache)
    (entry,) = [p for p in (cache / "prepared" / "corpora").iterdir() if p.is_file()]
    entry.write_bytes(entry.read_bytes()[:100])  # truncated, as by a disk fault
    run_one_arm(spec, tmp_path / "second", cache)
    assert outcomes(tmp_path / "second") == ("hit", "miss", "hit")
    assert claims(tmp_path / "second") == claims(tmp_path / "first")


def test_a_dead_writers_temporary_file_is_removed(corpus, tmp_path):
    _, spec = corpus
    cache = tmp_path / "cache"
    run_one_arm(spec, tmp_path / "first", cache)
    store = cache / "prepared" / "corpora"
    (entry,) = [p for p in store.iterdir() if p.is_file()]
    stale = store / f".tmp-{entry.name}-dead"
    stale.write_bytes(b"half")
    entry.unlink()
    run_one_arm(spec, tmp_path / "second", cache)
    assert not stale.exists()
    assert outcomes(tmp_path / "second") == ("hit", "miss", "hit")


def test_the_environment_variable_moves_the_cache(corpus, tmp_path, monkeypatch):
    _, spec = corpus
    monkeypatch.setenv("HARNESS_PREPARED_CACHE", str(tmp_path / "elsewhere"))
    run_one_arm(spec, tmp_path / "first", tmp_path / "cache")
    assert (tmp_path / "elsewhere" / "corpora").is_dir()
    assert not (tmp_path / "cache" / "prepared").exists()


def test_the_code_revision_follows_every_byte_and_name_of_the_sources(tmp_path):
    one, two = tmp_path / "one.py", tmp_path / "two.py"
    one.write_text("x = 1\n")
    two.write_text("y = 2\n")
    base = source_revision([one, two], root=tmp_path)
    assert source_revision([two, one], root=tmp_path) == base  # order given does not matter
    one.write_text("x = 2\n")
    assert source_revision([one, two], root=tmp_path) != base
    one.write_text("x = 1\n")
    assert source_revision([one, two], root=tmp_path) == base
    renamed = tmp_path / "three.py"
    one.rename(renamed)
    assert source_revision([renamed, two], root=tmp_path) != base


def test_the_revision_covers_the_loaders_chunker_judge_and_tokeniser():
    from harness.retrieval.cache_store import SOURCE_ROOT, source_files

    prepared = {p.relative_to(SOURCE_ROOT).as_posix()
                for p in source_files(*prepared_cache.REVISION_SOURCES)}
    assert {"ingestion/chunking.py", "ingestion/judgements.py", "ingestion/loaders/qmsum.py",
            "ingestion/digest.py", "harness/retrieval/prepared/prepare.py"} <= prepared
    index = {p.relative_to(SOURCE_ROOT).as_posix()
             for p in source_files(*index_cache.REVISION_SOURCES)}
    assert {"harness/retrieval/backends/embedded.py",
            "harness/retrieval/backends/tokenizer.py"} <= index
