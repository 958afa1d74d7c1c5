"""Hybrid arms on OpenSearch: every fusion arm of the embedded backend runs unchanged (the
harness fuses), and the node's own fusion (neural-search) is compared with it."""

from __future__ import annotations

import math

import pytest

from harness.core.doc_ids import rank_key
from harness.retrieval.arms import fusion_window, resolve_fusion
from harness.retrieval.backends.opensearch.backend import OpenSearchBackend
from harness.retrieval.fusion import fuse

from .conftest import static_encoder
from .helpers import bench, docs_and_queries, jsonl, read

SIZE = 48

ARMS = [
    [],
    ["--fusion", "rrf", "--rank-constant", "30"],
    ["--fusion", "normalization"],
    ["--fusion", "normalization", "--combination-weights", "0.7,0.3"],
    ["--fusion", "normalization", "--combination-technique", "geometric_mean"],
    ["--fusion", "normalization", "--combination-technique", "harmonic_mean"],
    ["--fusion", "normalization", "--normalization-technique", "l2"],
    ["--fusion", "normalization", "--normalization-technique", "z_score"],
]


@pytest.mark.parametrize("arm", ARMS, ids=lambda a: "-".join(a[1::2]) or "default")
def test_every_fusion_arm_runs_on_opensearch_like_on_the_embedded_backend(
        os_url, synthetic_path, static_flags, tmp_path, arm):
    """With chunks of at most 39 words Lucene's document lengths are exact and the synthetic
    corpus has no empty chunk, so BM25 agrees to float precision (test_parity.py) and exact
    dense search returns the embedded lists: every arm must give the same rankings and rows."""
    spec = f"synthetic:{synthetic_path}"
    flags = ["--mode", "hybrid", "--max-words", "39", *static_flags, *arm]
    assert bench(tmp_path / "embedded", None, spec, extra=flags, backend="embedded") == 0
    assert bench(tmp_path / "opensearch", os_url, spec,
                 extra=flags + ["--opensearch-dense", "exact"]) == 0
    mine, theirs = read(tmp_path / "embedded" / "metrics.json"), \
        read(tmp_path / "opensearch" / "metrics.json")
    assert theirs["retrieval"]["fusion"] == mine["retrieval"]["fusion"]
    assert (mine["retrieval"]["backend"], theirs["retrieval"]["backend"]) == ("embedded",
                                                                              "opensearch")
    assert theirs["rows"] == mine["rows"]
    ranked = [[(r["query_id"], r["doc_id"]) for r in jsonl(tmp_path / side / "rankings.jsonl")]
              for side in ("embedded", "opensearch")]
    assert ranked[0] == ranked[1] and len(ranked[0]) > 40 * SIZE


# --------------------------------------------------------------------------- server-side


@pytest.fixture(scope="module")
def both_sites(os_url, synthetic_path, static_model, os_cache):
    """One every-document index read by two backends: the harness fuses one's legs, the
    node fuses for the other."""
    docs, queries = docs_and_queries(f"synthetic:{synthetic_path}", 200)
    encoder = static_encoder(static_model, os_cache)
    server = OpenSearchBackend(url=os_url, encoder=encoder, progress=False, fusion="server")
    client = OpenSearchBackend(url=os_url, encoder=encoder, progress=False,
                               vector_layout="every-document")
    for backend in (server, client):
        backend.index(docs, ["bm25", "dense"])
        backend.prepare_queries(queries)
    assert server.index_name == client.index_name
    legs = client.search_legs(["bm25", "dense"], queries, fusion_window(SIZE))
    yield queries, server, legs
    server.close()
    client.close()


def _ids(ranked):
    return [doc_id for doc_id, _ in ranked]


def _same_up_to_near_ties(a, b, tol=1e-6) -> bool:
    """Equal lists, except that documents whose scores differ by less than ``tol`` (float32
    on the node, float64 here) may swap."""
    if sorted(_ids(a)) != sorted(_ids(b)) and len(a) == len(b):
        cut = min(s for _, s in a)
        outside = set(_ids(a)) ^ set(_ids(b))
        if any(abs(dict(a + b)[d] - cut) > tol for d in outside):
            return False
    score = dict(a)
    for (x, _), (y, _) in zip(a, b):
        if x != y and abs(score.get(x, math.inf) - score.get(y, -math.inf)) > tol:
            return False
    return True


def test_server_side_rrf_gives_the_client_side_rankings(both_sites):
    queries, server, legs = both_sites
    spec = resolve_fusion("rrf", 60)
    fused = server.fused_search(queries, spec, SIZE)
    for q in queries:
        client = fuse([legs["bm25"][q.query_id], legs["dense"][q.query_id]], spec, SIZE)
        assert _same_up_to_near_ties(client, fused[q.query_id]), q.query_id
    assert sum(_ids(fuse([legs["bm25"][q.query_id], legs["dense"][q.query_id]], spec, SIZE))
               == _ids(fused[q.query_id]) for q in queries) == len(queries)


