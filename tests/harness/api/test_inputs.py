"""Every accepted input form gives the results of the TREC-file form, and a malformed one
raises the located error (naming the row and the column) the file readers raise."""

from __future__ import annotations

import json
import math

import pytest

import harness
from harness.core.formats import FormatError
from harness.core.records import Qrel
from harness.evaluation.inputs import read_qrels_input, read_run_input

from tests.harness.api.helpers import TOY, TOY_ARGS, make_family

pd = pytest.importorskip("pandas")


def results(ev) -> tuple:
    """What a scoring produced, provenance of the inputs aside: rows, judgements, per-query
    values and rankings."""
    doc = ev.metrics
    return (doc["rows"], doc["judgements"], ev.per_query_rows, ev._scored.rankings,
            ev._scored.extra_files)


@pytest.fixture(scope="module")
def toy():
    run = read_run_input(TOY / "run.txt").run
    qrels = read_qrels_input(TOY / "qrels.txt").judgements
    return run, qrels


@pytest.fixture(scope="module")
def reference():
    return {order: results(harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", preserve_order=order,
                                            **TOY_ARGS))
            for order in (False, True)}


def run_frame(run, shuffle=False):
    rows = [{"query_id": q, "doc_id": d.doc_id, "rank": i, "score": d.score}
            for q, docs in run.items() for i, d in enumerate(docs, start=1)]
    frame = pd.DataFrame(rows)
    return frame.iloc[::-1].reset_index(drop=True) if shuffle else frame


def qrels_frame(qrels):
    return pd.DataFrame([{"query_id": q, "doc_id": d, "relevance": r}
                         for q, docs in qrels.items() for d, r in docs.items()])


FORMS = {
    "dict of dicts": lambda run, qrels: ({q: {d.doc_id: d.score for d in docs} for q, docs in run.items()},
                                         {q: dict(docs) for q, docs in qrels.items()}),
    "dict of pairs": lambda run, qrels: ({q: [(d.doc_id, d.score) for d in docs] for q, docs in run.items()},
                                         qrels),
    "harness records": lambda run, qrels: ([d for docs in run.values() for d in docs],
                                           [Qrel(q, d, r) for q, docs in qrels.items()
                                            for d, r in docs.items()]),
    "DataFrame": lambda run, qrels: (run_frame(run).drop(columns="rank"), qrels_frame(qrels)),
    "DataFrame ordered by its rank column": lambda run, qrels: (run_frame(run, shuffle=True),
                                                                qrels_frame(qrels)),
}


@pytest.mark.parametrize("preserve_order", [False, True])
@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_scores_like_the_trec_files(toy, reference, form, preserve_order):
    run, qrels = FORMS[form](*toy)
    ev = harness.evaluate(run, qrels, preserve_order=preserve_order, **TOY_ARGS)
    assert results(ev) == reference[preserve_order]
    assert ev.metrics["retrieval"]["source"] == "in-memory run"


def test_jsonl_and_beir_files_score_like_the_trec_files(tmp_path, toy, reference):
    run, qrels = toy
    (tmp_path / "run.jsonl").write_text("".join(
        json.dumps({"query_id": q, "doc_id": d.doc_id, "score": d.score}) + "\n"
        for q, docs in run.items() for d in docs))
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
        f"{q}\t{d}\t{r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    ev = harness.evaluate(tmp_path / "run.jsonl", tmp_path / "qrels.tsv", **TOY_ARGS)
    assert results(ev) == reference[False]
    assert ev.metrics["retrieval"]["source"] == "run file"


@pytest.mark.slow  # ranx compiles its numba kernels on first use (seconds)
def test_ranx_objects_score_like_the_trec_files(toy, reference):
    ranx = pytest.importorskip("ranx")
    run, qrels = toy
    ranx_run = ranx.Run({q: {d.doc_id: d.score for d in docs} for q, docs in run.items()}, name="toy")
    ranx_qrels = ranx.Qrels({q: dict(docs) for q, docs in qrels.items()})
    assert results(harness.evaluate(ranx_run, ranx_qrels, **TOY_ARGS)) == reference[False]


