"""Synthetic calibration data for the certificate tests (a helper module, not a test).

Each query has ``m`` candidates with standard-normal scores; with probability
``1 - p_none`` one of them is relevant and gets a boost: ``mu_easy`` for a fraction
``easy`` of the queries, ``mu_hard`` for the rest.  Candidates are ranked by score.  With
both boosts 0 the scorer is useless: the relevant rank is uniform.
"""

from __future__ import annotations

import numpy as np

from harness.certificates.conformal import Candidates
from harness.certificates.data import calibration_row, calibration_text
from harness.evaluation.results import write_results


def ranked(rng, n, *, mu_easy=4.0, mu_hard=0.5, easy=0.6, m=20, p_none=0.03):
    """``(scores, relevant)`` arrays of shape (n, m), each row in descending score order."""
    scores = rng.standard_normal((n, m))
    has = rng.random(n) >= p_none
    boost = np.where(rng.random(n) < easy, mu_easy, mu_hard)
    scores[:, 0] += np.where(has, boost, 0.0)
    relevant = np.zeros((n, m), dtype=bool)
    relevant[:, 0] = has
    order = np.argsort(-scores, axis=1, kind="stable")
    return np.take_along_axis(scores, order, 1), np.take_along_axis(relevant, order, 1)


def candidates(rng, n, **kwargs) -> Candidates:
    scores, relevant = ranked(rng, n, **kwargs)
    first = np.where(relevant.any(axis=1), relevant.argmax(axis=1) + 1, np.inf)
    lengths = np.full(n, scores.shape[1], dtype=np.int64)
    in_list = np.where(np.isfinite(first), first, 0).astype(np.int64)
    return Candidates(scores, lengths, in_list, first)


def metrics_doc(n, *, corpus="synth", version="v1", sha="ab" * 32, tier="A",
                models=("all-MiniLM-L6-v2",), retrieval=None):
    """A minimal valid metrics.json for a run over one synthetic corpus."""
    if retrieval is None:
        retrieval = {"backend": "embedded", "mode": "hybrid", "stage": "rerank", "scope": "corpus",
                     "size": 48, "fusion": {"method": "rrf", "rank_constant": 60},
                     "reranker": {"name": "cross-encoder", "sha256": "cd" * 32}}
    return {
        "schema_version": 1, "control_name": "synthetic",
        "corpora": [{"name": corpus, "version": version, "licence": "CC0-1.0", "tier": tier,
                     "sha256": sha, "files": 1, "chunks": 20,
                     "evidence": "licence CC0-1.0 declared (test fixture)"}],
        "index": {"embedding_models": list(models), "embedding_verdict": "uniform",
                  "embedding_dimension": 384, "configured_embedding_model": models[0]},
        "retrieval": retrieval,
        "metric_engine": {"name": "pytrec_eval_terrier", "version": "test"},
        "relevance_policy": {"gain": "linear"},
        "rows": [{"corpus": corpus, "tier": tier, "query_class": "all", "n": n,
                  "metrics": {"ndcg_cut_10": 0.5}, "queries_unanswered": 0,
                  "queries_dropped_unjudgeable": 0}],
    }


def make_run(out, *, n=400, seed=1, corpus="synth", stage="rerank", tier="A", **metric_kwargs):
    """Write a results directory with metrics.json and calibration.jsonl; returns its path."""
    rng = np.random.default_rng(seed)
    scores, relevant = ranked(rng, n)
    rows = [calibration_row(corpus=corpus, tier=tier, query_id=f"q{i:04d}",
                            query_class=("lookup", "summary")[i % 2], stage=stage,
                            scores=scores[i].tolist(), relevant=relevant[i].tolist())
            for i in range(n)]
    metrics = metrics_doc(n, corpus=corpus, tier=tier, **metric_kwargs)
    per_query = [{"corpus": corpus, "tier": tier, "query_class": ("lookup", "summary")[i % 2],
                  "query_id": f"q{i:04d}", "measure": "ndcg_cut_10", "value": 0.5,
                  "answered": True} for i in range(n)]
    return write_results(out, metrics, metrics_md="synthetic\n", per_query=per_query,
                         extra_files={"calibration.jsonl": calibration_text(rows)})
