"""BM25 on OpenSearch against the embedded backend, and every difference accounted for.

* per-query nDCG@10 of the same arm on both backends (QMSum val, the synthetic corpus):
  correlation and mean delta printed, the mean delta within 0.01;
* with a whitespace-and-lowercase analyzer on both sides and chunks short enough for
  Lucene's one-byte length to be exact, every score agrees to 1e-4;
* with the default analyzer, every score equals an independent model of Lucene's BM25 (its
  ``LegacyBM25Similarity``, the one-byte length of SmallFloat.intToByte4, documents without
  a token left out of N and the average length) to 1e-4: the only other difference, the
  tokenisation, is zero on these corpora (test_analyzer.py).
"""

from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np

from harness.retrieval.backends.embedded import EmbeddedBackend
from harness.retrieval.backends.opensearch.backend import OpenSearchBackend
from harness.retrieval.backends.tokenizer import Tokenizer

from .helpers import K, assert_same_lists, bench, docs_and_queries, per_query



def _report(name, a, b):
    ids = sorted(a)
    x = np.array([a[q] for q in ids])
    y = np.array([b[q] for q in ids])
    delta = float(np.mean(y - x))
    corr = float(np.corrcoef(x, y)[0, 1]) if x.std() and y.std() else 1.0
    changed = int(np.sum(np.abs(y - x) > 1e-9))
    print(f"{name}: {len(ids)} queries, nDCG@10 correlation {corr:.4f}, mean delta "
          f"(opensearch - embedded) {delta:+.5f}, {changed} queries differ")
    return corr, delta


def _parity(os_url, spec, tmp_path, name):
    assert bench(tmp_path / "embedded", None, spec, extra=["--mode", "bm25"],
                 backend="embedded") == 0
    assert bench(tmp_path / "opensearch", os_url, spec, extra=["--mode", "bm25"]) == 0
    corr, delta = _report(name, per_query(tmp_path / "embedded", "nDCG@10"),
                          per_query(tmp_path / "opensearch", "nDCG@10"))
    assert abs(delta) <= 0.01
    assert corr >= 0.95


def test_bm25_parity_on_qmsum_val(os_url, qmsum_val, tmp_path):
    _parity(os_url, f"qmsum:{qmsum_val}", tmp_path, "QMSum val")


def test_bm25_parity_on_the_synthetic_corpus(os_url, synthetic_path, tmp_path):
    _parity(os_url, f"synthetic:{synthetic_path}", tmp_path, "synthetic")


# --------------------------------------------------------------------------- scores


#: Java's Character.isWhitespace (Lucene's WhitespaceTokenizer): no no-break spaces
_JAVA_SPACE = re.compile("[\t\n\x0b\x0c\r\x1c-\x1f \u1680\u2000-\u2006\u2008-\u200a"
                         "\u2028\u2029\u205f\u3000]+")


class WhitespaceLowercase:
    """The embedded side of the common ground: whitespace tokens, lowercased per code point."""

    def __call__(self, text):
        return [t.lower() if len(t.lower()) == len(t) else "".join(c.lower()[0] for c in t)
                for t in _JAVA_SPACE.split(text) if t]


def test_whitespace_lowercase_scores_agree_to_1e_4(os_url, synthetic_path):
    docs, queries = docs_and_queries(f"synthetic:{synthetic_path}", 39)
    assert max(len(WhitespaceLowercase()(d.text)) for d in docs) <= 39  # exact Lucene lengths
    embedded = EmbeddedBackend(progress=False)
    embedded.tokenizer = WhitespaceLowercase()
    embedded.index(docs, ["bm25"])
    node = OpenSearchBackend(url=os_url, analyzer="whitespace-lowercase", progress=False)
    try:
        node.index(docs, ["bm25"])
        got = node.search("bm25", queries, K)
    finally:
        node.close()
    want = embedded.search("bm25", queries, K)
    assert sum(len(v) for v in want.values()) > 50 * len(queries)
    assert_same_lists(want, got)


