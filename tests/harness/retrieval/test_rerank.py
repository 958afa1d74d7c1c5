"""The rerank stage: tail ordering, diversity sampling, a real cross-encoder offline."""

from __future__ import annotations

import random

import pytest

from harness.retrieval.rerank import CrossEncoderReranker, diversity_sample, rerank_order, rerank_stage
from harness.evaluation.scoring import score


def _file(item):
    return item[0].rpartition("_")[0]


def test_rerank_tail_stays_below_the_reranked_head_in_its_own_order():
    """Cross-encoder scores are negative here and the tail's fusion scores are small
    positives: a sort across both scales would float the tail to the top."""
    candidates = [("a_0", 0.032), ("b_0", 0.031), ("c_0", 0.030), ("d_0", 0.016), ("e_0", 0.017)]
    head_scores = [-9.5, -4.25, -11.0]  # for a, b, c (rerank_max_pairs = 3)
    got = rerank_order(candidates, head_scores)
    assert [(d, r) for d, _, r in got] == [("b_0", True), ("a_0", True), ("c_0", True),
                                           ("d_0", False), ("e_0", False)]
    # the tail keeps retrieval order even though e_0 carries the higher fusion score
    assert [s for _, s, _ in got] == [-4.25, -9.5, -11.0, 0.016, 0.017]
    # what the metric sees: prompt order, not a re-sort by score
    final = [(d, float(len(got) - i)) for i, (d, _, _) in enumerate(got)]
    qrels = {"q": {"d_0": 1}}
    in_order = score(qrels, {"q": final}, ["MRR"], preserve_order=True)
    assert in_order.per_query["q"]["MRR"] == pytest.approx(1 / 4)
    mixed = score(qrels, {"q": [(d, s) for d, s, _ in got]}, ["MRR"])
    assert mixed.per_query["q"]["MRR"] == pytest.approx(1 / 2)  # the wrong (mixed-scale) number


def test_rerank_ties_keep_retrieval_position():
    got = rerank_order([("a_0", 3.0), ("b_0", 2.0), ("c_0", 1.0)], [0.5, 0.5, 0.7])
    assert [d for d, _, _ in got] == ["c_0", "a_0", "b_0"]


def test_diversity_sample_round_robin_by_hand():
    items = [("A_1", 0), ("A_2", 0), ("A_3", 0), ("B_1", 0), ("C_1", 0), ("B_2", 0), ("A_4", 0)]
    # files in first-appearance order A, B, C; round 0: A_1 B_1 C_1; round 1: A_2 B_2
    assert [d for d, _ in diversity_sample(items, _file, 2, 10)] == \
        ["A_1", "B_1", "C_1", "A_2", "B_2"]
    assert [d for d, _ in diversity_sample(items, _file, 2, 4)] == ["A_1", "B_1", "C_1", "A_2"]
    assert [d for d, _ in diversity_sample(items, _file, 4, 10)] == \
        ["A_1", "B_1", "C_1", "A_2", "B_2", "A_3", "A_4"]
    with pytest.raises(ValueError):
        diversity_sample(items, _file, 0, 3)


def test_diversity_sample_is_prefix_invariant_in_its_cap_over_200_random_inputs():
    rng = random.Random(20260812)
    for trial in range(200):
        n_files = rng.randint(1, 8)
        items = [(f"f{rng.randrange(n_files)}_{i}", rng.random())
                 for i in range(rng.randint(0, 60))]
        per_file = rng.randint(1, 6)
        full = diversity_sample(items, _file, per_file, 10_000)
        small, large = sorted(rng.sample(range(1, 40), 2))
        a = diversity_sample(items, _file, per_file, small)
        b = diversity_sample(items, _file, per_file, large)
        assert a == b[:len(a)], trial
        assert len(a) == min(small, len(full)) and len(b) == min(large, len(full)), trial
        # independent properties: each file at most per_file times, in its own order
        for f in {_file(x) for x in b}:
            mine = [x for x in b if _file(x) == f]
            assert len(mine) <= per_file
            assert mine == [x for x in items if _file(x) == f][:len(mine)]


class _FakeReranker:
    def __init__(self, table):
        self.table = table
        self.calls = []

    def score(self, query, texts):
        self.calls.append(list(texts))
        return [self.table[t] for t in texts]


def test_rerank_stage_scores_only_the_head_and_samples_the_prompt():
    candidates = [("A_0", 0.9), ("A_1", 0.8), ("B_0", 0.7), ("A_2", 0.6), ("C_0", 0.5)]
    text = {d: d.lower() for d, _ in candidates}
    reranker = _FakeReranker({"a_0": 1.0, "a_1": 3.0, "b_0": 2.0})
    pool, prompt = rerank_stage("q", candidates, text.__getitem__,
                                lambda d: d.rpartition("_")[0], reranker,
                                rerank_max_pairs=3, max_chunks_per_file=1, final_chunks=3)
    assert reranker.calls == [["a_0", "a_1", "b_0"]]
    assert [d for d, _, _ in pool] == ["A_1", "B_0", "A_0", "A_2", "C_0"]
    # one chunk per file, round-robin over files in pool order: A (A_1), B (B_0), C (C_0)
    assert [d for d, _, _ in prompt] == ["A_1", "B_0", "C_0"]


def test_missing_reranker_weights_raise(tmp_path):
    with pytest.raises(FileNotFoundError, match="--reranker"):
        CrossEncoderReranker(None)
    with pytest.raises(FileNotFoundError, match="not a directory"):
        CrossEncoderReranker(tmp_path / "absent")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(FileNotFoundError, match="weights not found"):
        CrossEncoderReranker(tmp_path)


def test_real_cross_encoder_matches_an_independent_forward_pass(random_cross_encoder):
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    query = "who changed the battery of the remote control"
    texts = ["the battery in the remote was replaced", "marketing wants a lower price",
             "speech features for the recognizer", "remote control buttons and rubber"]
    reranker = CrossEncoderReranker(random_cross_encoder)
    ours = reranker.score(query, texts)
    assert len(reranker.weights_sha256) == 64 and reranker.describe()["name"]

    tok = AutoTokenizer.from_pretrained(str(random_cross_encoder))
    model = BertForSequenceClassification.from_pretrained(str(random_cross_encoder)).eval()
    with torch.no_grad():
        batch = tok([query] * len(texts), texts, padding=True, truncation=True,
                    return_tensors="pt")
        expected = torch.sigmoid(model(**batch).logits[:, 0]).tolist()
    assert ours == pytest.approx(expected, abs=1e-5)

    candidates = [(f"m{i}_0", 1.0 - i / 10) for i in range(len(texts))]
    pool, _ = rerank_stage(query, candidates, lambda d: texts[int(d[1])],
                           lambda d: d.rpartition("_")[0], reranker, rerank_max_pairs=4)
    by_expected = sorted(range(len(texts)), key=lambda i: (-expected[i], i))
    assert [d for d, _, _ in pool] == [f"m{i}_0" for i in by_expected]
