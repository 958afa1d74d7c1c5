"""The embedded backend: tokeniser, Lucene BM25 by hand, exact dense search, restriction."""

from __future__ import annotations

import math

import numpy as np
import pytest

from harness.retrieval.backends import BACKENDS, backend_class
from harness.retrieval.backends.base import IndexDoc, SearchQuery
from harness.retrieval.backends.embedded import EmbeddedBackend
from harness.retrieval.backends.tokenizer import Tokenizer
from harness.retrieval.backends.topk import top_k, top_k_rows


def _doc(doc_id, text, file_id=None):
    return IndexDoc(doc_id, file_id or doc_id.rpartition("_")[0], text, text)


def test_tokenizer_lowercases_drops_stopwords_and_single_characters():
    tok = Tokenizer()
    assert tok("The Remote-Control's battery, a 9V cell: it IS dead!") == \
        ["remote", "control", "battery", "9v", "cell", "dead"]
    assert tok("running runs") == ["running", "runs"]  # no stemming
    assert len(tok.stopwords) == 33


def test_bm25_lucene_scores_by_hand():
    docs = [_doc("f_0", "apple banana apple"), _doc("f_1", "banana cherry"),
            _doc("f_2", "cherry cherry cherry date")]
    backend = EmbeddedBackend(progress=False)
    backend.index(docs, ["bm25"])
    got = dict(backend.search("bm25", [SearchQuery("q", "apple cherry")], 10)["q"])
    # N = 3, avgdl = (3 + 2 + 4) / 3 = 3, k1 = 1.2, b = 0.75
    idf_apple = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    idf_cherry = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expected = {
        "f_0": idf_apple * 2 / (2 + 1.2 * (0.25 + 0.75 * 3 / 3)),
        "f_1": idf_cherry * 1 / (1 + 1.2 * (0.25 + 0.75 * 2 / 3)),
        "f_2": idf_cherry * 3 / (3 + 1.2 * (0.25 + 0.75 * 4 / 3)),
    }
    assert got == pytest.approx(expected, rel=1e-6)
    ranked = backend.search("bm25", [SearchQuery("q", "apple cherry")], 10)["q"]
    assert [d for d, _ in ranked] == sorted(expected, key=lambda d: -expected[d])


def test_bm25_k1_and_b_are_configurable():
    docs = [_doc("f_0", "apple banana apple"), _doc("f_1", "banana cherry")]
    backend = EmbeddedBackend(k1=2.0, b=0.0, progress=False)
    backend.index(docs, ["bm25"])
    got = dict(backend.search("bm25", [SearchQuery("q", "apple")], 10)["q"])
    # b = 0: no length normalisation; tf part = 2 / (2 + 2.0)
    assert got == pytest.approx({"f_0": math.log(1 + 1.5 / 1.5) * 2 / 4}, rel=1e-6)
    assert backend.describe()["bm25"]["k1"] == 2.0 and backend.describe()["bm25"]["b"] == 0.0
    with pytest.raises(ValueError):
        EmbeddedBackend(b=1.5)


def test_bm25_returns_only_matching_documents_and_nothing_for_stopword_queries():
    backend = EmbeddedBackend(progress=False)
    backend.index([_doc("f_0", "apple"), _doc("f_1", "banana")], ["bm25"])
    out = backend.search("bm25", [SearchQuery("q1", "apple"), SearchQuery("q2", "the of a"),
                                  SearchQuery("q3", "unseen words")], 10)
    assert [d for d, _ in out["q1"]] == ["f_0"]
    assert out["q2"] == [] and out["q3"] == []


def test_top_k_breaks_ties_at_the_cut_by_position():
    scores = np.array([0.5, 0.9, 0.5, 0.5, 0.1], dtype=np.float32)
    pos, vals = top_k(scores, 2)
    assert pos.tolist() == [1, 0] and vals.tolist() == [pytest.approx(0.9), 0.5]
    pos, _ = top_k(scores, 3, positions=np.array([2, 3, 4]))
    assert pos.tolist() == [2, 3, 4]
    pos, _ = top_k(np.array([0.0, 2.0, 0.0]), 5, positive_only=True)
    assert pos.tolist() == [1]
    matrix = np.array([[0.5, 0.9, 0.5, 0.5, 0.1], [0.3, 0.2, 0.1, 0.4, 0.0]], dtype=np.float32)
    pos, vals = top_k_rows(matrix, 2)
    assert pos.tolist() == [[1, 0], [3, 0]]
    rng = np.random.default_rng(3)
    tied = rng.integers(0, 4, size=(20, 50)).astype(np.float32)  # many ties everywhere
    pos, vals = top_k_rows(tied, 7)
    for r in range(20):
        expected = sorted(range(50), key=lambda i: (-tied[r, i], i))[:7]
        assert pos[r].tolist() == expected


