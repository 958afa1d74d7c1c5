"""A BM25 index entry changed in a way every structural check passes is still a damaged
entry: its files are checked against the sha256 its writer recorded, so it is a miss, is
rebuilt, runinfo.json says why, and the claim files are those of an uncached run.

The two edits the structure cannot see: the score array shuffled (same length, dtype and
values, so finite and in range) and two ids of the vocabulary swapped (still numbered
0 .. n-1).  Before the check, either one moved nDCG@10 with exit 0.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ..tiny import write_qmsum
from .helpers import claims, outcomes, run_one_arm, runinfo


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.delenv("HARNESS_PREPARED_CACHE", raising=False)
    root = write_qmsum(tmp_path / "corpora" / "qmsum")
    return f"qmsum:{root}"


def _shuffle_scores(entry):
    path = entry / "data.csc.index.npy"
    data = np.load(path)
    assert len(set(data.tolist())) > 1  # a shuffle that changes something
    shuffled = data[np.random.default_rng(0).permutation(len(data))]
    assert not np.array_equal(shuffled, data)
    np.save(path, shuffled)


def _swap_vocabulary(entry):
    path = entry / "vocab.json"
    vocab = json.loads(path.read_text(encoding="utf-8"))
    first, second = sorted(vocab)[:2]
    vocab[first], vocab[second] = vocab[second], vocab[first]
    path.write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")


def _extra_file(entry):
    (entry / "notes.txt").write_text("added later\n", encoding="utf-8")


@pytest.mark.parametrize("damage", [_shuffle_scores, _swap_vocabulary, _extra_file])
def test_an_entry_that_passes_every_structural_check_is_still_rebuilt(damage, corpus, tmp_path):
    cache = tmp_path / "cache"
    run_one_arm(corpus, tmp_path / "uncached", cache, prepared_cache=False)
    run_one_arm(corpus, tmp_path / "first", cache)
    (entry,) = [p for p in (cache / "prepared" / "bm25").iterdir()
                if p.is_dir() and not p.name.startswith(".")]
    damage(entry)
    run_one_arm(corpus, tmp_path / "second", cache)
    assert outcomes(tmp_path / "second") == ("hit", "hit", "miss")
    reason = runinfo(tmp_path / "second")["prepared_cache"]["bm25_index"]["discarded"]
    assert "do not match their recorded sha256" in reason
    assert claims(tmp_path / "second") == claims(tmp_path / "uncached")
    run_one_arm(corpus, tmp_path / "third", cache)  # the rebuilt entry is whole again
    assert outcomes(tmp_path / "third") == ("hit", "hit", "hit")
    assert "discarded" not in runinfo(tmp_path / "third")["prepared_cache"]["bm25_index"]
    assert claims(tmp_path / "third") == claims(tmp_path / "uncached")
