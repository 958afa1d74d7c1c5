"""harness.evaluation.scoring: trec_eval semantics made explicit, checked against hand arithmetic.

Every expected value is worked out by hand (written as arithmetic) or by the independent
implementation in ``scoring_reference.py``, written from the definitions; none is
copied from the code under test.
"""

from __future__ import annotations

import math
import random

import pytest

from harness.core.measures import DEFAULT_MEASURES, MEASURES
from harness.core.records import ScoredDoc
from harness.evaluation.ordering import normalise_ranking, rank_scores
from harness.evaluation.relevance import prepare_qrels
from harness.evaluation.scoring import score
from tests.harness.evaluation import scoring_reference as ref

pytrec_eval = pytest.importorskip("pytrec_eval")

LOG2_3 = math.log2(3)


def raw_ndcg10(qrels, run) -> dict[str, float]:
    """What pytrec_eval alone says, ties and all."""
    out = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    return {q: v["ndcg_cut_10"] for q, v in out.items()}


# --------------------------------------------------------------------------- the facts


def test_graded_321_ndcg10_is_0_922495():
    qrels = {"q": {"d1": 3, "d2": 2, "d3": 1}}
    run = {"q": {"d2": 3.0, "d1": 2.0, "d3": 1.0}}  # ranking d2(2), d1(3), d3(1)
    dcg = 2 / math.log2(2) + 3 / math.log2(3) + 1 / math.log2(4)
    idcg = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert round(dcg / idcg, 6) == 0.922495
    assert raw_ndcg10(qrels, run)["q"] == pytest.approx(dcg / idcg, abs=1e-12)
    assert score(qrels, run, ["nDCG@10"]).per_query["q"]["nDCG@10"] == pytest.approx(dcg / idcg, abs=1e-12)


def test_a_tie_moves_raw_trec_eval_by_doc_id_but_not_the_harness():
    # gold chunk 9 tied with non-relevant chunk 10 of the same file, under two namings
    plain = ({"q": {"f_9": 1, "f_10": 0}}, {"q": {"f_9": 0.5, "f_10": 0.5}})
    padded = ({"q": {"f_09": 1, "f_10": 0}}, {"q": {"f_09": 0.5, "f_10": 0.5}})
    # trec_eval breaks ties by doc id descending: "f_9" > "f_10" but "f_10" > "f_09"
    assert raw_ndcg10(*plain)["q"] == pytest.approx(1.0)
    assert raw_ndcg10(*padded)["q"] == pytest.approx(1 / LOG2_3)  # gold second
    assert round(1 / LOG2_3, 6) == 0.630930
    # the harness orders by the integer chunk index: chunk 9 first under both namings
    a = score(*plain, ["nDCG@10"]).per_query["q"]["nDCG@10"]
    b = score(*padded, ["nDCG@10"]).per_query["q"]["nDCG@10"]
    assert a == b == 1.0


def test_digest_does_not_outrank_chunks_by_its_name():
    # 'd' sorts above every digit, so raw trec_eval ranks a tied digest first
    qrels = {"q": {"m_0": 1, "m_digest": 0}}
    run = {"q": {"m_digest": 0.25, "m_0": 0.25, "m_11": 0.25}}
    assert raw_ndcg10(qrels, run)["q"] == pytest.approx(1 / math.log2(4))  # m_digest, m_11, m_0
    assert score(qrels, run, ["nDCG@10"]).per_query["q"]["nDCG@10"] == 1.0  # m_0 first


def test_ndcg_at_10_and_bare_ndcg_differ_by_hand():
    # 20 relevant documents; the run retrieves 10 of them in its top 10 and nothing else
    relevant = [f"r{i:02d}" for i in range(20)]
    qrels = {"q": dict.fromkeys(relevant, 1)}
    run = {"q": {d: float(100 - i) for i, d in enumerate(relevant[:10])}}
    dcg10 = sum(1 / math.log2(i + 2) for i in range(10))
    idcg_all = sum(1 / math.log2(i + 2) for i in range(20))
    values = score(qrels, run, ["nDCG@10", "nDCG"]).per_query["q"]
    assert values["nDCG@10"] == pytest.approx(dcg10 / dcg10)  # ideal truncated at 10: 1.0
    assert values["nDCG"] == pytest.approx(dcg10 / idcg_all, abs=1e-12)
    assert round(values["nDCG"], 3) == 0.645


