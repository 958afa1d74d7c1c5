"""Issue 38's done-when, on the real QMSum validation split with its qrels hidden: two
annotators label a pooled sample of 200 pairs (their labels from the hidden qrels, one with
noise), and nDCG@10 by PPI with the packaged MiniLM judge covers the true value (from the
full qrels, scored by ``harness score``) with an interval narrower than hand labels alone.
Coverage over repeated samples is ``make bench`` (benchmarks/bench_judgments.py)."""

from __future__ import annotations

import json
import random

import pytest

from harness.cli import main

pytestmark = pytest.mark.model


def test_ppi_ndcg_on_qmsum_covers_the_truth_and_beats_hand_labels(qmsum_val, tmp_path, capsys):
    from ingestion import load_corpus
    from ingestion.judgements import file_qrels

    corpus = f"qmsum:{qmsum_val}"
    bench = tmp_path / "bm25"
    assert main(["bench", "--corpus", corpus, "--mode", "bm25", "--stage", "retrieve",
                 "--granularity", "file", "--out", str(bench), "--no-warehouse",
                 "--no-progress"]) == 0
    run = tmp_path / "run.trec"
    run.write_text("".join(f"{r['query_id']} Q0 {r['doc_id']} {r['rank']} {r['score']} bm25\n"
                           for r in map(json.loads, (bench / "rankings.jsonl").open())))
    hidden = file_qrels(load_corpus(corpus))  # the qrels the annotators stand in for
    qrels = tmp_path / "hidden.qrels"
    qrels.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in sorted(hidden.items())
                             for d, g in sorted(docs.items())))
    # the true value, by the scoring path a team uses (pytrec_eval under trec_eval -c)
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out",
                 str(tmp_path / "truth"), "--no-warehouse"]) == 0
    truth_doc = json.loads((tmp_path / "truth" / "metrics.json").read_text())
    (row,) = [r for r in truth_doc["rows"] if r["query_class"] == "all"]
    truth = row["metrics"]["nDCG@10"]
    assert row["n"] == 237 and row["queries_dropped_unjudgeable"] == 0

    pool = tmp_path / "pool.jsonl"
    assert main(["pool", str(run), "--depth", "10", "--sample-queries", "20", "--seed", "1",
                 "--out", str(pool)]) == 0
    sampled = [json.loads(x) for x in pool.read_text().splitlines()[1:]]
    sampled = [(p["query_id"], p["doc_id"]) for p in sampled if p["sampled"]]
    assert len(sampled) == 200
    rng = random.Random(3)
    ana, bo = [], []
    shared = {q for q, _ in sampled[:50]}  # a quarter of the sample is shown to both
    for q, d in sampled:
        label = hidden.get(q, {}).get(d, 0)
        ana.append({"query_id": q, "doc_id": d, "label": label, "rater": "ana",
                    "at": "2026-12-07T09:00:00Z"})
        if q in shared:
            noisy = rng.randrange(4) if rng.random() < 0.1 else label
            bo.append({"query_id": q, "doc_id": d, "label": noisy, "rater": "bo",
                       "at": "2026-12-07T09:05:00Z"})
    for name, rows in (("ana", ana), ("bo", bo)):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    capsys.readouterr()
    assert main(["qrels", "version", "--pool", str(pool), "--labels", str(tmp_path / "ana.jsonl"),
                 str(tmp_path / "bo.jsonl"), "--corpus-name", "qmsum", "--licence", "MIT",
                 "--out", str(tmp_path / "versions")]) == 0
    assert "Cohen's kappa ana vs bo over" in capsys.readouterr().out
    (version,) = (tmp_path / "versions").glob("qrels-*.json")
    out = tmp_path / "estimate.json"
    assert main(["qrels", "estimate", "--run", str(run), "--pool", str(pool), "--version",
                 str(version), "--corpus", corpus, "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "no validity" in printed
    doc = json.loads(out.read_text())
    low, high = doc["ppi"]["interval"]
    hand_low, hand_high = doc["hand_only"]["interval"]
    assert low <= truth <= high, (truth, doc["ppi"])
    assert high - low < hand_high - hand_low, (doc["ppi"], doc["hand_only"])
    assert doc["labelled_queries"] == 20 and doc["queries"] == 237
    assert doc["tier"] == "A" and doc["judge"]["licence"] == "Apache-2.0"
    assert doc["judge_only"]["valid"] is False
    # determinism: the same inputs give the same bytes (the judge's vectors now cached)
    again = tmp_path / "again.json"
    assert main(["qrels", "estimate", "--run", str(run), "--pool", str(pool), "--version",
                 str(version), "--corpus", corpus, "--cache-dir", str(tmp_path / "cache"),
                 "--no-progress", "--out", str(again)]) == 0
    assert again.read_bytes() == out.read_bytes()
