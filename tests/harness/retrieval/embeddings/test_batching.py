"""Length-aware batching: batches hold texts of similar length, longest first, and the
vectors come back in the caller's order; building a model once under two processes."""

from __future__ import annotations

import multiprocessing
import time

import numpy as np
import pytest

from harness.retrieval.embeddings.batching import batches, encode_by_length, length_order
from harness.retrieval.embeddings.once import build_once


def test_the_order_is_longest_first_ties_by_position():
    assert length_order([3, 7, 3, 9, 7]).tolist() == [3, 1, 4, 0, 2]
    assert [b.tolist() for b in batches([3, 7, 3, 9, 7], 2)] == [[3, 1], [4, 0], [2]]
    with pytest.raises(ValueError, match="positive integer"):
        batches([1], 0)


def test_a_token_budget_cuts_where_texts_times_longest_would_pass_it():
    lengths = [3, 7, 3, 9, 7]                 # length order: 9 (3), 7 (1), 7 (4), 3 (0), 3 (2)
    # 9 alone (2 x 9 = 18 > 16); 7 + 7 (14), a third would be 3 x 7 = 21; 3 + 3 (6)
    assert [b.tolist() for b in batches(lengths, 5, 16)] == [[3], [1, 4], [0, 2]]
    assert [b.tolist() for b in batches(lengths, 1, 16)] == [[3], [1], [4], [0], [2]]
    assert [b.tolist() for b in batches(lengths, 5, 100)] == [[3, 1, 4, 0, 2]]
    # the given order: 3 + 7 (2 x 7 = 14), then 3 + 9 would be 18, 9 + 7 also 18
    assert [b.tolist() for b in batches(lengths, 5, 16, sort=False)] == [[0, 1], [2], [3], [4]]
    assert [b.tolist() for b in batches([40, 0, 1], 8, 16)] == [[0], [2, 1]]   # over: alone
    assert [b.tolist() for b in batches(lengths, 2, sort=False)] == [[0, 1], [2, 3], [4]]
    with pytest.raises(ValueError, match="max_tokens must be a positive integer"):
        batches([1], 2, 0)


def test_vectors_come_back_in_the_callers_order():
    texts = ["a" * n for n in (5, 1, 9, 3, 9, 2, 7)]
    seen = []

    def encode(batch):          # a vector that names its text: its length, then a marker
        seen.append([len(t) for t in batch])
        return np.array([[len(t), 1.0] for t in batch], dtype=np.float32)

    out = encode_by_length(texts, [len(t) for t in texts], 3, encode)
    assert out[:, 0].tolist() == [5, 1, 9, 3, 9, 2, 7]
    assert seen == [[9, 9, 7], [5, 3, 2], [1]]          # similar lengths share a batch
    with pytest.raises(ValueError, match="2 lengths for 7 texts"):
        encode_by_length(texts, [1, 2], 3, encode)
    with pytest.raises(ValueError, match="gave vectors of shape"):
        encode_by_length(texts, [len(t) for t in texts], 3, lambda b: np.zeros((1, 2)))


def _builder(target, log, delay):
    def complete(path):
        return (path / "model.bin").is_file()

    def build(tmp):
        with open(log, "a", encoding="utf-8") as f:
            f.write("built\n")
        time.sleep(delay)
        (tmp / "model.bin").write_bytes(b"weights")

    return build_once(target, complete, build)


def test_two_processes_build_a_model_once(tmp_path):
    target, log = tmp_path / "models" / "m-1", tmp_path / "log.txt"
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_builder, args=(target, log, 1.0)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    assert log.read_text(encoding="utf-8") == "built\n"
    assert (target / "model.bin").read_bytes() == b"weights"
    assert sorted(p.name for p in target.parent.iterdir()) == [".m-1.lock", "m-1"]  # no tmp
    assert _builder(target, log, 0.0) is False                          # a third: nothing


def test_a_failed_build_leaves_nothing(tmp_path):
    target = tmp_path / "m"

    def build(tmp):
        (tmp / "half").write_text("x")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_once(target, lambda p: (p / "model.bin").is_file(), build)
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir()] == [".m.lock"]
