"""The index body, its name, and existing indexes refused before anything touches them."""

from __future__ import annotations

import pytest

from harness.retrieval.backends.base import BackendError, IndexDoc
from harness.retrieval.backends.opensearch import mapping

from .helpers import bench, index_name, read


def _shape():
    return mapping.shape("embedded", 1.2, 0.75, {"model": "m@1", "dimension": 4})


def test_every_knn_vector_in_the_body_names_the_lucene_engine():
    body = mapping.index_body("embedded", 1.2, 0.75, 8, {"product": mapping.PRODUCT})
    fields = mapping.knn_fields(body["mappings"]["properties"])
    assert list(fields) == ["vector"]
    assert fields["vector"]["method"] == {"name": "hnsw", "engine": "lucene",
                                          "space_type": "innerproduct",
                                          "parameters": {"m": 16, "ef_construction": 128}}
    settings = body["settings"]["index"]
    assert (settings["number_of_shards"], settings["number_of_replicas"],
            settings["refresh_interval"], settings["knn"]) == (1, 0, "-1", True)
    assert settings["similarity"]["default"] == {"type": "BM25", "k1": 1.2, "b": 0.75}
    # a text-only index has no vector field and no k-NN
    text_only = mapping.index_body("embedded", 1.2, 0.75, None, {})
    assert mapping.knn_fields(text_only["mappings"]["properties"]) == {}
    assert text_only["settings"]["index"]["knn"] is False


def test_the_stop_filter_holds_exactly_the_embedded_tokenizers_stop_words():
    from harness.retrieval.backends.tokenizer import stopwords

    stop = mapping.analysis("embedded")["filter"]["embedded_stop"]["stopwords"]
    assert stop == sorted(stopwords()) and len(stop) == 33


def test_the_name_changes_with_the_corpus_and_with_every_shaping_parameter():
    docs = [IndexDoc("f_0", "f", "alpha beta", "alpha beta")]
    other = [IndexDoc("f_0", "f", "alpha gamma", "alpha gamma")]
    base = mapping.index_name("harness", _shape(), mapping.documents_digest(docs))
    assert base.startswith("harness-") and len(base) == len("harness-") + 16
    assert base == mapping.index_name("harness", _shape(), mapping.documents_digest(docs))
    variants = [
        mapping.index_name("harness", _shape(), mapping.documents_digest(other)),
        mapping.index_name("harness", mapping.shape("whitespace-lowercase", 1.2, 0.75,
                                                    {"model": "m@1", "dimension": 4}),
                           mapping.documents_digest(docs)),
        mapping.index_name("harness", mapping.shape("embedded", 0.9, 0.75,
                                                    {"model": "m@1", "dimension": 4}),
                           mapping.documents_digest(docs)),
        mapping.index_name("harness", mapping.shape("embedded", 1.2, 0.75,
                                                    {"model": "m@2", "dimension": 4}),
                           mapping.documents_digest(docs)),
        mapping.index_name("harness", mapping.shape("embedded", 1.2, 0.75, None),
                           mapping.documents_digest(docs)),
    ]
    assert len({base, *variants}) == 6


def _mapping(**meta_changes):
    meta = mapping.meta(_shape(), "d" * 64, "load", 1, 1, sealed_seq_no=0)
    meta.update(meta_changes)
    body = mapping.index_body("embedded", 1.2, 0.75, 4, meta)
    return body["mappings"]


def test_an_index_of_this_product_and_this_shape_is_accepted():
    assert mapping.check_existing("i", _mapping(), _shape(), "d" * 64)["load_id"] == "load"


@pytest.mark.parametrize("change, message", [
    ({"product": None}, "was not written by this product"),
    ({"mapping_version": 0}, "mapping is version 0, this product writes version 1"),
    ({"sealed_seq_no": None}, "load never completed"),
    ({"documents_sha256": "e" * 64}, "shape or document digest differs"),
])
def test_an_existing_index_is_refused_with_the_reason(change, message):
    with pytest.raises(BackendError, match=message):
        mapping.check_existing("i", _mapping(**change), _shape(), "d" * 64)


