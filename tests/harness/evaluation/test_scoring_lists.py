"""A reader's lists of ScoredDocs score exactly as the checked path scores them.

Untied lists of ScoredDocs go to trec_eval as dicts (the fast path); the checked path is
what plain ``(doc_id, score)`` pairs take.  Both must give the same values, counts and kept
rankings, agree with the independent reference implementation, and refuse the same bad
lists with the same message.
"""

from __future__ import annotations

import random

import pytest

from harness.core.records import RankedDocs, ScoredDoc
from harness.evaluation import engine, scoring, ties
from harness.evaluation.scoring import score
from tests.harness.evaluation.scoring_reference import evaluate, random_doc_id

MEASURES = ["nDCG@5", "nDCG@10", "R@10", "P@5", "MRR", "MRR@10", "AP", "Success@1"]


def _fields(result):
    return (result.per_query, result.queries_unanswered, result.queries_dropped_unjudgeable,
            result.queries_not_in_qrels, result.negative_labels, result.judged_documents,
            result.relevant_documents, result.rankings)


def _case(seed: int):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for i in range(rng.randrange(1, 30)):
        query_id = f"q{i}"
        ids = list(dict.fromkeys(random_doc_id(rng) for _ in range(rng.randrange(1, 60))))
        scores = [rng.choice([rng.random(), round(rng.random(), 1), 1.0]) for _ in ids]
        if rng.random() < 0.5:  # an untied list
            scores = [s + k * 1e-9 for k, s in enumerate(rng.sample(range(10 ** 6), len(ids)))]
        docs = [ScoredDoc(query_id, d, s) for d, s in zip(ids, scores)]
        if rng.random() < 0.5:  # in rank order, as a run file usually is
            docs.sort(key=lambda d: -d.score)
        if rng.random() < 0.8:
            run[query_id] = docs
        qrels[query_id] = {d: rng.choice([0, 0, 1, 2, -1]) for d in rng.sample(ids, min(5, len(ids)))}
        qrels[query_id][f"unretrieved{i}"] = rng.choice([0, 1])
    return qrels, run


@pytest.mark.parametrize("seed", range(40))
def test_scored_doc_lists_score_as_the_checked_path_does(seed):
    qrels, run = _case(seed)
    pairs = {q: [(d.doc_id, d.score) for d in docs] for q, docs in run.items()}
    fast = score(qrels, run, MEASURES, keep_rankings=20)
    checked = score(qrels, pairs, MEASURES, keep_rankings=20)
    assert _fields(fast) == _fields(checked)
    columns = {q: RankedDocs([d for d, _ in p], [s for _, s in p]) for q, p in pairs.items()}
    assert _fields(score(qrels, columns, MEASURES, keep_rankings=20)) == _fields(checked)
    reference = evaluate(qrels, {q: dict(p) for q, p in pairs.items()})
    for query_id, values in fast.per_query.items():
        for measure in MEASURES:
            if measure in reference[query_id]:
                assert values[measure] == pytest.approx(reference[query_id][measure], abs=1e-12)


def test_the_fast_path_is_taken_for_untied_reader_lists(monkeypatch):
    calls = []
    real = scoring.normalise
    monkeypatch.setattr(scoring, "normalise", lambda *a: calls.append(a[2]) or real(*a))
    run = {"q1": [ScoredDoc("q1", "a", 0.9), ScoredDoc("q1", "b", 0.5)],
           "q2": [ScoredDoc("q2", "a", 0.5), ScoredDoc("q2", "b", 0.5)]}  # q2 is tied
    result = score({"q1": {"b": 1}, "q2": {"b": 1}}, run, ["MRR"], keep_rankings=5)
    assert calls == ["q2"]
    seen = []
    real_descending = ties.strictly_descending
    monkeypatch.setattr(ties, "strictly_descending",
                        lambda *a: seen.append(real_descending(*a)) or seen[-1])
    for docs in (run["q1"], run["q1"][::-1]):
        kept = score({"q1": {"b": 1}}, {"q1": docs}, ["MRR"], keep_rankings=5).rankings["q1"]
        assert kept == [("a", 0.9), ("b", 0.5)]
    assert seen == [True, False]  # in rank order: kept as it is; else sorted
    assert result.per_query == {"q1": {"MRR": 0.5}, "q2": {"MRR": 0.5}}  # tied: "a" before "b"
    assert result.rankings["q1"] == [("a", 0.9), ("b", 0.5)]