def floored_min_max(scores):
    """neural-search 2.19's min_max, written from its rule: (s - min) / (max - min), a 0
    becomes 0.001, a single distinct score becomes 1."""
    lo, hi = min(scores), max(scores)
    if hi == lo:
        return [1.0] * len(scores)
    return [max((s - lo) / (hi - lo), 0.0) or 0.001 for s in scores]


def floored_fusion(legs, weights, size):
    window = fusion_window(size)
    per_leg = []
    for leg in legs:
        cut = leg[:window]
        per_leg.append(dict(zip((d for d, _ in cut), floored_min_max([s for _, s in cut]))))
    docs = set().union(*per_leg)
    fused = {d: sum(w * leg.get(d, 0.0) for w, leg in zip(weights, per_leg)) / sum(weights)
             for d in docs}
    return sorted(fused.items(), key=lambda p: rank_key(p[0], p[1]))[:size]


@pytest.mark.parametrize("weights", [None, "0.7,0.3"])
def test_server_side_min_max_differs_from_the_harness_only_by_its_floor(both_sites, weights):
    queries, server, legs = both_sites
    spec = resolve_fusion("normalization", None, "min_max", "arithmetic_mean", weights)
    fused = server.fused_search(queries, spec, SIZE)
    w = [0.5, 0.5] if weights is None else [0.7, 0.3]
    same_as_harness = 0
    for q in queries:
        pair = [legs["bm25"][q.query_id], legs["dense"][q.query_id]]
        assert _same_up_to_near_ties(floored_fusion(pair, w, SIZE), fused[q.query_id]), q.query_id
        same_as_harness += _same_up_to_near_ties(fuse(pair, spec, SIZE), fused[q.query_id])
    print(f"server-side min_max {weights or 'equal weights'}: {same_as_harness} of "
          f"{len(queries)} rankings identical to the harness's (the rest: the 0.001 floor)")
    assert same_as_harness >= 0.9 * len(queries)


def test_server_side_arms_run_and_record_their_pipeline(os_url, synthetic_path, static_flags,
                                                        tmp_path):
    spec = f"synthetic:{synthetic_path}"
    for name, arm in (("rrf", []), ("minmax", ["--fusion", "normalization"]),
                      ("geometric", ["--fusion", "normalization", "--combination-technique",
                                     "geometric_mean"])):
        out = tmp_path / name
        assert bench(out, os_url, spec, extra=["--mode", "hybrid", *static_flags, *arm,
                                               "--opensearch-fusion", "server"]) == 0
        fusion = read(out / "metrics.json")["retrieval"]["fusion"]
        assert fusion["computed_by"] == "server"
        assert fusion["arm_id"].endswith("-server")
        assert fusion["pipeline_id"] == "harness-" + fusion["arm_id"][:-len("-server")]
        assert f"`{fusion['arm_id']}`" in (out / "metrics.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("arm, message", [
    (["--fusion", "normalization", "--normalization-technique", "z_score"],
     "normalization-processor has no 'z_score'"),
    (["--fusion", "rrf", "--rank-constant", "30"], "ignores rank_constant"),
])
def test_server_side_arms_2_19_cannot_compute_are_refused(os_url, synthetic_path, static_flags,
                                                          tmp_path, capsys, arm, message):
    out = tmp_path / "refused"
    assert bench(out, os_url, f"synthetic:{synthetic_path}",
                 extra=["--mode", "hybrid", *static_flags, *arm,
                        "--opensearch-fusion", "server"]) == 5
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_the_documented_prediction_holds_on_a_corpus_no_other_test_uses(
        os_url, static_flags, tmp_path):
    """docs/opensearch.md: chunks of at most 39 tokens, none token-less, text both tokenisers
    split alike -> identical rows; a fresh seed of the generator, never used elsewhere."""
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus
    from ingestion.synthetic import generate

    from harness.retrieval.backends.tokenizer import Tokenizer

    path = generate(97, 16, tmp_path / "fresh")
    chunks = chunk_corpus(load_corpus(f"synthetic:{path}"), max_words=39)
    assert all(0 < len(Tokenizer()(c.text)) <= 39 for c in chunks)  # the prediction applies
    flags = ["--mode", "hybrid", "--max-words", "39", "--fusion", "normalization", *static_flags]
    assert bench(tmp_path / "e", None, f"synthetic:{path}", extra=flags, backend="embedded") == 0
    assert bench(tmp_path / "o", os_url, f"synthetic:{path}",
                 extra=flags + ["--opensearch-dense", "exact"]) == 0
    assert read(tmp_path / "o" / "metrics.json")["rows"] == read(tmp_path / "e" / "metrics.json")["rows"]
