"""The embedding model is surveyed from the indexed documents, with the embedded backend's
verdicts; a mixed index exits 3 and writes nothing."""

from __future__ import annotations

import pytest

from harness.retrieval.backends import BACKENDS

from .fakes import OTHER_MODEL
from .helpers import bench, read


def _label(static_model, os_cache):
    from .conftest import static_encoder

    return static_encoder(static_model, os_cache).label


def test_a_uniform_index_names_the_model_its_documents_record(os_url, tiny_qmsum, static_flags,
                                                              static_model, os_cache, tmp_path):
    assert bench(tmp_path / "run", os_url, f"qmsum:{tiny_qmsum}",
                 extra=["--mode", "vector", *static_flags]) == 0
    index = read(tmp_path / "run" / "metrics.json")["index"]
    label = _label(static_model, os_cache)
    assert (index["embedding_models"], index["embedding_verdict"], index["embedding_unattributed"],
            index["embedding_dimension"], index["configured_embedding_model"]) == (
        [label], "uniform", 0, 64, label)


def test_a_text_only_index_has_no_embedding(os_url, tiny_qmsum, tmp_path):
    assert bench(tmp_path / "run", os_url, f"qmsum:{tiny_qmsum}", extra=["--mode", "bm25"]) == 0
    index = read(tmp_path / "run" / "metrics.json")["index"]
    assert (index["embedding_models"], index["embedding_verdict"],
            index["embedding_dimension"]) == ([], "empty", None)


@pytest.mark.parametrize("fake, verdict, silent_file", [
    ("PartlySilentBackend", "partially_unattributed", True),
    ("SilentBackend", "unattributed", None),
])
def test_documents_that_name_no_model_are_counted(monkeypatch, os_url, tiny_qmsum, static_flags,
                                                  static_model, os_cache, tmp_path, fake,
                                                  verdict, silent_file):
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus

    monkeypatch.setitem(BACKENDS, "opensearch", f"tests.harness.retrieval.opensearch.fakes:{fake}")
    assert bench(tmp_path / "run", os_url, f"qmsum:{tiny_qmsum}",
                 extra=["--mode", "vector", *static_flags]) == 0
    index = read(tmp_path / "run" / "metrics.json")["index"]
    chunks = chunk_corpus(load_corpus(f"qmsum:{tiny_qmsum}"))
    first = sum(1 for c in chunks if c.file_id == "Ta001")
    label = _label(static_model, os_cache)
    assert index["embedding_verdict"] == verdict
    assert index["configured_embedding_model"] == label  # what the settings say, kept apart
    if silent_file:
        assert (index["embedding_models"], index["embedding_unattributed"]) == ([label], first)
    else:
        assert (index["embedding_models"], index["embedding_unattributed"]) == ([], len(chunks))


def test_a_mixed_index_exits_3_and_writes_nothing(monkeypatch, os_url, tiny_qmsum, static_flags,
                                                  static_model, os_cache, tmp_path, capsys):
    monkeypatch.setitem(BACKENDS, "opensearch",
                        "tests.harness.retrieval.opensearch.fakes:MixedBackend")
    out = tmp_path / "mixed"
    assert bench(out, os_url, f"qmsum:{tiny_qmsum}",
                 extra=["--mode", "hybrid", *static_flags]) == 3
    err = capsys.readouterr().err
    assert "2 named embedding models" in err and OTHER_MODEL in err
    assert _label(static_model, os_cache) in err
    assert not out.exists()