def test_unanswered_query_counts_as_zero_in_the_mean():
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}}
    run = {"q1": {"a": 1.0}}  # q2 unanswered
    result = score(qrels, run, ["nDCG@10", "MRR"])
    assert result.queries_unanswered == ("q2",)
    assert result.per_query["q2"] == {"nDCG@10": 0.0, "MRR": 0.0}
    assert result.mean("nDCG@10") == (1.0 + 0.0) / 2
    # the substitution this guards against: the mean over what pytrec_eval returned
    raw = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    naive = sum(v["ndcg_cut_10"] for v in raw.values()) / len(raw)
    assert naive == 1.0
    assert result.mean("nDCG@10") != naive
    assert result.means() == {"nDCG@10": 0.5, "MRR": 0.5}


def test_unjudgeable_query_is_dropped_and_counted_never_scored():
    qrels = {"q1": {"a": 1}, "q2": {"b": 0, "c": -1}, "q3": {}}
    run = {"q1": {"a": 1.0}, "q2": {"b": 1.0}}
    result = score(qrels, run, ["nDCG@10"])
    assert result.queries_dropped_unjudgeable == ("q2", "q3")
    assert set(result.per_query) == {"q1"}
    assert result.mean("nDCG@10") == 1.0  # not (1 + 0 + 0) / 3
    assert result.negative_labels == 1


def test_negative_labels_are_judged_non_relevant_and_counted():
    qrels = {"q": {"a": -1, "b": 1, "c": -2}}
    run = {"q": {"a": 2.0, "b": 1.0}}
    result = score(qrels, run, ["nDCG@10", "P@5", "MRR"])
    assert result.negative_labels == 2
    assert result.judged_documents == 3 and result.relevant_documents == 1
    values = result.per_query["q"]
    assert values["MRR"] == 1 / 2
    assert values["P@5"] == 1 / 5
    assert values["nDCG@10"] == pytest.approx((1 / LOG2_3) / 1)
    judgeable, dropped, negative = prepare_qrels(qrels)
    assert judgeable == {"q": {"a": 0, "b": 1, "c": 0}} and dropped == [] and negative == 2


def test_binary_collapses_grades_to_one():
    qrels = {"q": {"d1": 3, "d2": 1}}
    run = {"q": {"d2": 2.0, "d1": 1.0}}
    graded = score(qrels, run, ["nDCG@10"]).per_query["q"]["nDCG@10"]
    binary = score(qrels, run, ["nDCG@10"], binary=True).per_query["q"]["nDCG@10"]
    assert graded == pytest.approx((1 + 3 / LOG2_3) / (3 + 1 / LOG2_3))
    assert binary == 1.0  # both relevant documents in the top 2


def test_run_queries_absent_from_qrels_are_reported_not_scored():
    result = score({"q1": {"a": 1}}, {"q1": {"a": 1.0}, "zz": {"a": 1.0}}, ["MRR"])
    assert result.queries_not_in_qrels == ("zz",)
    assert set(result.per_query) == {"q1"}


def test_mrr_at_10_cuts_the_run_and_success_at_1():
    ranked = [f"n{i:02d}" for i in range(10)] + ["gold"]  # gold at rank 11
    run = {"q": {d: float(100 - i) for i, d in enumerate(ranked)}}
    values = score({"q": {"gold": 1}}, run, ["MRR", "MRR@10", "Success@1"]).per_query["q"]
    assert values == {"MRR": 1 / 11, "MRR@10": 0.0, "Success@1": 0.0}
    run = {"q": {"gold": 5.0, "x": 4.0}}
    values = score({"q": {"gold": 1}}, run, ["MRR", "MRR@10", "Success@1"]).per_query["q"]
    assert values == {"MRR": 1.0, "MRR@10": 1.0, "Success@1": 1.0}


