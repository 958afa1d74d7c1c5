"""Scores distinct as doubles but tied as the engine's single-precision floats.

pytrec_eval_terrier keeps each score as a C float and breaks a tie by document id,
descending.  0.50000000001 and 0.5 are one float (0.5); 1e300 and 1e39 both exceed the
float range (about 3.4e38) and become infinite.  Handed to the engine as they are, the
document *name* decides such a pair: the harness must give them rank-derived scores in the
full-precision order (the order the official trec_eval, which reads doubles, uses and the
order rankings.jsonl records).

Every case: qrels judge ``b`` relevant; the run scores another document a hair above
``b``.  By hand, ``b`` is at rank 2, so MRR = 1/2, whatever the other document is called;
raw pytrec_eval says 1/1 when the other name sorts below "b" (tie broken by id descending
puts "b" first) and 1/2 when it sorts above.
"""

from __future__ import annotations

import json

import pytest

import harness
from harness.cli import main
from harness.core.records import RankedDocs, ScoredDoc
from harness.evaluation.scoring import score

pytrec_eval = pytest.importorskip("pytrec_eval")

#: (score of the other document, score of b): distinct doubles, one single-precision value
PAIRS = [(0.50000000001, 0.5), (1e300, 1e39), (-1e39, -1e300)]
QRELS = {"q1": {"b": 1}}
MRR_B_SECOND = 1 / 2  # b retrieved at rank 2


def _run(other: str, high: float, low: float) -> dict:
    return {"q1": {other: high, "b": low}}


@pytest.mark.parametrize("high, low", PAIRS)
def test_raw_engine_lets_the_name_decide(high, low):
    """The defect itself, in the engine: why the harness must not hand such a list over."""
    def raw(other):
        return pytrec_eval.RelevanceEvaluator(QRELS, {"recip_rank"}).evaluate(
            _run(other, high, low))["q1"]["recip_rank"]
    assert raw("a") == 1.0  # tie, ids descending: "b" > "a", so b first
    assert raw("z") == MRR_B_SECOND  # "z" > "b": z first


@pytest.mark.parametrize("high, low", PAIRS)
@pytest.mark.parametrize("other", ["a", "z"])
@pytest.mark.parametrize("form", ["dict", "pairs", "scored", "columns"])
def test_every_list_form_ranks_by_full_precision(high, low, other, form):
    run = _run(other, high, low)
    docs = list(run["q1"].items())
    given = {"dict": run["q1"], "pairs": docs,
             "scored": [ScoredDoc("q1", d, s) for d, s in docs],
             "columns": RankedDocs([d for d, _ in docs], [s for _, s in docs])}[form]
    result = score(QRELS, {"q1": given}, ["MRR", "MRR@10", "Success@1"], keep_rankings=5)
    assert result.per_query["q1"] == {"MRR": MRR_B_SECOND, "MRR@10": MRR_B_SECOND, "Success@1": 0.0}
    assert [d for d, _ in result.rankings["q1"]] == [other, "b"]


@pytest.mark.parametrize("other", ["a", "z"])
def test_numpy_scores_are_checked_in_single_precision_too(other):
    """Non-float scores (numpy doubles, what a DataFrame holds) take the numpy check: short
    lists one by one, long lists of one length as rows of a batch."""
    np = pytest.importorskip("numpy")
    short = {"q1": {other: np.float64(0.50000000001), "b": np.float64(0.5)}}
    assert score(QRELS, short, ["MRR"]).per_query["q1"]["MRR"] == MRR_B_SECOND


@pytest.mark.parametrize("other", ["a", "z"])
def test_numpy_scores_checked_as_a_batch_in_single_precision(other):
    np = pytest.importorskip("numpy")
    # 10 queries of 40 documents (a batch): the top two of each tie in single precision
    qrels, run = {}, {}
    for i in range(10):
        q = f"q{i}"
        docs = {f"{other}{i}": np.float64(0.50000000001), "b": np.float64(0.5)}
        docs.update({f"n{j:02d}": np.float64(0.25 - j / 1024) for j in range(38)})
        run[q], qrels[q] = docs, {"b": 1}
    result = score(qrels, run, ["MRR", "MRR@10"])
    assert {v["MRR"] for v in result.per_query.values()} == {MRR_B_SECOND}
    assert {v["MRR@10"] for v in result.per_query.values()} == {MRR_B_SECOND}


