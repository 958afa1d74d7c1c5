"""The judgments loop on the command line (issue 38 items 2, 4, 5): pool two runs, label,
version, score on the version, export TREC qrels; every printed next command is run.
nDCG@10 on the exported qrels is checked against ir_measures."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from harness.claims.metrics import provenance_notes

RUN_A = "".join(f"q{q} Q0 d{d} {d + 1} {10 - d}.0 a\n" for q in range(4) for d in range(6))
RUN_B = "".join(f"q{q} Q0 d{5 - d} {d + 1} {10 - d}.0 b\n" for q in range(4) for d in range(6))
TRUTH = {(f"q{q}", f"d{d}"): (d + q) % 4 for q in range(4) for d in range(6)}


def _harness(*args, cwd):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def _command(stdout, prefix):
    line = next(x for x in stdout.splitlines() if prefix in x)
    return line.split(prefix, 1)[1].split()


def _labels(path, pairs, rater, at="2026-12-07T09:00:00Z", flip=()):
    rows = [{"query_id": q, "doc_id": d, "label": (TRUTH[(q, d)] + 1) % 4 if (q, d) in flip
             else TRUTH[(q, d)], "rater": rater, "at": at} for q, d in pairs]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_pool_label_version_score_export(tmp_path):
    (tmp_path / "a.trec").write_text(RUN_A)
    (tmp_path / "b.trec").write_text(RUN_B)
    done = _harness("pool", "a.trec", "b.trec", "--depth", "3", "--out", "pool.jsonl",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # a's top 3 is d0-d2, b's is d5-d3: six pairs per query
    assert done.stdout.splitlines()[0] == ("24 pairs to judge over 4 queries, from 2 run(s) at "
                                          "depth 3")
    pool = [json.loads(x) for x in (tmp_path / "pool.jsonl").read_text().splitlines()]
    assert pool[0]["kind"] == "pool" and pool[0]["depth"] == 3
    pairs = [(p["query_id"], p["doc_id"]) for p in pool[1:]]
    _labels(tmp_path / "ana.jsonl", pairs, "ana")
    _labels(tmp_path / "bo.jsonl", pairs[:12], "bo", flip=set(pairs[:3]))
    step = _command(done.stdout, "then make a qrels version: harness ")
    step[step.index("LABELS.jsonl"):step.index("LABELS.jsonl") + 1] = ["ana.jsonl", "bo.jsonl"]
    step = ["versions" if x == "DIR" else x for x in step]
    made = _harness(*step, "--corpus-name", "mine", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "24 judged pairs over 4 queries, 36 labels by 2 rater(s), tier B" in made.stdout
    assert "Cohen's kappa ana vs bo over 12 pairs" in made.stdout
    (version,) = (tmp_path / "versions").glob("qrels-*.json")
    score = _command(made.stdout, "score a run on it: harness ")
    score = [("a.trec" if x == "RUN" else "scored" if x == "DIR" else x) for x in score]
    scored = _harness(*score, "--no-warehouse", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    metrics = json.loads((tmp_path / "scored" / "metrics.json").read_text())
    (corpus,) = metrics["corpora"]
    assert corpus["version"] == version.stem and corpus["name"] == "mine"
    assert corpus["tier"] == "B"  # the version's tier caps the run's

    exported = _harness("qrels", "export", str(version), "--out", "qrels.txt", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    ir_measures = pytest.importorskip("ir_measures")
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "qrels.txt")))
    relevance = {(q.query_id, q.doc_id): q.relevance for q in qrels}
    # consensus: ana alone, or the lower of ana's and bo's label where bo disagreed
    for pair in pairs:
        expected = TRUTH[pair]
        if pair in set(pairs[:3]):
            expected = min(expected, (expected + 1) % 4)
        assert relevance[pair] == expected
    run = list(ir_measures.read_trec_run(str(tmp_path / "a.trec")))
    theirs = ir_measures.calc_aggregate([ir_measures.nDCG @ 10], qrels, run)
    (row,) = [r for r in metrics["rows"] if r["query_class"] == "all"]
    assert row["metrics"]["nDCG@10"] == pytest.approx(theirs[ir_measures.nDCG @ 10], abs=1e-9)

    # a second version (bo's labels only for the top half) scores the same run differently
    # and the comparability notes say the two runs used different versions
    again = _harness("qrels", "version", "--labels", "ana.jsonl", "--corpus-name", "mine",
                     "--out", "versions", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    other = next(p for p in (tmp_path / "versions").glob("qrels-*.json") if p != version)
    rescored = _harness("score", "--qrels", str(other), "--run", "a.trec", "--out", "scored2",
                        "--no-warehouse", cwd=tmp_path)
    assert rescored.returncode == 0, rescored.stderr
    second = json.loads((tmp_path / "scored2" / "metrics.json").read_text())
    notes = provenance_notes(metrics, second)
    assert any("corpus mine: version differs" in n for n in notes), notes

    agree = _harness("qrels", "agreement", "--version", str(version), cwd=tmp_path)
    assert agree.returncode == 0 and "Cohen's kappa ana vs bo over 12 pairs" in agree.stdout


def test_bad_input_is_one_located_line(tmp_path):
    (tmp_path / "l.jsonl").write_text('{"query_id": "q", "doc_id": "d", "label": 7, '
                                      '"rater": "ana", "at": "2026-12-07T09:00:00Z"}\n')
    done = _harness("qrels", "version", "--labels", "l.jsonl", "--out", "v", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().startswith("error: l.jsonl:1: field 'label': expected one of")
    assert len(done.stderr.strip().splitlines()) == 1 and not (tmp_path / "v").exists()
    (tmp_path / "run.trec").write_text(RUN_A)
    (tmp_path / "keep.txt").write_text("mine\n")
    kept = _harness("pool", "run.trec", "--out", "keep.txt", cwd=tmp_path)
    assert kept.returncode == 2 and (tmp_path / "keep.txt").read_text() == "mine\n"
    tier = _harness("qrels", "version", "--labels", "l.jsonl", "--tier", "A", "--out", "v",
                    cwd=tmp_path)
    assert tier.returncode == 2 and "--tier A refused" in tier.stderr


def test_labels_outside_the_pool_are_refused_with_or_without_a_parent(tmp_path):
    (tmp_path / "a.trec").write_text(RUN_A)
    assert _harness("pool", "a.trec", "--depth", "1", "--out", "pool.jsonl",
                    cwd=tmp_path).returncode == 0
    _labels(tmp_path / "in.jsonl", [("q0", "d0")], "ana")
    _labels(tmp_path / "out.jsonl", [("q0", "d5")], "ana")  # d5 is not in a's top 1
    first = _harness("qrels", "version", "--pool", "pool.jsonl", "--labels", "in.jsonl",
                     "--out", "v", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (parent,) = (tmp_path / "v").glob("qrels-*.json")
    for extra in ([], ["--parent", str(parent)]):
        refused = _harness("qrels", "version", "--pool", "pool.jsonl", "--labels", "out.jsonl",
                           *extra, "--out", "v", cwd=tmp_path)
        assert refused.returncode == 2 and "are not in the pool" in refused.stderr


def test_a_tier_b_version_never_scores_a_tier_a_run(tmp_path):
    (tmp_path / "a.trec").write_text(RUN_A)
    _labels(tmp_path / "l.jsonl", [("q0", "d0"), ("q0", "d1")], "ana")
    made = _harness("qrels", "version", "--labels", "l.jsonl", "--corpus-name", "mine",
                    "--licence", "MIT", "--tier", "B", "--out", "v", cwd=tmp_path)
    assert made.returncode == 0 and "tier B" in made.stdout
    (version,) = (tmp_path / "v").glob("qrels-*.json")
    scored = _harness("score", "--qrels", str(version), "--run", "a.trec", "--licence", "MIT",
                      "--out", "s", "--no-warehouse", cwd=tmp_path)
    assert scored.returncode == 0, scored.stderr
    (corpus,) = json.loads((tmp_path / "s" / "metrics.json").read_text())["corpora"]
    assert corpus["tier"] == "B"  # MIT alone would give A: the version's tier caps it
    refused = _harness("score", "--qrels", str(version), "--run", "a.trec", "--licence", "MIT",
                       "--tier", "A", "--out", "s2", "--no-warehouse", cwd=tmp_path)
    assert refused.returncode == 2 and "is tier B" in refused.stderr
    assert not (tmp_path / "s2").exists()