def test_preserve_order_scores_the_list_as_given():
    qrels = {"q": {"b": 1}}
    docs = [("a", 0.1), ("b", 0.9)]  # the order is the product's own (e.g. after rerank)
    assert score(qrels, {"q": docs}, ["MRR"], preserve_order=True).per_query["q"]["MRR"] == 1 / 2
    assert score(qrels, {"q": docs}, ["MRR"]).per_query["q"]["MRR"] == 1.0


# --------------------------------------------------------------------------- renaming


def _rename(doc_id: str, files: dict[str, str], width: int) -> str:
    file_id, _, tail = doc_id.rpartition("_")
    if tail == "digest":
        return f"{files[file_id]}_digest"
    return f"{files[file_id]}_{int(tail):0{width}d}"


def _tie_heavy_case(seed: int):
    rng = random.Random(seed)
    files = ["ES2006a", "ES2006b", "Bed002", "TS3012c"]
    qrels, run = {}, {}
    for i in range(30):
        q = f"q{i}"
        ids = list(dict.fromkeys(
            f"{rng.choice(files)}_{'digest' if rng.random() < 0.1 else rng.randrange(25)}"
            for _ in range(30)))
        run[q] = {d: rng.choice([0.5, 0.25, 1 / 61 + 1 / 62, 1 / 62 + 1 / 61, 0.125]) for d in ids}
        qrels[q] = {d: rng.choice([0, 0, 1, 2]) for d in rng.sample(ids, 8)}
        qrels[q][ids[0]] = 1
    # a tie the names decide for raw trec_eval: chunk 9 (gold) and chunk 10 (not)
    run["q0"] = {"ES2006a_9": 0.5, "ES2006a_10": 0.5}
    qrels["q0"] = {"ES2006a_9": 1, "ES2006a_10": 0}
    return qrels, run


def _renamed(mapping, files, width):
    return {q: {_rename(d, files, width): v for d, v in docs.items()} for q, docs in mapping.items()}


@pytest.mark.parametrize("seed", [1, 2])
def test_renaming_every_doc_id_leaves_every_harness_metric_unchanged(seed):
    qrels, run = _tie_heavy_case(seed)
    names = sorted(MEASURES)
    before = score(qrels, run, names).per_query
    files = sorted({d.rpartition("_")[0] for docs in run.values() for d in docs}
                   | {d.rpartition("_")[0] for docs in qrels.values() for d in docs})
    rng = random.Random(seed)
    # order-preserving file maps: uuid-like hex names, and short names; plus zero padding
    hexes = sorted(f"{rng.getrandbits(64):016x}" for _ in files)
    renamings = [
        ({f: f for f in files}, 4),  # zero-padded chunk indexes only
        (dict(zip(files, hexes)), 0),  # uuid-like file ids
        ({f: f"m{i:03d}" for i, f in enumerate(files)}, 6),  # both
    ]
    raw_before = raw_ndcg10(qrels, run)
    raw_changed = False
    for file_map, width in renamings:
        new_qrels, new_run = _renamed(qrels, file_map, width), _renamed(run, file_map, width)
        after = score(new_qrels, new_run, names).per_query
        assert after == before  # exact equality, every measure, every query
        raw_changed |= raw_ndcg10(new_qrels, new_run) != raw_before
    assert raw_changed, "the case must contain a tie that raw trec_eval breaks by name"


# --------------------------------------------------------------------------- independent values