def test_ir_measures_records_score_like_the_trec_files(toy, reference):
    ir_measures = pytest.importorskip("ir_measures")
    run, qrels = toy
    scored = [ir_measures.ScoredDoc(d.query_id, d.doc_id, d.score) for docs in run.values() for d in docs]
    judged = (ir_measures.Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items())
    assert results(harness.evaluate(iter(scored), judged, **TOY_ARGS)) == reference[False]
    # ir_measures' own TREC reader yields the same records
    read = harness.evaluate(ir_measures.read_trec_run(str(TOY / "run.txt")),
                            ir_measures.read_trec_qrels(str(TOY / "qrels.txt")), **TOY_ARGS)
    assert results(read) == reference[False]


@pytest.mark.slow  # ranx compiles its numba kernels on first use (seconds)
def test_the_means_agree_with_ranx_on_an_untied_run(tmp_path):
    """An independent implementation: ranx (linear-gain nDCG, trec_eval's AP) on a run with
    every query answered and judgeable and no tied scores."""
    ranx = pytest.importorskip("ranx")
    qrels, runs = make_family(tmp_path)
    ev = harness.evaluate(runs["bm25"], qrels)
    got = ranx.evaluate(ranx.Qrels.from_file(str(qrels), kind="trec"),
                        ranx.Run.from_file(str(runs["bm25"]), kind="trec"),
                        ["ndcg@10", "ndcg@5", "mrr", "precision@5", "recall@10", "map", "hit_rate@1"])
    ours = ev.means["all"]
    for theirs, mine in [("ndcg@10", "nDCG@10"), ("ndcg@5", "nDCG@5"), ("mrr", "MRR"),
                         ("precision@5", "P@5"), ("recall@10", "R@10"), ("map", "AP"),
                         ("hit_rate@1", "Success@1")]:
        assert math.isclose(ours[mine], float(got[theirs]), abs_tol=1e-9), mine


def test_query_classes_as_a_dict_or_a_frame(reference):
    classes = dict(line.split("\t") for line in (TOY / "classes.tsv").read_text().split("\n") if line)
    args = {k: v for k, v in TOY_ARGS.items() if k != "query_classes"}
    by_dict = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", query_classes=classes, **args)
    frame = pd.DataFrame({"query_id": list(classes), "query_class": list(classes.values())})
    by_frame = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", query_classes=frame, **args)
    assert results(by_dict) == results(by_frame) == reference[False]


# --------------------------------------------------------------------------- bad input


def good_run_frame():
    return pd.DataFrame({"query_id": ["q1", "q1", "q2"], "doc_id": ["d1", "d2", "d1"],
                         "score": [0.9, 0.5, 0.7]}, index=[10, 11, 12])


QRELS = {"q1": {"d1": 1}, "q2": {"d1": 2}}


@pytest.mark.parametrize("mangle, message", [
    (lambda f: f.drop(columns="score"),
     "run DataFrame: field 'score': missing column; the columns are ['query_id', 'doc_id'], "
     "expected ['query_id', 'doc_id', 'score']"),
    (lambda f: f.rename(columns={"query_id": "qid"}),
     "run DataFrame: field 'query_id': missing column (found 'qid': rename it to 'query_id'); "
     "the columns are ['qid', 'doc_id', 'score'], expected ['query_id', 'doc_id', 'score']"),
    (lambda f: f.assign(score=[0.9, float("nan"), 0.7]),
     "run DataFrame row 1 (index 11): field 'score': score must be finite, got nan"),
    (lambda f: f.assign(score=[0.9, float("inf"), 0.7]),
     "run DataFrame row 1 (index 11): field 'score': score must be finite, got inf"),
    (lambda f: f.assign(score=["0.9", 0.5, 0.7]),
     "run DataFrame row 0 (index 10): field 'score': score must be a number, got '0.9'"),
    (lambda f: f.assign(doc_id=["d1", "d2", None]),
     "run DataFrame row 2 (index 12): field 'doc_id': missing"),
    (lambda f: f.assign(doc_id=["d1", "d1", "d1"]),
     "run DataFrame row 1 (index 11): field 'doc_id': duplicate (query_id='q1', doc_id='d1'); "
     "first seen on row 0"),
    (lambda f: f.iloc[0:0],
     "run DataFrame: empty: no records"),
])
def test_a_malformed_run_frame_is_refused_naming_its_row_and_column(mangle, message):
    with pytest.raises(FormatError) as caught:
        harness.evaluate(mangle(good_run_frame()), QRELS)
    assert str(caught.value) == message


