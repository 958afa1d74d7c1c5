"""BM25 scores read from bm25s's score matrix equal bm25s's own, bit for bit, and a damaged
saved index is refused (the index cache then rebuilds it)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

bm25s = pytest.importorskip("bm25s")

from harness.retrieval.backends.bm25_scores import (  # noqa: E402
    DATA_FILE,
    INDICES_FILE,
    INDPTR_FILE,
    PARAMS_FILE,
    BM25Scores,
)
from harness.retrieval.backends.tokenizer import STOPWORDS_EN  # noqa: E402


def _model(seed: int, docs: int = 300, vocab: int = 40):
    rng = random.Random(seed)
    corpus = [[rng.randrange(vocab) for _ in range(rng.randrange(1, 30))] for _ in range(docs)]
    model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    model.index((corpus, {f"t{i}": i for i in range(vocab)}), show_progress=False)
    return model, rng, vocab


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_bm25s_bit_for_bit(seed):
    model, rng, vocab = _model(seed)
    ours = BM25Scores.from_model(model)
    queries = [[rng.randrange(vocab) for _ in range(rng.randrange(1, 8))] for _ in range(50)]
    queries += [[5, 5, 5], [0], list(range(vocab))]  # repeated tokens, one, every token
    for ids in queries:
        want = model.get_scores_from_ids(ids)
        got = ours.scores(ids)
        assert got.dtype == np.float32
        assert got.tobytes() == np.asarray(want, dtype=np.float32).tobytes()


def test_saved_index_reads_back_without_bm25s(tmp_path):
    model, rng, vocab = _model(7)
    model.save(str(tmp_path), show_progress=False)
    loaded = BM25Scores.load(tmp_path, vocab)
    for _ in range(20):
        ids = [rng.randrange(vocab) for _ in range(4)]
        assert loaded.scores(ids).tobytes() == model.get_scores_from_ids(ids).tobytes()


def _damage(folder, name, array):
    np.save(folder / name, array, allow_pickle=False)


@pytest.mark.parametrize("damage", [
    "indices outside", "indptr short", "data nan", "indptr falling", "params", "truncated",
    "vocabulary size",
])
def test_a_damaged_index_is_refused(tmp_path, damage):
    model, _, vocab = _model(11)
    model.save(str(tmp_path), show_progress=False)
    indices = np.load(tmp_path / INDICES_FILE)
    indptr = np.load(tmp_path / INDPTR_FILE)
    data = np.load(tmp_path / DATA_FILE)
    size = vocab
    if damage == "indices outside":
        indices[3] = 10_000
        _damage(tmp_path, INDICES_FILE, indices)
    elif damage == "indptr short":
        _damage(tmp_path, INDPTR_FILE, indptr[:-1])
    elif damage == "data nan":
        data[0] = np.nan
        _damage(tmp_path, DATA_FILE, data)
    elif damage == "indptr falling":
        indptr[2], indptr[3] = indptr[3], indptr[2]
        _damage(tmp_path, INDPTR_FILE, indptr)
    elif damage == "params":
        params = json.loads((tmp_path / PARAMS_FILE).read_text())
        params["method"] = "robertson"
        (tmp_path / PARAMS_FILE).write_text(json.dumps(params))
    elif damage == "truncated":
        raw = (tmp_path / DATA_FILE).read_bytes()
        (tmp_path / DATA_FILE).write_bytes(raw[: len(raw) // 2])
    else:
        size = vocab + 1
    with pytest.raises(ValueError):
        BM25Scores.load(tmp_path, size)


def test_stop_set_is_bm25s_english_set():
    from bm25s.stopwords import STOPWORDS_EN as theirs

    assert tuple(STOPWORDS_EN) == tuple(theirs) and len(STOPWORDS_EN) == 33