def _random_case(seed: int, tie_share: float = 0.7):
    """Graded qrels with negatives, unretrieved gold, unanswered and unjudgeable queries,
    and runs whose scores tie (``tie_share`` of them drawn from a few values) across chunk,
    digest and plain document ids; short and long lists."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for i in range(60):
        q = f"q{i:02d}"
        ids = list(dict.fromkeys(ref.random_doc_id(rng) for _ in range(rng.randrange(1, 90))))
        pool = ids + [ref.random_doc_id(rng) for _ in range(5)]
        judged = rng.sample(pool, min(len(pool), rng.randrange(1, 15)))
        qrels[q] = {d: rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]) for d in judged}
        if rng.random() < 0.1:
            continue  # unanswered
        scores = [0.5, 0.25, 0.75, 1.0, rng.random()]
        run[q] = {d: rng.choice(scores) if rng.random() < tie_share else rng.random() for d in ids}
    return qrels, run


def _as_form(run, form):
    if form == "dict":
        return run
    if form == "pairs":
        return {q: list(docs.items()) for q, docs in run.items()}
    return {q: [ScoredDoc(q, d, s) for d, s in docs.items()] for q, docs in run.items()}


@pytest.mark.parametrize("seed, tie_share", [(11, 0.7), (12, 0.05), (13, 0.0)])
@pytest.mark.parametrize("form", ["dict", "pairs", "scored"])
@pytest.mark.parametrize("binary", [False, True])
def test_values_equal_an_independent_implementation(seed, tie_share, form, binary):
    qrels, run = _random_case(seed, tie_share)
    names = ["nDCG@5", "nDCG@10", "nDCG@20", "nDCG", "R@5", "R@10", "R@20", "R@100",
             "P@5", "P@10", "MRR", "MRR@10", "AP", "Success@1", "Success@5", "Success@10"]
    result = score(qrels, _as_form(run, form), names, binary=binary)
    expected = ref.evaluate(qrels, run, binary=binary)
    assert set(result.per_query) == set(expected)
    assert result.queries_dropped_unjudgeable == tuple(sorted(set(qrels) - set(expected)))
    for q, values in expected.items():
        for name in names:
            assert result.per_query[q][name] == pytest.approx(values[name], abs=1e-9), (q, name)
    for name in names:  # -c: the mean over every judgeable qrels query
        mean = sum(v[name] for v in expected.values()) / len(expected)
        assert result.mean(name) == pytest.approx(mean, abs=1e-9)


def test_normalised_order_equals_an_independent_sort():
    rng = random.Random(5)
    for _ in range(200):
        ids = list(dict.fromkeys(ref.random_doc_id(rng) for _ in range(rng.randrange(1, 40))))
        docs = [(d, rng.choice([0.5, 0.25, -0.0, 0.0, 3])) for d in ids]
        rng.shuffle(docs)
        assert normalise_ranking(docs) == ref.harness_order(docs)


def test_rank_scores_are_distinct_and_descending():
    ranking = [("a", 0.5), ("b", 0.5), ("c", 0.1)]
    assert rank_scores(ranking) == {"a": 3.0, "b": 2.0, "c": 1.0}
    assert rank_scores(ranking, cutoff=2) == {"a": 2.0, "b": 1.0}
    assert rank_scores([]) == {}
    big = rank_scores([(str(i), 0.0) for i in range(1500)])
    assert big["0"] == 1500.0 and big["1499"] == 1.0


# --------------------------------------------------------------------------- input forms and errors


def test_every_input_form_scores_alike_including_numpy_scalars():
    np = pytest.importorskip("numpy")
    qrels, run = _random_case(21)
    expected = score(qrels, run, DEFAULT_MEASURES).per_query
    for form in ("pairs", "scored"):
        assert score(qrels, _as_form(run, form), DEFAULT_MEASURES).per_query == expected
    # numpy float32 scores: trec_eval cannot read them, the harness re-ranks them
    as32 = {q: {d: np.float32(s) for d, s in docs.items()} for q, docs in run.items()}
    exact = {q: {d: float(np.float32(s)) for d, s in docs.items()} for q, docs in run.items()}
    assert score(qrels, as32, DEFAULT_MEASURES).per_query == score(qrels, exact, DEFAULT_MEASURES).per_query


def test_large_integers_equal_as_doubles_never_reach_trec_eval_raw():
    # 2**53 + 1 > 2**53 in Python, but they are one double: handed over raw, trec_eval
    # would see a tie and put "f_2" (greater id) first
    qrels = {"q": {"f_1": 1, "f_2": 0}}
    run = {"q": {"f_1": 2**53 + 1, "f_2": 2**53, "z": 0.5}}
    assert pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["q"]["recip_rank"] == 1 / 2
    assert score(qrels, run, ["MRR"]).per_query["q"]["MRR"] == 1.0


@pytest.mark.parametrize("bad, message", [
    ({"q": {"a": float("nan"), "b": 1.0}}, "field 'score' of doc_id 'a'"),
    ({"q": {"a": float("inf")}}, "field 'score' of doc_id 'a'"),
    ({"q": [("a", 1.0), ("a", 2.0)]}, "duplicate doc_id 'a'"),
    ({"q": {"a": "high"}}, "field 'score' of doc_id 'a'"),
    ({"q": {7: 1.0}}, "doc_id must be a string"),
    ({"q": [ScoredDoc("other", "a", 1.0)]}, "documents of other queries"),
])
def test_bad_runs_are_refused_naming_the_query(bad, message):
    with pytest.raises(ValueError, match="query 'q'") as info:
        score({"q": {"a": 1}}, bad, ["MRR"])
    assert message in str(info.value)


@pytest.mark.parametrize("bad, message", [
    ({"q": {"a": 1.5}}, "must be an integer, got 1.5"),
    ({"q": {"a": "1"}}, "must be an integer, got '1'"),
    ({"q": {"a": True}}, "must be an integer, got True"),
    ({1: {"a": 1}}, "query_id must be a string"),
])
def test_bad_qrels_are_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        score(bad, {"q": {"a": 1.0}}, ["MRR"])


def test_non_string_qrels_doc_id_is_named():
    with pytest.raises(ValueError, match="doc_id for query_id='q' must be a string"):
        score({"q": {3: 1, "a": 1}}, {"q": {"a": 1.0}}, ["MRR"])


def test_unknown_measure_lists_the_known_ones():
    with pytest.raises(ValueError) as info:
        score({"q": {"a": 1}}, {"q": {"a": 1.0}}, ["nDCG@7"])
    assert str(sorted(MEASURES)) in str(info.value)


def test_keep_rankings_holds_the_normalised_top_k():
    qrels = {"q": {"f_2": 1}}
    run = {"q": {"f_10": 0.5, "f_2": 0.5, "f_digest": 0.5, "g": 0.9}}
    result = score(qrels, run, ["MRR"], keep_rankings=3)
    assert result.rankings == {"q": [("g", 0.9), ("f_2", 0.5), ("f_10", 0.5)]}


def _equal_length_case(seed: int, queries: int = 40, length: int = 50):
    """Many lists of one length (checked for ties as rows of one array), a third of them
    holding a tie, and long lists of distinct floats."""
    rng = random.Random(seed)
    qrels, run = {}, {}
    for i in range(queries):
        q = f"b{i:02d}"
        ids = [f"F{rng.randrange(3)}_{j}" for j in rng.sample(range(500), length)]
        scores = [rng.random() for _ in ids]
        if i % 3 == 0:
            scores[rng.randrange(length)] = scores[rng.randrange(length)]
        run[q] = dict(zip(ids, scores))
        qrels[q] = {d: rng.choice([0, 1, 2]) for d in rng.sample(ids, 10)}
        qrels[q][ids[rng.randrange(length)]] = 1
    return qrels, run


def test_lists_checked_in_batches_match_the_reference():
    qrels, run = _equal_length_case(31)
    names = ["nDCG@10", "nDCG@20", "R@20", "MRR", "MRR@10", "AP", "P@10"]
    result = score(qrels, run, names)
    expected = ref.evaluate(qrels, run)
    for q, values in expected.items():
        for name in names:
            assert result.per_query[q][name] == pytest.approx(values[name], abs=1e-9), (q, name)


@pytest.mark.parametrize("bad", [float("nan"), "0.5", None])
def test_a_bad_value_in_a_batch_is_named(bad):
    qrels, run = _equal_length_case(32)
    doc = sorted(run["b07"])[3]
    run["b07"][doc] = bad
    with pytest.raises(ValueError, match=f"query 'b07': field 'score' of doc_id '{doc}'"):
        score(qrels, run, ["MRR"])


def test_mapping_negative_labels_to_zero_changes_no_harness_measure_in_trec_eval():
    # trec_eval reads a negative label as "not in the pool" (it moves bpref, which the
    # harness does not report); for every harness measure it is the same as a 0
    qrels, run = _random_case(41)
    zeroed = {q: {d: max(r, 0) for d, r in docs.items()} for q, docs in qrels.items()}
    normalised = {q: rank_scores(normalise_ranking(docs)) for q, docs in run.items() if docs}
    by_trec = [m for m in MEASURES.values() if m.by_trec_eval]  # Judged@10 is not trec_eval's
    specs = {m.trec_measure for m in by_trec}
    raw = pytrec_eval.RelevanceEvaluator(qrels, specs).evaluate(normalised)
    mapped = pytrec_eval.RelevanceEvaluator(zeroed, specs).evaluate(normalised)
    assert any(r < 0 for docs in qrels.values() for r in docs.values())
    keys = {m.trec_key for m in by_trec}
    assert {q: {k: v[k] for k in keys} for q, v in raw.items()} == \
        {q: {k: v[k] for k in keys} for q, v in mapped.items()}
    ranked = {"q": {"a": 4.0, "c": 3.0, "b": 2.0, "d": 1.0}}  # a, c, b, d
    minus = pytrec_eval.RelevanceEvaluator({"q": {"a": -1, "b": 0, "c": 1, "d": 1}}, {"bpref"})
    zero = pytrec_eval.RelevanceEvaluator({"q": {"a": 0, "b": 0, "c": 1, "d": 1}}, {"bpref"})
    # bpref = mean over relevant r of 1 - (judged non-relevant above r) / min(R, N), R = 2
    assert minus.evaluate(ranked)["q"]["bpref"] == ((1 - 0 / 1) + (1 - 1 / 1)) / 2  # N = 1
    assert zero.evaluate(ranked)["q"]["bpref"] == ((1 - 1 / 2) + (1 - 2 / 2)) / 2  # N = 2


def test_scoring_in_batches_gives_the_values_of_one_call(monkeypatch):
    """trec_eval scores EVAL_BATCH queries per call (bounded memory): batches of 2 give
    pytrec_eval's values of one call over the whole run, per query and every measure
    (MRR@10 takes its second, cut pass per batch too), unanswered queries included."""
    import numpy as np

    import harness.evaluation.scoring as scoring

    rng = random.Random(11)
    qrels = {f"q{i}": {f"d{j}": rng.randrange(3) for j in rng.sample(range(40), 6)}
             for i in range(9)}
    for docs in qrels.values():
        docs[next(iter(docs))] = 1
    run = {q: {f"d{j}": rng.random() for j in rng.sample(range(40), 15)}
           for q in list(qrels)[:7]}  # q7, q8 unanswered
    run["q3"] = {d: np.float32(s) for d, s in run["q3"].items()}  # the re-rank fallback
    measures = list(DEFAULT_MEASURES)
    whole = score(qrels, run, measures).per_query
    monkeypatch.setattr(scoring, "EVAL_BATCH", 2)
    assert score(qrels, run, measures).per_query == whole
    engine = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recip_rank"})
    plain = {q: {d: float(s) for d, s in docs.items()} for q, docs in run.items()}
    for q, values in engine.evaluate(plain).items():
        assert whole[q]["nDCG@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-12)
        assert whole[q]["MRR"] == pytest.approx(values["recip_rank"], abs=1e-12)
    assert whole["q8"]["nDCG@10"] == 0.0 and whole["q7"]["MRR"] == 0.0