def test_lists_distinct_in_single_precision_keep_the_fast_path_values():
    """Scores 2**-10 apart are distinct floats: the values are those of the order given."""
    run = {"q1": {"a": 0.5 + 2 ** -10, "b": 0.5}}
    assert score(QRELS, run, ["MRR"]).per_query["q1"]["MRR"] == MRR_B_SECOND
    run = {"q1": {"a": 0.5, "b": 0.5 + 2 ** -10}}
    assert score(QRELS, run, ["MRR"]).per_query["q1"]["MRR"] == 1 / 1


def _write_files(root, other, high, low):
    root.mkdir(parents=True, exist_ok=True)
    (root / "qrels.txt").write_text("q1 0 b 1\n")
    (root / "run.txt").write_text(f"q1 Q0 {other} 1 {high!r} t\nq1 Q0 b 2 {low!r} t\n")
    return root / "qrels.txt", root / "run.txt"


@pytest.mark.parametrize("high, low", PAIRS[:2])
@pytest.mark.parametrize("other", ["a", "z"])
def test_harness_score_and_rankings_jsonl_agree(tmp_path, high, low, other):
    qrels, run = _write_files(tmp_path, other, high, low)
    out = tmp_path / "out"
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                 "--measures", "MRR", "Success@1", "--no-warehouse"]) == 0
    doc = json.loads((out / "metrics.json").read_text())
    (row,) = [r for r in doc["rows"] if r["query_class"] == "all"]
    # Judged@10, reported by every run: one of the two retrieved documents is judged
    assert row["metrics"] == {"MRR": MRR_B_SECOND, "Success@1": 0.0, "Judged@10": 0.5}
    ranked = [json.loads(line) for line in (out / "rankings.jsonl").read_text().splitlines()]
    assert [(r["doc_id"], r["rank"]) for r in ranked] == [(other, 1), ("b", 2)]


@pytest.mark.parametrize("other", ["a", "z"])
def test_api_evaluate_and_compare_from_files_dicts_and_dataframes(tmp_path, other):
    pd = pytest.importorskip("pandas")
    qrels_file, run_file = _write_files(tmp_path, other, 0.50000000001, 0.5)
    run = _run(other, 0.50000000001, 0.5)
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": [other, "b"],
                          "score": [0.50000000001, 0.5]})
    qrels_frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["b"], "relevance": [1]})
    for r, q in ((run_file, qrels_file), (run, QRELS), (frame, qrels_frame)):
        evaluation = harness.evaluate(r, q, ["MRR"], corpus="c")
        assert evaluation.per_query == {"q1": {"MRR": MRR_B_SECOND, "Judged@10": 0.5}}
    comparison = harness.compare({"file": run_file, "dict": run, "frame": frame}, QRELS, ["MRR"],
                                 corpus="c", resamples=200, permutations=200)
    for evaluation in comparison.evaluations.values():
        assert evaluation.per_query == {"q1": {"MRR": MRR_B_SECOND, "Judged@10": 0.5}}


@pytest.mark.parametrize("other", ["a", "z"])
def test_gate_scores_the_tie_by_full_precision(tmp_path, capsys, other):
    qrels, run = _write_files(tmp_path, other, 0.50000000001, 0.5)
    args = ["gate", "--qrels", str(qrels), "--run", str(run), "--measure", "MRR",
            "--summary", str(tmp_path / "summary.md"), "--json"]
    assert main([*args, "--threshold", str(MRR_B_SECOND)]) == 0  # mean 1/2 clears 1/2
    capsys.readouterr()
    assert main([*args, "--threshold", "0.75"]) == 1  # but not 3/4 (raw engine: 1.0 for "a")
