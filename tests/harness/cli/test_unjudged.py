"""A run over queries nobody judged yet (issue 38, item 1): ``harness score`` without qrels
reports Judged@10 and the pairs to judge, never a mean; partial qrels count the queries left
out.  Expected values by hand and from ir_measures."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from harness.core.records import RankedDocs
from harness.evaluation.unjudged import coverage

RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"


def _harness(*args, cwd):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_coverage_by_hand():
    run = {"q1": RankedDocs(["d2", "d1"], [1.0, 2.0]), "q2": RankedDocs(["d3"], [1.0])}
    # q1's top 10 is d1, d2 (by score): one of two judged; q2: none; q3 unanswered
    cover = coverage(run, ["q1", "q2", "q3"], {"q1": {"d1": 0}})
    assert (cover.queries, cover.answered, cover.judged_queries) == (3, 2, 1)
    assert cover.judged_at_k == pytest.approx((0.5 + 0 + 0) / 3)
    assert cover.pairs_to_judge == 2  # q1 d2, q2 d3
    assert cover.unjudged_queries == ("q2", "q3")
    # depth 1 reads only the top document; a tie (d1, d2 both 1.0) is ordered as scoring
    # orders it: by document id, so d1 comes first
    tied = {"q1": RankedDocs(["d2", "d1"], [1.0, 1.0])}
    assert coverage(tied, None, {"q1": {"d1": 1}}, depth=1).judged_at_k == 1.0
    assert coverage(tied, None, {"q1": {"d1": 1}}, depth=1, preserve_order=True).judged_at_k == 0.0
    with pytest.raises(ValueError, match="depth"):
        coverage(tied, None, None, depth=0)


def test_coverage_agrees_with_ir_measures_judged_at_10():
    ir_measures = pytest.importorskip("ir_measures")
    rng = random.Random(5)
    run, qrels = {}, {}
    for i in range(30):
        q = f"q{i}"
        docs = rng.sample([f"d{j}" for j in range(60)], 25)
        scores = rng.sample(range(1000), 25)  # distinct: no tie for two orderings to break
        run[q] = {d: float(s) for d, s in zip(docs, scores)}
        if i % 3:  # every third query has no judgement at all
            qrels[q] = {d: rng.choice([0, 1, 2]) for d in rng.sample(docs, 8)}
    ours = coverage({q: RankedDocs(list(d), list(d.values())) for q, d in run.items()}, None, qrels)
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.Judged @ 10], qrels, run)}
    expected = sum(theirs.get(q, 0.0) for q in run) / len(run)
    assert ours.judged_at_k == pytest.approx(expected, abs=1e-12)
    top = {q: sorted(d, key=d.get, reverse=True)[:10] for q, d in run.items()}
    assert ours.pairs_to_judge == sum(1 for q, ids in top.items() for d in ids
                                      if d not in qrels.get(q, {}))
    assert ours.unjudged_queries == tuple(sorted(q for q in run if q not in qrels))


def test_score_without_qrels_reports_coverage_and_writes_nothing(tmp_path):
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "queries.tsv").write_text("q1\tfirst\nq2\tsecond\nq3\tthird\n")
    done = _harness("score", "--run", "run.txt", "--queries", "queries.tsv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "unjudged: no qrels given; the query set is the query file queries.tsv's"
    assert lines[1] == "3 queries, 2 answered by the run; 0 with any judgement"
    assert lines[2].startswith("Judged@10 0.0000 ")
    assert lines[3] == "3 unjudged (query, document) pairs in the run's top 10"
    assert "no measure has a mean" in lines[4]
    hint = "pool those pairs to judge: "
    assert lines[5] == hint + "harness pool run.txt --depth 10 --out pool.jsonl"
    assert "nDCG" not in done.stdout and "MRR" not in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["queries.tsv", "run.txt"]
    # --out without qrels is refused rather than silently ignored
    refused = _harness("score", "--run", "run.txt", "--out", "res", cwd=tmp_path)
    assert refused.returncode == 2 and not (tmp_path / "res").exists()
    assert refused.stderr.strip() == ("error: --out needs --qrels: an unjudged run has no scores "
                                      "to write")
    refused = _harness("score", "--qrels", "q.txt", "--run", "run.txt", cwd=tmp_path)
    assert refused.returncode == 2 and "--out DIR is required with --qrels" in refused.stderr
    # the printed command runs and pools exactly the three unjudged pairs
    pooled = _harness(*lines[5][len(hint):].split()[1:], cwd=tmp_path)
    assert pooled.returncode == 0, pooled.stderr
    assert _pairs(tmp_path / "pool.jsonl") == [("q1", "d1"), ("q1", "d2"), ("q2", "d3")]


def _pairs(path):
    import json

    rows = [json.loads(line) for line in path.read_text().splitlines()[1:]]
    return sorted((r["query_id"], r["doc_id"]) for r in rows)


def test_partial_qrels_name_the_unscored_queries(tmp_path):
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "part.qrels").write_text("q1 0 d1 1\n")
    done = _harness("score", "--run", "run.txt", "--qrels", "part.qrels", "--out", "res",
                    "--no-warehouse", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    note = next(line for line in done.stdout.splitlines() if "no judgement" in line)
    assert note.startswith("1 of the run's queries has no judgement and so no score")
    command = "harness pool run.txt --judged part.qrels --depth 10 --out pool.jsonl"
    assert note.endswith("to include them, pool what is left to judge: " + command)
    pooled = _harness(*command.split()[1:], cwd=tmp_path)
    assert pooled.returncode == 0, pooled.stderr
    assert "1 pair already judged in part.qrels was skipped" in pooled.stdout
    assert _pairs(tmp_path / "pool.jsonl") == [("q1", "d2"), ("q2", "d3")]