def test_top_k_on_large_rows_matches_a_full_sort_ties_included():
    """Rows long enough for the block-maximum bound (n >= 16k), full of ties."""
    rng = np.random.default_rng(5)
    k = 100
    matrix = rng.integers(0, 50, size=(4, 20_011)).astype(np.float32)
    matrix[2, :] = 7.0  # one row entirely tied
    pos, vals = top_k_rows(matrix, k)
    for r in range(4):
        expected = sorted(range(matrix.shape[1]), key=lambda i: (-matrix[r, i], i))[:k]
        assert pos[r].tolist() == expected
        assert vals[r].tolist() == [matrix[r, i] for i in expected]
    row = np.where(rng.random(30_000) < 0.01, rng.integers(1, 4, 30_000), 0).astype(np.float32)
    got, _ = top_k(row, 1000, positive_only=True)   # fewer positives than k
    assert got.tolist() == sorted(np.flatnonzero(row > 0), key=lambda i: (-row[i], i))
    got, _ = top_k(row, 50, positive_only=True)
    assert got.tolist() == sorted(np.flatnonzero(row > 0), key=lambda i: (-row[i], i))[:50]


class _TableEncoder:
    """Query vectors from a table (stands in for CachedEncoder)."""

    label = "table/model@000000000000"

    def __init__(self, table):
        self.table = table

    def encode_queries(self, texts):
        return np.stack([self.table[t] for t in texts])


def test_dense_search_is_exact_and_matches_brute_force():
    rng = np.random.default_rng(11)
    n, dim = 300, 16
    vectors = rng.standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors[7] = vectors[3]  # an exact tie: decided by document structure
    docs = [_doc(f"f{i:03d}_0", "words here") for i in range(n)]
    queries = {f"q{j}": rng.standard_normal(dim).astype(np.float32) for j in range(70)}
    queries["q-tie"] = vectors[3].copy()
    backend = EmbeddedBackend(encoder=_TableEncoder(queries), progress=False)
    backend.index(docs, ["bm25"])
    assert backend.doc_ids == [d.doc_id for d in docs]  # already in structural order
    backend.load_vectors(vectors, [_TableEncoder.label] * n)
    out = backend.search("dense", [SearchQuery(q, q) for q in queries], 25)
    for q, vec in queries.items():
        brute = sorted(((docs[i].doc_id, float(np.dot(vectors[i].astype(np.float64), vec)))
                        for i in range(n)), key=lambda p: (-p[1], p[0]))
        assert [d for d, _ in out[q]] == [d for d, _ in brute[:25]], q
        assert [s for _, s in out[q]] == pytest.approx([s for _, s in brute[:25]], abs=1e-5)
    assert [d for d, _ in out["q-tie"][:2]] == ["f003_0", "f007_0"]
    # restricted to two files: the same scores (to float32 rounding: a matrix-vector
    # product instead of the batched matmul), only those files' documents
    restricted = backend.search("dense", [SearchQuery("q1", "q1", ("f010", "f200"))], 25)["q1"]
    assert {d for d, _ in restricted} == {"f010_0", "f200_0"}
    free = dict(out["q1"]) | dict(backend.search("dense", [SearchQuery("q1", "q1")], n)["q1"])
    assert [s for _, s in restricted] == pytest.approx([free[d] for d, _ in restricted],
                                                       abs=1e-6)
    survey = backend.embedding_survey()
    assert dict(survey.counts) == {_TableEncoder.label: n} and survey.dimension == dim


def test_gold_files_restriction_keeps_global_statistics():
    docs = [_doc("a_0", "apple pie"), _doc("a_1", "apple apple"), _doc("b_0", "apple tart"),
            _doc("c_0", "banana")]
    backend = EmbeddedBackend(progress=False)
    backend.index(docs, ["bm25"])
    free = dict(backend.search("bm25", [SearchQuery("q", "apple")], 10)["q"])
    only_b = backend.search("bm25", [SearchQuery("q", "apple", ("b",))], 10)["q"]
    assert [d for d, _ in only_b] == ["b_0"]
    assert only_b[0][1] == free["b_0"]  # idf still from all four documents
    none = backend.search("bm25", [SearchQuery("q", "apple", ("zzz",))], 10)["q"]
    assert none == []


def test_index_refusals():
    backend = EmbeddedBackend(progress=False)
    with pytest.raises(ValueError, match="duplicate"):
        backend.index([_doc("a_0", "x"), _doc("a_0", "y")], ["bm25"])
    with pytest.raises(ValueError, match="unknown leg"):
        backend.index([_doc("a_0", "x")], ["sparse"])
    with pytest.raises(ValueError, match="encoder"):
        backend.index([_doc("a_0", "x")], ["dense"])
    backend.index([_doc("a_0", "x")], ["bm25"])
    with pytest.raises(ValueError, match="not indexed"):
        backend.search("dense", [SearchQuery("q", "x")], 5)
    assert backend_class("embedded") is EmbeddedBackend
    with pytest.raises(ValueError, match=str(sorted(BACKENDS))[1:-1]):
        backend_class("nope")
