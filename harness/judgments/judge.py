"""A model judge: the packaged all-MiniLM-L6-v2 scores every pooled pair by cosine
similarity, and an isotonic map fitted on the hand labels turns scores into grades.

- Score: the cosine between the query's and the document's embedding; a document longer
  than one window (:data:`WINDOW` words, within the model's 256-token input) scores its best
  window (MaxP; Dai & Callan, SIGIR 2019), so a long meeting is judged by its most relevant
  passage rather than by its first 256 tokens.
- Calibration: isotonic regression of hand label on the score's *margin*, its distance below
  the best score among the query's pooled documents (monotone, no shape assumed; Zadrozny &
  Elkan, KDD 2002; fitted by scipy's pool-adjacent-violators).  Cosines of different queries
  sit on different scales; the margin puts them on one (per-query score normalisation, as
  in metasearch: Montague & Aslam, CIKM 2001).  On QMSum it makes the estimate's interval a
  quarter narrower than the raw cosine does.  For the
  estimate to stay valid, a hand-labelled query's judge grades must not come from a map fitted
  on its own labels: they are *cross-fitted* (Zrnic & Candès, PNAS 2024,
  "cross-prediction-powered inference"): the labelled queries are split into folds, each
  fold graded by the map fitted on the others, and every other query by the mean of the
  fold maps.
- Provenance: the model id, its weights' digest and its licence are recorded like a
  corpus's; a licence that is not publishable (or unknown) caps the estimate's tier at B.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

#: words per window a long document is cut into (MiniLM reads 256 word pieces)
WINDOW = 150
#: folds the hand-labelled queries are split into for cross-fitting
FOLDS = 5
#: the licence of each judge model this product ships (a judge not listed is "unknown")
JUDGE_LICENCES = {"sentence-transformers/all-MiniLM-L6-v2": "Apache-2.0"}

Pair = tuple[str, str]


def windows(text: str, size: int = WINDOW) -> list[str]:
    """``text`` cut into consecutive windows of ``size`` words (one empty window if none)."""
    words = text.split()
    return [" ".join(words[i:i + size]) for i in range(0, len(words), size)] or [""]


@dataclass(frozen=True)
class JudgeScores:
    """Raw judge scores of pairs and what produced them."""

    scores: dict[Pair, float]
    provenance: dict[str, Any]


def cosine_scores(encoder, query_texts: Mapping[str, str], doc_texts: Mapping[str, str],
                  pairs: Sequence[Pair], *, provenance: dict[str, Any]) -> JudgeScores:
    """Cosine (MaxP over windows) of each pair, from ``encoder`` (``encode_queries`` and
    ``encode_documents`` returning L2-normalised rows).  A pair whose query or document has
    no text is refused, naming it."""
    for query_id, doc_id in pairs:
        if query_id not in query_texts:
            raise ValueError(f"query {query_id!r} has no text: give the query file (--queries) "
                             "or a corpus that holds it")
        if doc_id not in doc_texts:
            raise ValueError(f"document {doc_id!r} (query {query_id!r}) is not in the corpus: "
                             "the judge needs every pooled document's text")
    queries = sorted({q for q, _ in pairs})
    docs = sorted({d for _, d in pairs})
    q_vec = dict(zip(queries, encoder.encode_queries([query_texts[q] for q in queries])))
    pieces = [(d, w) for d in docs for w in windows(doc_texts[d])]
    vectors = encoder.encode_documents([w for _, w in pieces])
    by_doc: dict[str, list[np.ndarray]] = {}
    for (doc_id, _), vector in zip(pieces, vectors):
        by_doc.setdefault(doc_id, []).append(vector)
    d_mat = {d: np.vstack(v) for d, v in by_doc.items()}
    scores = {(q, d): float(np.max(d_mat[d] @ q_vec[q])) for q, d in pairs}
    return JudgeScores(scores, provenance)


def judge_provenance(encoder, tier_of: Callable[[str], str]) -> dict[str, Any]:
    """What a judge's grades came from: model, weights digest, method, licence and the tier
    its licence allows (``tier_of``: :func:`harness.core.tiers.tier_for_licence`)."""
    licence = JUDGE_LICENCES.get(encoder.model_id, "unknown")
    return {"model": encoder.model_id, "embedding_sha256": encoder.embedding_sha256,
            "licence": licence, "tier": tier_of(licence),
            "score": f"cosine, best window of {WINDOW} words (MaxP)",
            "calibration": f"isotonic on hand labels, cross-fitted over {FOLDS} folds of the "
                           "labelled queries"}


def _fit(scores: Sequence[float], labels: Sequence[float]) -> Callable[[np.ndarray], np.ndarray]:
    """The isotonic map of ``labels`` on ``scores``, interpolated between fitted points."""
    from scipy.optimize import isotonic_regression

    # tied scores are one point: their mean label, weighted by how many share the score
    xs, where, counts = np.unique(np.asarray(scores, dtype=float), return_inverse=True,
                                  return_counts=True)
    means = np.bincount(where, weights=np.asarray(labels, dtype=float)) / counts
    ys = isotonic_regression(means, weights=counts.astype(float)).x
    return lambda s: np.interp(np.asarray(s, dtype=float), xs, ys)


def calibrated_grades(scores: Mapping[Pair, float], hand: Mapping[str, Mapping[str, int]],
                      labelled_queries: Sequence[str], *, folds: int = FOLDS,
                      seed: int = 0) -> dict[Pair, float]:
    """Judge grades for every scored pair, mapped from its margin below its query's best
    score: cross-fitted for the labelled queries' pairs, the mean of the fold maps for every
    other pair (module docstring)."""
    best: dict[str, float] = {}
    for (q, _), s in scores.items():
        best[q] = max(best.get(q, s), s)
    scores = {(q, d): s - best[q] for (q, d), s in scores.items()}
    labelled = sorted(labelled_queries)
    if len(labelled) < 2:
        raise ValueError(f"calibrating the judge needs at least 2 hand-labelled queries, got "
                         f"{len(labelled)}")
    shuffled = labelled[:]
    random.Random(seed).shuffle(shuffled)
    k = min(folds, len(shuffled))
    fold_of = {q: i % k for i, q in enumerate(shuffled)}
    points = [(fold_of[q], s, hand[q][d]) for (q, d), s in sorted(scores.items())
              if q in fold_of and d in hand.get(q, {})]
    maps = []
    for f in range(k):
        train = [(s, y) for g, s, y in points if g != f]
        if not train:
            raise ValueError("no hand label to calibrate the judge on")
        maps.append(_fit([s for s, _ in train], [y for _, y in train]))
    grades = {}
    for (q, d), s in scores.items():
        if q in fold_of:
            grades[(q, d)] = float(maps[fold_of[q]]([s])[0])
        else:
            grades[(q, d)] = float(np.mean([m([s])[0] for m in maps]))
    return grades


def corpus_texts(corpus) -> tuple[dict[str, str], dict[str, str]]:
    """``(query texts, document texts)`` of a loaded corpus (:func:`ingestion.load_corpus`):
    every unit a run may return, at both granularities (chunk ids and file ids differ)."""
    from ingestion.chunking import chunk_corpus

    docs: dict[str, str] = {}
    for granularity in ("chunk", "file"):
        for chunk in chunk_corpus(corpus, granularity=granularity):
            docs.setdefault(chunk.doc_id, chunk.text)
    return {q.query_id: q.text for q in corpus.queries}, docs


def load_texts(spec: str, queries: str | None = None):
    """``(corpus, query texts, document texts)`` of the corpus ``KIND:PATH``, the query
    texts of ``queries`` (JSONL or TSV, as ``harness score --queries``) added over its own."""
    from harness.evaluation.inputs import read_query_texts
    from ingestion import load_corpus

    corpus = load_corpus(spec)
    query_texts, doc_texts = corpus_texts(corpus)
    if queries:
        query_texts.update(read_query_texts(queries))
    return corpus, query_texts, doc_texts


def packaged_judge(cache_dir=None, progress: bool = True):
    """``(encoder, provenance)``: the packaged MiniLM behind the embedding cache."""
    from harness.core.tiers import tier_for_licence
    from harness.retrieval.embeddings import (DEFAULT_MODEL, PROFILES, CachedEncoder,
                                              EmbeddingCache)
    from harness.retrieval.embeddings.models import LazyEncoder

    model = LazyEncoder(PROFILES[DEFAULT_MODEL])
    encoder = CachedEncoder(model, EmbeddingCache(cache_dir), progress=progress)
    return encoder, judge_provenance(model, tier_for_licence)
