"""An index changed after it was loaded (closed, given other BM25 parameters or stop words,
reopened) keeps the ``_meta`` it was loaded with; the backend reads the live settings and
mappings back before measuring and refuses it (exit 5, nothing written) instead of recording
the old settings beside numbers the new ones produced."""

from __future__ import annotations

import pytest

from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.opensearch import mapping

from .helpers import bench, index_name, read


def test_live_settings_equal_to_the_body_pass_and_each_change_is_named():
    body = mapping.index_body("embedded", 1.2, 0.75, 4, {})
    # what the node returns: every leaf a string
    settings = {"similarity": {"default": {"type": "BM25", "k1": "1.2", "b": "0.75"}},
                "analysis": mapping._plain(body["settings"]["analysis"]),
                "number_of_shards": "1", "uuid": "x"}
    settings["analysis"]["tokenizer"]["word_runs"]["group"] = "0"
    props = body["mappings"]["properties"]
    mapping.check_live("i", settings, {"properties": props}, body)
    changed = {**settings, "similarity": {"default": {"type": "BM25", "k1": "2.0", "b": "0.75"}}}
    with pytest.raises(BackendError, match="index.similarity.default.k1 is 2.0, built with 1.2"):
        mapping.check_live("i", changed, {"properties": props}, body)
    searched = {**props, "text": {**props["text"], "search_analyzer": "standard"}}
    with pytest.raises(BackendError, match="mappings.text.search_analyzer is 'standard'"):
        mapping.check_live("i", settings, {"properties": searched}, body)
    with pytest.raises(BackendError, match="it is closed, not open"):
        mapping.check_live("i", settings, {"properties": props}, body, "closed")


def _change(node, name, settings):
    assert node.request("POST", f"/{name}/_close")[0] == 200
    status, answer = node.request("PUT", f"/{name}/_settings", {"index": settings})
    assert status == 200, answer
    assert node.request("POST", f"/{name}/_open")[0] == 200
    node.request("GET", f"/_cluster/health/{name}?wait_for_status=yellow&timeout=30s")


@pytest.mark.parametrize("settings, message", [
    ({"similarity": {"default": {"type": "BM25", "k1": 2.0, "b": 0.3}}},
     "index.similarity.default.b is 0.3, built with 0.75; index.similarity.default.k1 is 2.0"),
    ({"analysis": {"filter": {"embedded_stop": {"type": "stop", "stopwords": ["the"]}}}},
     "index.analysis.filter.embedded_stop.stopwords is ['the']"),
])
def test_an_index_changed_after_loading_is_refused_before_measuring(
        opensearch_node, os_url, tiny_qmsum, tmp_path, capsys, settings, message):
    spec = f"qmsum:{tiny_qmsum}"
    prefix = "live-" + ("k" if "similarity" in settings else "s")
    flags = ["--mode", "bm25", "--opensearch-index-prefix", prefix]
    assert bench(tmp_path / "first", os_url, spec, extra=flags) == 0
    name = index_name(tmp_path / "first")
    assert bench(tmp_path / "again", os_url, spec, extra=flags) == 0  # unchanged: measured
    assert read(tmp_path / "again" / "metrics.json")["rows"] == \
        read(tmp_path / "first" / "metrics.json")["rows"]
    _change(opensearch_node, name, settings)
    capsys.readouterr()
    assert bench(tmp_path / "changed", os_url, spec, extra=flags) == 5
    err = capsys.readouterr().err
    assert f"refusing index {name!r}: its live settings differ" in err and message in err
    assert "--opensearch-rebuild" in err and not (tmp_path / "changed").exists()
    # rebuilt, the index is this run's again
    assert bench(tmp_path / "rebuilt", os_url, spec, extra=flags + ["--opensearch-rebuild"]) == 0
    assert read(tmp_path / "rebuilt" / "metrics.json")["rows"] == \
        read(tmp_path / "first" / "metrics.json")["rows"]


def test_a_closed_index_is_refused(opensearch_node, os_url, tiny_qmsum, tmp_path, capsys):
    spec = f"qmsum:{tiny_qmsum}"
    flags = ["--mode", "bm25", "--opensearch-index-prefix", "live-closed"]
    assert bench(tmp_path / "first", os_url, spec, extra=flags) == 0
    name = index_name(tmp_path / "first")
    assert opensearch_node.request("POST", f"/{name}/_close")[0] == 200
    capsys.readouterr()
    try:
        assert bench(tmp_path / "closed", os_url, spec, extra=flags) == 5
        assert f"refusing index {name!r}: it is closed, not open" in capsys.readouterr().err
    finally:
        opensearch_node.request("POST", f"/{name}/_open")
