"""The ``embedded`` analyzer against the embedded tokenizer, on every chunk of real corpora.

An independent model of the OpenSearch analyzer is written here from the Java rules (a
token is a run of two or more characters Java's ``\\w`` accepts with
``UNICODE_CHARACTER_CLASS``; each code point lowercased on its own, as Lucene's
``LowerCaseFilter`` does; the 33 stop words).  The node's ``_analyze`` output must equal
that model on every chunk, so every difference from the embedded tokenizer is one of the
documented ones: the model and the embedded tokenizer differ only where those rules differ.
"""

from __future__ import annotations

import unicodedata

import pytest

from harness.retrieval.backends.tokenizer import Tokenizer, stopwords

JOIN_CONTROLS = {0x200C, 0x200D}
STOP_WORDS = frozenset(stopwords())


def java_word(ch: str) -> bool:
    """Java ``\\w`` under ``UNICODE_CHARACTER_CLASS``: Alphabetic, Mn, Me, Mc, Nd, Pc,
    Join_Control (Alphabetic approximated by the letter categories and Nl)."""
    cat = unicodedata.category(ch)
    return (cat[0] == "L" or cat in ("Nl", "Mn", "Me", "Mc", "Nd", "Pc")
            or ord(ch) in JOIN_CONTROLS)


def java_lower(ch: str) -> str:
    """``Character.toLowerCase(int)``: one code point to one code point."""
    low = ch.lower()
    return low[0] if len(low) > 1 else low  # Python's full mapping: "İ" -> "i" + U+0307


def java_model(text: str, stop=STOP_WORDS) -> list[str]:
    tokens, run = [], []
    for ch in text + " ":
        if java_word(ch):
            run.append(ch)
            continue
        if len(run) >= 2:
            token = "".join(java_lower(c) for c in run)
            if token not in stop:
                tokens.append(token)
        run = []
    return tokens


def analyse(node, index: str, texts: list[str]) -> list[list[str]]:
    """The node's tokens per text (``_analyze`` takes an array; its elements' offsets run on
    with a gap of one, which is how the tokens are split again here)."""
    out = []
    for start in range(0, len(texts), 200):
        batch = texts[start:start + 200]
        status, body = node.request("POST", f"/{index}/_analyze",
                                    {"analyzer": "embedded", "text": batch})
        assert status == 200, body
        per: list[list[str]] = [[] for _ in batch]
        bounds, offset = [], 0
        for t in batch:  # offsets count UTF-16 code units, one more between elements
            units = len(t.encode("utf-16-le")) // 2
            bounds.append((offset, offset + units))
            offset += units + 1
        element = 0
        for token in body["tokens"]:
            while token["start_offset"] >= bounds[element][1] + 1 and element + 1 < len(batch):
                element += 1
            per[element].append(token["token"])
        out.extend(per)
    return out


@pytest.fixture(scope="module")
def analysis_index(opensearch_node):
    from harness.retrieval.backends.opensearch.mapping import analysis

    name = "test-analysis"
    opensearch_node.request("DELETE", f"/{name}")
    status, body = opensearch_node.request("PUT", f"/{name}", {"settings": {
        "index": {"number_of_shards": 1, "number_of_replicas": 0},
        "analysis": analysis("embedded")}})
    assert status == 200, body
    yield name
    opensearch_node.request("DELETE", f"/{name}")


def test_the_java_model_is_the_documented_rules():
    # worked by hand from the rules in docs/opensearch.md
    text = "Hello Wörld a b café İstanbul x1 _ab THE and ½½ ab‿cd"
    assert java_model(text) == ["hello", "wörld", "café", "istanbul", "x1", "_ab", "ab‿cd"]
    assert Tokenizer()(text) == ["hello", "wörld", "café", "stanbul", "x1", "_ab", "½½", "ab",
                                 "cd"]


def _compare(node, index, texts):
    got = analyse(node, index, texts)
    mismatched = [(t, g) for t, g in zip(texts, got) if g != java_model(t)]
    assert mismatched == [], mismatched[:3]
    embedded = Tokenizer()
    differ = [t for t, g in zip(texts, got) if g != embedded(t)]
    return len(texts), len(differ), differ


def test_the_node_tokenises_the_synthetic_corpus_like_the_model(opensearch_node, analysis_index,
                                                                synthetic_path):
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus

    texts = [c.text for c in chunk_corpus(load_corpus(f"synthetic:{synthetic_path}"))]
    n, differ, _ = _compare(opensearch_node, analysis_index, texts)
    print(f"synthetic: {differ} of {n} chunks tokenise differently from the embedded tokenizer")
    assert differ == 0  # the generator writes ASCII


def test_the_node_tokenises_qmsum_val_like_the_model(opensearch_node, analysis_index, qmsum_val):
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus

    texts = [c.text for c in chunk_corpus(load_corpus(f"qmsum:{qmsum_val}"))]
    n, differ, examples = _compare(opensearch_node, analysis_index, texts)
    print(f"QMSum val: {differ} of {n} chunks tokenise differently from the embedded "
          f"tokenizer; e.g. {examples[:2]}")
    assert n > 20_000