@pytest.mark.parametrize("docs, words", [
    ([ScoredDoc("q1", "a", 0.9), ScoredDoc("q1", "a", 0.5)], "duplicate doc_id 'a'"),
    ([ScoredDoc("q1", "a", 0.9), ScoredDoc("q9", "b", 0.5)], "holds documents of other queries"),
    ([ScoredDoc("q1", "a", float("nan")), ScoredDoc("q1", "b", 0.5)], "must be a finite number"),
    ([ScoredDoc("q1", 7, 0.9), ScoredDoc("q1", "b", 0.5)], "doc_id must be a string"),
    ([ScoredDoc("q1", "a", "0.9"), ScoredDoc("q1", "b", 0.5)], "must be a finite number"),
])
def test_bad_lists_are_refused_as_before(docs, words):
    pairs = [(d.doc_id, d.score) for d in docs]
    messages = []
    runs = [{"q1": docs}]
    if words != "holds documents of other queries":  # pairs carry no query id
        runs.append({"q1": pairs})
    for run in runs:
        with pytest.raises(ValueError, match=words) as info:
            score({"q1": {"b": 1}}, run, ["MRR"])
        messages.append(str(info.value))
    assert len(set(messages)) == 1


def test_numpy_scores_in_reader_lists():
    np = pytest.importorskip("numpy")
    docs = [ScoredDoc("q1", "a", np.float32(0.25)), ScoredDoc("q1", "b", np.float32(0.75))]
    result = score({"q1": {"a": 1}}, {"q1": docs}, ["MRR"])
    assert result.per_query == {"q1": {"MRR": 0.5}}


# --------------------------------------------------------------------------- the engine call


@pytest.mark.parametrize("seed", range(12))
def test_the_engine_called_directly_gives_what_its_wrapper_gives(seed):
    """``relevance_evaluator`` (the compiled engine, specs combined here) against
    pytrec_eval's own Python wrapper, on every trec_eval measure the harness names."""
    import pytrec_eval

    from harness.core.measures import resolve

    qrels, run = _case(seed)
    runs = {q: {d.doc_id: float(d.score) for d in docs} for q, docs in run.items()}
    specs = {m.trec_measure for m in resolve(None) if m.by_trec_eval} | {"ndcg_cut.3", "P.1",
                                                                          "recall.100"}
    direct = engine.relevance_evaluator(qrels, specs).evaluate(runs) if runs else {}
    wrapped = pytrec_eval.RelevanceEvaluator(qrels, specs).evaluate(runs)
    assert direct == wrapped and (not runs or direct)


def test_measure_specs_are_combined_per_measure():
    assert engine.combined_specs(["ndcg_cut.5", "ndcg_cut.10", "map", "P.5", "P.10", "P.5"]) == {
        "ndcg_cut.10,5", "map", "P.10,5"}