# --------------------------------------------------------------------------- Lucene's BM25

NUM_FREE_VALUES = 24  # 255 - SmallFloat.longToInt4(Integer.MAX_VALUE)


def long_to_int4(i: int) -> int:
    bits = i.bit_length()
    if bits < 4:
        return i
    shift = bits - 4
    return ((i >> shift) & 0x07) | ((shift + 1) << 3)


def int4_to_long(i: int) -> int:
    bits, shift = i & 0x07, (i >> 3) - 1
    return bits if shift == -1 else (bits | 0x08) << shift


def lucene_length(n: int) -> int:
    """A document length as Lucene stores and reads it (SmallFloat.intToByte4 and back)."""
    if n < NUM_FREE_VALUES:
        return n
    return NUM_FREE_VALUES + int4_to_long(long_to_int4(n - NUM_FREE_VALUES))


def test_lucene_lengths_are_exact_below_40_then_rounded_down():
    assert [lucene_length(n) for n in (0, 23, 24, 39)] == [0, 23, 24, 39]
    # 40 - 24 = 16 = 0b10000: one bit dropped -> 16; 41 -> 17 = 0b10001 -> 16; 57 -> 33 -> 32
    assert [lucene_length(n) for n in (40, 41, 42, 57)] == [40, 40, 42, 56]


def lucene_bm25(docs, queries, k1=1.2, b=0.75):
    """Top K per query by Lucene's formula (module docstring), in the harness's order."""
    from harness.core.doc_ids import rank_key

    tok = Tokenizer()
    tokens = [tok(d.text) for d in docs]
    counted = [i for i, t in enumerate(tokens) if t]
    n = len(counted)
    avgdl = sum(len(tokens[i]) for i in counted) / n
    postings: dict[str, list[tuple[int, int]]] = {}
    for i in counted:
        for term, tf in Counter(tokens[i]).items():
            postings.setdefault(term, []).append((i, tf))
    out = {}
    for q in queries:
        scores: dict[int, float] = {}
        for term in tok(q.text):
            plist = postings.get(term, [])
            if not plist:
                continue
            idf = math.log(1 + (n - len(plist) + 0.5) / (len(plist) + 0.5))
            for i, tf in plist:
                norm = k1 * ((1 - b) + b * lucene_length(len(tokens[i])) / avgdl)
                scores[i] = scores.get(i, 0.0) + idf * tf / (tf + norm)
        ranked = sorted(((docs[i].doc_id, s) for i, s in scores.items()),
                        key=lambda p: rank_key(p[0], p[1]))
        out[q.query_id] = ranked[:K]
    return out


def test_default_analyzer_scores_are_lucenes_bm25_to_1e_4(os_url, qmsum_val):
    docs, queries = docs_and_queries(f"qmsum:{qmsum_val}", 200)
    node = OpenSearchBackend(url=os_url, progress=False)
    try:
        node.index(docs, ["bm25"])
        got = node.search("bm25", queries, K)
    finally:
        node.close()
    want = lucene_bm25(docs, queries)
    assert_same_lists(want, got)
    # and where the embedded backend differs, it is by these two rules alone
    embedded = EmbeddedBackend(progress=False)
    embedded.index(docs, ["bm25"])
    mine = embedded.search("bm25", queries, K)
    differ = sum(1 for q in queries
                 if [d for d, _ in mine[q.query_id][:10]] != [d for d, _ in got[q.query_id][:10]])
    empty = sum(1 for d in docs if not Tokenizer()(d.text))
    long = sum(1 for d in docs if len(Tokenizer()(d.text)) >= 40)
    print(f"QMSum val: {differ} of {len(queries)} top-10 lists differ from the embedded "
          f"backend's; {empty} chunks hold no token, {long} have 40 or more")
    assert empty > 0 and long > 0
