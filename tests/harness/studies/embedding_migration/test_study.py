"""The study with stand-in encoders that record what they were asked to encode: each model's
query prefix goes on queries (T1 queries and T0 proxies alike), its document prefix on
documents, and nothing else; the T0 split is disjoint; every ratio in the report can be
recomputed from the per-query rows."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from harness.retrieval.embeddings.cache import CachedEncoder
from harness.studies.embedding_migration.study import StudyOptions, run_study, split
from tests.harness.retrieval.stand_in_encoder import StandInEncoder


class RecordingEncoder(StandInEncoder):
    """Hashed bag of words (a different hash per model, so the spaces differ); records every
    text it is asked to embed, exactly as it arrives."""

    def __init__(self, model_id, query_prefix, document_prefix, dimension=96):
        super().__init__(model_id, query_prefix, document_prefix, dimension)

    def vectors(self, texts):
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for token in text.lower().split():
                h = hashlib.sha256(f"{self.model_id}|{token}".encode()).digest()
                out[i, h[0] % self.dimension] += 1.0 if h[1] % 2 else -1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1.0, norms)

    def describe(self):
        return {"model_id": self.model_id, "kind": "fake", "dimension": self.dimension,
                "normalize": True, "pooling": "mean", "query_prefix": self.query_prefix,
                "document_prefix": self.document_prefix, "weights_sha256": self.weights_sha256,
                "label": self.label}


@pytest.fixture(scope="module")
def corpus_parts(synthetic_corpus):
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus
    from ingestion.judgements import judge

    corpus = load_corpus(f"synthetic:{synthetic_corpus}")
    chunks = chunk_corpus(corpus)
    return corpus, chunks, judge(corpus, chunks)


OPTIONS = StudyOptions(heldout=120, resamples=500, method="percentile", seed=4)


@pytest.fixture(scope="module")
def fake_study(corpus_parts):
    corpus, chunks, judgements = corpus_parts
    old = RecordingEncoder("fake/old", "qo: ", "do: ")
    new = RecordingEncoder("fake/new", "qn: ", "dn: ", dimension=80)
    models = {"old": old.describe(), "new": new.describe()}
    doc, rows = run_study(corpus, chunks, judgements,
                          CachedEncoder(old, None, progress=False),
                          CachedEncoder(new, None, progress=False), OPTIONS, models=models)
    return doc, rows, old, new


def test_prefixes_go_on_the_right_side(fake_study, corpus_parts):
    corpus, chunks, _ = corpus_parts
    doc, rows, old, new = fake_study
    chunk_texts = {c.text for c in chunks}
    by_id = {c.doc_id: c.text for c in chunks}
    proxies = {by_id[r["query_id"]] for r in rows if r["tier"] == "T0"}
    queries = {q.text for q in corpus.rank_queries()
               if q.query_id in {r["query_id"] for r in rows if r["tier"] == "T1"}}
    assert len(proxies) == 120 and len(queries) == doc["tiers"]["T1"]["n"]
    for enc, qp, dp, other in ((old, "qo: ", "do: ", ("qn: ", "dn: ")),
                               (new, "qn: ", "dn: ", ("qo: ", "do: "))):
        seen = set(enc.encoded)
        # every text carries exactly one of this model's own prefixes, never the other's
        assert all(t.startswith((qp, dp)) for t in seen)
        assert not any(t.startswith(other) for t in seen)
        documents = {t[len(dp):] for t in seen if t.startswith(dp)}
        asked = {t[len(qp):] for t in seen if t.startswith(qp)}
        assert documents == chunk_texts                     # T1 indexes every chunk
        assert queries <= asked and not queries & documents  # real queries: query side only
        assert proxies <= asked                              # T0 proxies: encoded as queries
    # OLD is asked for queries only at the tiers (T1 queries, T0 proxies); NEW also encodes
    # the validation proxies it uses to choose an adapter
    old_asked = {t[4:] for t in old.encoded if t.startswith("qo: ")}
    assert old_asked == queries | proxies
    assert len({t for t in new.encoded if t.startswith("qn: ")}) > len(old_asked)


def test_the_t0_split_is_disjoint_and_seeded(corpus_parts):
    _, chunks, _ = corpus_parts
    texts = [c.text for c in chunks]
    s = split(texts, OPTIONS.checked())
    assert not set(s.heldout) & set(s.fit)
    assert set(s.heldout) | set(s.fit) == set(s.sample)
    assert not set(s.train) & set(s.validation)
    assert len({texts[p] for p in s.sample}) == len(s.sample)          # no duplicate texts
    assert all(len(texts[p].split()) >= OPTIONS.min_proxy_words for p in s.heldout)
    again = split(texts, OPTIONS.checked())
    assert np.array_equal(s.heldout, again.heldout) and np.array_equal(s.train, again.train)
    other = split(texts, StudyOptions(heldout=120, seed=5).checked())
    assert not np.array_equal(s.heldout, other.heldout)


def test_every_ratio_is_recomputable_from_the_per_query_rows(fake_study):
    doc, rows, _, _ = fake_study
    for tier in ("T0", "T1"):
        mine = [r for r in rows if r["tier"] == tier]
        t = doc["tiers"][tier]
        oracle = sum(r["oracle"] for r in mine)
        assert t["n"] == len(mine)
        assert t["arr"]["estimate"] == pytest.approx(sum(r["adapted"] for r in mine) / oracle)
        assert t["old_retention"]["estimate"] == pytest.approx(sum(r["old"] for r in mine) / oracle)
        assert t["bridge_minus_old"]["estimate"] == pytest.approx(
            (sum(r["adapted"] for r in mine) - sum(r["old"] for r in mine)) / oracle)
        for q in ("arr", "old_retention", "bridge_minus_old"):
            assert t[q]["lower"] <= t[q]["estimate"] <= t[q]["upper"]
    t1 = [r for r in rows if r["tier"] == "T1"]
    assert doc["tiers"]["T1"]["gain"]["estimate"] == pytest.approx(
        sum(r["oracle"] for r in t1) / sum(r["old"] for r in t1))
    # T0's oracle finds its own top-1 by construction
    assert all(r["oracle"] == 1.0 for r in rows if r["tier"] == "T0")
    # 96 vs 80 dimensions: no unadapted baseline, and the report says why
    assert doc["tiers"]["T0"]["unadapted"] is None
    assert "80 dimensions and OLD 96" in doc["tiers"]["T0"]["unadapted_reason"]
    assert doc["decision"]["tier"] == "T1"
    assert doc["pair"]["situation"] is None           # neither model derives from the other
    assert doc["decision"]["decision"] == doc["tiers"]["T1"]["decision"]["decision"]


def test_options_are_checked():
    with pytest.raises(ValueError, match="tiers must be a non-empty subset"):
        StudyOptions(tiers=("T2",)).checked()
    with pytest.raises(ValueError, match="heldout .* must be smaller than sample"):
        StudyOptions(sample=100, heldout=100).checked()
    with pytest.raises(ValueError, match="unknown bootstrap method"):
        StudyOptions(method="normal").checked()