@pytest.mark.parametrize("relevance, row, message", [
    (pd.Series([1, float("nan")], dtype=object), 1, "relevance must be an integer, got nan"),
    # a NaN makes pandas store the whole column as floats: the first row is refused
    (pd.Series([1, float("nan")]), 0, "relevance must be an integer, got 1.0"),
    (pd.Series([True, 1], dtype=object), 0, "relevance must be an integer, got True"),
])
def test_a_malformed_qrels_frame_is_refused_naming_its_row(relevance, row, message):
    frame = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "relevance": relevance})
    with pytest.raises(FormatError, match=rf"^qrels DataFrame row {row}: field 'relevance': {message}$"):
        harness.evaluate(good_run_frame(), frame)


def test_a_malformed_dict_is_refused_naming_query_and_document():
    with pytest.raises(FormatError, match=r"^run dict: field 'score': \(query_id='q1', doc_id='d2'\) "
                                          r"score must be finite, got nan$"):
        harness.evaluate({"q1": {"d1": 1.0, "d2": float("nan")}}, QRELS)
    with pytest.raises(FormatError, match=r"^qrels dict: field 'relevance': \(query_id='q1', "
                                          r"doc_id='d1'\) relevance must be an integer, got 0.5$"):
        harness.evaluate({"q1": {"d1": 1.0}}, {"q1": {"d1": 0.5}})
    with pytest.raises(FormatError, match="duplicate doc_id"):
        harness.evaluate({"q1": [("d1", 1.0), ("d1", 0.5)]}, QRELS)


def test_a_bad_file_raises_the_command_lines_located_error(tmp_path, capsys):
    from harness.cli import main

    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 0.5 x\nq1 Q0 d2 2 nan x\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    with pytest.raises(FormatError) as caught:
        harness.evaluate(tmp_path / "run.txt", tmp_path / "qrels.txt")
    assert main(["score", "--run", str(tmp_path / "run.txt"), "--qrels", str(tmp_path / "qrels.txt"),
                 "--out", str(tmp_path / "out"), "--no-warehouse"]) == 2
    assert capsys.readouterr().err == f"error: {caught.value}\n"
    assert str(caught.value) == f"{tmp_path / 'run.txt'}:2: field 'score': score must be finite, got 'nan'"


def test_an_unknown_input_kind_is_a_type_error_listing_the_forms():
    with pytest.raises(TypeError,
                       match="run: expected a path, a dict .* a ranx.Run or ScoredDoc records; got int"):
        harness.evaluate(42, QRELS)
    with pytest.raises(TypeError, match="qrels: expected a path"):
        harness.evaluate({"q1": {"d1": 1.0}}, 3.5)


def test_adapters_are_duck_typed_not_imported(toy):
    """Objects that only look like ranx's (a to_dict method) are read; nothing imports ranx."""
    import sys

    run, qrels = toy

    class LooksLikeRun:
        def to_dict(self):
            return {q: {d.doc_id: d.score for d in docs} for q, docs in run.items()}

    before = "ranx" in sys.modules
    ev = harness.evaluate(LooksLikeRun(), qrels, **TOY_ARGS)
    expected = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", **TOY_ARGS).metrics["rows"]
    assert ev.metrics["rows"] == expected
    assert ("ranx" in sys.modules) == before
    with pytest.raises(FormatError, match=r"^run __main__\.LooksLikeRun|^run tests"):
        class Broken(LooksLikeRun):
            def to_dict(self):
                return {"q1": {"d1": "x"}}
        harness.evaluate(Broken(), qrels)
