"""Two runs against an unchanged index write byte-identical claim files; a write between
runs is detected and refused; a rebuild gives the first run's claim back."""

from __future__ import annotations

from .helpers import CLAIM_FILES, bench, index_name, read


def test_runs_on_an_unchanged_index_are_byte_identical_and_a_write_is_refused(
        opensearch_node, os_url, synthetic_path, static_flags, tmp_path, capsys):
    spec = f"synthetic:{synthetic_path}"
    flags = ["--mode", "hybrid", "--opensearch-index-prefix", "determinism",
             "--opensearch-rebuild", *static_flags, "--control-name", "arm"]
    assert bench(tmp_path / "one", os_url, spec, extra=flags) == 0
    again = [f for f in flags if f != "--opensearch-rebuild"]
    assert bench(tmp_path / "two", os_url, spec,
                 extra=again + ["--workers", "3", "--query-batch", "4"]) == 0
    for name in CLAIM_FILES:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes(), name
    # the second run loaded nothing and embedded no document
    info = read(tmp_path / "two" / "runinfo.json")
    assert info["backend"]["opensearch"]["loaded_by_this_run"] is False
    assert info["embedding"]["by_role"].get("documents", {}).get("requested", 0) == 0

    name = index_name(tmp_path / "one")
    status, hit = opensearch_node.request("GET", f"/{name}/_doc/{sorted_first(opensearch_node, name)}")
    assert status == 200
    source = dict(hit["_source"], text=hit["_source"]["text"] + " edited")
    assert opensearch_node.request("PUT", f"/{name}/_doc/{hit['_id']}?refresh=true", source)[0] == 200
    capsys.readouterr()
    assert bench(tmp_path / "three", os_url, spec, extra=again) == 5
    assert "was written after this product loaded and sealed it" in capsys.readouterr().err
    assert not (tmp_path / "three").exists()

    # rebuilt from the corpus, the index measures what it measured before, byte for byte
    assert bench(tmp_path / "four", os_url, spec, extra=flags) == 0
    for name in CLAIM_FILES:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "four" / name).read_bytes(), name


def sorted_first(node, name: str) -> str:
    status, body = node.request("POST", f"/{name}/_search", {"size": 1, "sort": ["doc_id"]})
    assert status == 200, body
    return body["hits"]["hits"][0]["_id"]