def test_a_vector_field_without_the_lucene_engine_is_refused_before_use():
    found = _mapping()
    found["properties"]["vector"] = {"type": "knn_vector", "dimension": 4}
    with pytest.raises(BackendError, match="names engine None, not 'lucene'"):
        mapping.check_existing("i", found, _shape(), "d" * 64)
    nested = _mapping()
    nested["properties"]["text"]["fields"]["emb"] = {
        "type": "knn_vector", "dimension": 4,
        "method": {"name": "hnsw", "engine": "faiss", "space_type": "l2"}}
    with pytest.raises(BackendError, match="'text.emb' names engine 'faiss'"):
        mapping.check_existing("i", nested, _shape(), "d" * 64)


# --------------------------------------------------------------------------- on the node


def _legacy_body():
    """What an older version of this product wrote: its marker, mapping version 0, and a
    knn_vector with no method (2.19 would pick faiss for it at the first refresh)."""
    return {"settings": {"index": {"number_of_shards": 1, "number_of_replicas": 0,
                                   "knn": True}},
            "mappings": {"_meta": {"product": mapping.PRODUCT, "mapping_version": 0},
                         "properties": {"text": {"type": "text"},
                                        "vector": {"type": "knn_vector", "dimension": 64}}}}


def test_an_index_from_an_older_product_version_is_refused_untouched(
        opensearch_node, os_url, tiny_qmsum, static_flags, tmp_path, capsys):
    spec = f"qmsum:{tiny_qmsum}"
    flags = ["--mode", "vector", "--opensearch-index-prefix", "legacy", *static_flags]
    assert bench(tmp_path / "first", os_url, spec, extra=flags) == 0
    name = index_name(tmp_path / "first")
    assert opensearch_node.request("DELETE", f"/{name}")[0] == 200
    status, _ = opensearch_node.request("PUT", f"/{name}", _legacy_body())
    assert status == 200
    capsys.readouterr()

    assert bench(tmp_path / "refused", os_url, spec, extra=flags) == 5
    err = capsys.readouterr().err
    assert f"refusing index {name!r}: its mapping is version 0, this product writes version 1" in err
    assert "knn_vector field 'vector' names engine None, not 'lucene'" in err
    assert "nothing was written" in err and not (tmp_path / "refused").exists()
    # untouched: no document, the old mapping as it was
    assert opensearch_node.request("GET", f"/{name}/_count")[1]["count"] == 0
    found = opensearch_node.request("GET", f"/{name}/_mapping")[1][name]["mappings"]
    assert found["_meta"]["mapping_version"] == 0 and "method" not in found["properties"]["vector"]

    # --opensearch-rebuild deletes this product's old index and loads a new one
    assert bench(tmp_path / "rebuilt", os_url, spec, extra=flags + ["--opensearch-rebuild"]) == 0
    assert read(tmp_path / "rebuilt" / "metrics.json")["rows"] == \
        read(tmp_path / "first" / "metrics.json")["rows"]


def test_another_products_index_is_never_deleted(opensearch_node, os_url, tiny_qmsum,
                                                 tmp_path, capsys):
    spec = f"qmsum:{tiny_qmsum}"
    flags = ["--mode", "bm25", "--opensearch-index-prefix", "foreign"]
    assert bench(tmp_path / "first", os_url, spec, extra=flags) == 0
    name = index_name(tmp_path / "first")
    opensearch_node.request("DELETE", f"/{name}")
    assert opensearch_node.request("PUT", f"/{name}", {"mappings": {"properties": {
        "text": {"type": "text"}}}})[0] == 200
    assert opensearch_node.request("PUT", f"/{name}/_doc/1?refresh=true", {"text": "mine"})[0] == 201
    capsys.readouterr()
    assert bench(tmp_path / "again", os_url, spec, extra=flags + ["--opensearch-rebuild"]) == 5
    assert "was not written by this product" in capsys.readouterr().err
    assert opensearch_node.request("GET", f"/{name}/_count")[1]["count"] == 1
