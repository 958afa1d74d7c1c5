"""Coverage of the judge-corrected nDCG@10 over repeated hand-labelled samples (issue 38).

On the QMSum validation split (file level, BM25), with its qrels hidden: each repetition
draws 20 of the 237 queries at random, labels their pooled top 10 (200 pairs) from the hidden
qrels, calibrates the packaged MiniLM judge on them (cross-fitted) and computes the PPI
interval of nDCG@10.  Printed: how often the 95% interval covers the true value (the full
qrels' nDCG@10) beside how often the hand-only interval does, and the mean width of each
(ratio: PPI width / hand-only width; target: coverage >= 0.93 and a width ratio < 1).
The judge's vectors are computed once (cached in the embedding cache).  Without the shared
data the rows say so.
"""

from __future__ import annotations

import random
import time

import numpy as np

from benchmarks import qmsum_val, row

SAMPLE = 20
LEVEL = 0.95


def run(quick: bool = False) -> list[dict]:
    val = qmsum_val()
    if val is None:
        return [row("PPI nDCG@10 coverage (QMSum validation split absent)", None, None, "-",
                    None, "-", None)]
    from harness.core import settings
    from harness.evaluation.judged import top_ids
    from harness.evaluation.ordering import normalise_ranking
    from harness.judgments.estimate import estimate_ndcg, ndcg
    from harness.judgments.judge import calibrated_grades, corpus_texts, cosine_scores, packaged_judge
    from harness.judgments.pool import build_pool
    from ingestion import load_corpus
    from ingestion.judgements import file_qrels

    settings.go_offline()
    corpus = load_corpus(f"qmsum:{val}")
    hidden = file_qrels(corpus)
    run_docs = _bm25_file_run(val)
    pool = build_pool([("bm25", "-", run_docs)], 10)
    tops = {q: top_ids(normalise_ranking(d, query_id=q))[:10] for q, d in run_docs.items()}
    truth = float(np.mean([ndcg(tops[q], hidden.get(q, {})) for q in pool.queries]))
    queries_text, docs_text = corpus_texts(corpus)
    encoder, provenance = packaged_judge(progress=False)
    started = time.perf_counter()
    scores = cosine_scores(encoder, queries_text, docs_text,
                           [(p.query_id, p.doc_id) for p in pool.pairs], provenance=provenance)
    judge_s = time.perf_counter() - started
    reps = 50 if quick else 400
    covered = hand_covered = 0
    widths, hand_widths = [], []
    for seed in range(reps):
        sample = random.Random(seed).sample(pool.queries, SAMPLE)
        hand = {q: {d: hidden.get(q, {}).get(d, 0) for d in tops[q]} for q in sample}
        grades = calibrated_grades(scores.scores, hand, sample, seed=seed)
        r = estimate_ndcg(tops, pool.queries, sample, hand, grades, alpha=1 - LEVEL).result
        covered += r.interval[0] <= truth <= r.interval[1]
        hand_covered += r.labels_only_interval[0] <= truth <= r.labels_only_interval[1]
        widths.append(r.interval[1] - r.interval[0])
        hand_widths.append(r.labels_only_interval[1] - r.labels_only_interval[0])
    coverage, hand_coverage = covered / reps, hand_covered / reps
    ratio = float(np.mean(widths) / np.mean(hand_widths))
    label = (f"PPI nDCG@10 coverage, {reps} samples of {SAMPLE} queries (200 pairs) of "
             f"{len(pool.queries)}, true {truth:.4f}; judging {judge_s:.0f} s (vectors cached "
             "after the first run)")
    return [
        row(label, round(coverage, 4), round(hand_coverage, 4), "coverage (PPI vs hand only)",
            None, f">= {LEVEL - 0.02:.2f}", coverage >= LEVEL - 0.02),
        row(f"PPI nDCG@10 mean interval width vs hand labels alone ({reps} samples)",
            round(float(np.mean(widths)), 4), round(float(np.mean(hand_widths)), 4), "width",
            ratio, "< 1", ratio < 1),
    ]


def _bm25_file_run(val):
    """The file-level BM25 run of the QMSum validation split, from the bench."""
    import json
    import tempfile
    from pathlib import Path

    from harness.cli import main
    from harness.core.records import RankedDocs

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bm25"
        main(["bench", "--corpus", f"qmsum:{val}", "--mode", "bm25", "--stage", "retrieve",
              "--granularity", "file", "--out", str(out), "--no-warehouse", "--no-progress"])
        rows = [json.loads(x) for x in (out / "rankings.jsonl").read_text().splitlines()]
    run: dict[str, tuple[list[str], list[float]]] = {}
    for r in sorted(rows, key=lambda r: (r["query_id"], r["rank"])):
        ids, scores = run.setdefault(r["query_id"], ([], []))
        ids.append(r["doc_id"])
        scores.append(r["score"])
    return {q: RankedDocs(ids, scores) for q, (ids, scores) in run.items()}