@pytest.mark.parametrize("seed", range(30))
def test_untied_float_lists_are_found_as_numpy_finds_them(seed):
    """The plain-Python check of exact float lists against numpy's (the path other value
    types take): the same lists count as untied."""
    np = pytest.importorskip("numpy")
    rng = random.Random(seed)
    pool = [0.0, -0.0, 0.5, 1.0, float("inf"), float("-inf"), float("nan"), 1e308, -1e308,
            2.0 ** 53, 2.0 ** 53 + 2, 5e-324]
    lists = {}
    for i in range(40):
        n = rng.choice([1, 2, 5, 40])
        values = [rng.random() for _ in range(n)]
        for _ in range(rng.choice([0, 0, 1, 2])):
            values[rng.randrange(n)] = rng.choice(pool + values)
        if rng.random() < 0.5:  # in rank order, as a run file usually is (NaN sorts anywhere)
            values.sort(reverse=True)
        lists[f"q{i}"] = {f"d{k}": v for k, v in enumerate(values)}
    descending = set()
    found = ties.untied_lists(lists, descending)
    expected = {q for q, docs in lists.items()
                if ties.ascending_if_untied(docs.values(), len(docs), np) is not None}
    assert set(found) == expected
    for q in expected:
        assert sorted(found[q]) == sorted(lists[q].values())
    assert descending == {q for q in expected
                          if list(lists[q].values()) == sorted(lists[q].values(), reverse=True)}


def test_kept_rankings_of_reader_lists_are_their_pairs():
    """A reader's list kept as ScoredDocs reads as (doc_id, score) pairs, and writes the
    rankings rows the pairs write."""
    from harness.evaluation.rows import QueryMeta, ranking_rows

    run = {"q2": [ScoredDoc("q2", "b", 0.9), ScoredDoc("q2", "a", 0.5)],
           "q1": [ScoredDoc("q1", "a", 0.5), ScoredDoc("q1", "b", 0.5)]}  # q1 is tied
    result = score({"q1": {"b": 1}, "q2": {"a": 1}}, run, ["MRR"], keep_rankings=1)
    meta = {q: QueryMeta("c", None) for q in run}
    assert isinstance(result.rankings, scoring.Rankings)
    rows = list(ranking_rows(result, meta))
    assert rows == [{"corpus": "c", "query_id": "q1", "rank": 1, "doc_id": "a", "score": 0.5},
                    {"corpus": "c", "query_id": "q2", "rank": 1, "doc_id": "b", "score": 0.9}]
    assert dict(result.rankings) == {"q1": [("a", 0.5)], "q2": [("b", 0.9)]}
    plain = scoring.ScoreResult(**{**result.__dict__, "rankings": dict(result.rankings)})
    assert list(ranking_rows(plain, meta)) == rows


@pytest.mark.parametrize("scores", [
    {"a": 0.49, "b": float("nan"), "c": float("nan"), "d": 0.29, "e": 0.74},  # exact floats
    {"a": 1, "b": float("nan"), "c": 0.29, "d": 3},  # mixed int and float: the numpy route
])
def test_nan_inside_a_short_dict_is_refused(scores):
    """A NaN that does not sort to an end of a short list was handed to trec_eval as it
    was (and scored); it is refused, naming the document."""
    with pytest.raises(ValueError, match="'b' must be a finite number"):
        score({"q": {"a": 1}}, {"q": scores}, ["MRR"])


def test_the_engine_version_is_the_installed_one():
    import importlib.metadata

    assert engine.engine_version() == importlib.metadata.version(engine.ENGINE_NAME)


@pytest.mark.parametrize("docs, words", [
    (RankedDocs(["a", "a"], [0.9, 0.5]), "duplicate doc_id 'a'"),
    (RankedDocs(["a", "b"], [float("nan"), 0.5]), "must be a finite number"),
    (RankedDocs(["a", 7], [0.9, 0.5]), "doc_id must be a string"),
    (RankedDocs(["a", "b"], [0.9]), "2 doc ids but 1 scores"),
])
def test_bad_columns_are_refused_naming_the_query(docs, words):
    with pytest.raises(ValueError, match=words):
        score({"q1": {"b": 1}}, {"q1": docs}, ["MRR"])


def test_empty_columns_count_as_unanswered():
    result = score({"q1": {"b": 1}, "q2": {"a": 1}},
                   {"q1": RankedDocs([], []), "q2": RankedDocs(["a"], [1.0])}, ["MRR"])
    assert result.queries_unanswered == ("q1",) and result.per_query["q1"]["MRR"] == 0.0
