"""A long embedding job prints its estimate before the first block (texts, tokens, a point
and a range, timed after a warm-up on a length-stratified sample), a bar whose time left
follows the observed rate, and the time taken next to the estimate; the sample is not
embedded twice and the vectors are the ones embedding everything at once gives."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from harness.retrieval.embeddings import progress
from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
from harness.retrieval.embeddings.progress import (WARMUP, _Eta, batch_texts, duration,
                                                   estimate_line, strata, stratified_estimate,
                                                   tokens, window)
from tests.harness.retrieval.stand_in_encoder import StandInEncoder


class _Profile:
    max_seq_length = 5


class _WordEncoder(StandInEncoder):
    """Vectors from the text's sha256, 16 texts a model batch, a profile capping at 5."""

    batch_size = 16
    profile = _Profile()

    def __init__(self):
        super().__init__("stand-in/words", "", "", 4)
        self.calls: list[list[str]] = []

    def encode(self, texts):
        self.calls.append(list(texts))
        return super().encode(texts)

    def vectors(self, texts):
        return np.stack([np.frombuffer(hashlib.sha256(t.encode()).digest()[:4], dtype=np.uint8)
                         .astype(np.float32) for t in texts])


def _texts(n):
    return [" ".join(f"w{i:03d}" for _ in range(1 + i % 9)) for i in range(n)]  # same-width words


def test_the_estimate_comes_first_and_every_text_is_embedded_once(tmp_path, capsys):
    texts = _texts(400)
    enc = _WordEncoder()
    with EmbeddingCache(tmp_path) as cache:
        got = CachedEncoder(enc, cache, progress=True).encode_documents(texts)
    err = capsys.readouterr().err
    # 400 texts of 1..9 words, each counted at most 5 (the profile's maximum length)
    expected_tokens = sum(min(1 + i % 9, 5) for i in range(400))
    first = err.splitlines()[0]
    assert first.startswith(f"embedding 400 documents ({expected_tokens:,} tokens) with "
                            "stand-in/words: about ")
    assert "(range " in first and "drawn from 4 length strata" in first
    assert re.search(r" 400(\.0)?/400 ", err)
    assert err.index("embedding 400 documents (") < err.index("/400 ")
    assert "embedded 400 documents in " in err.splitlines()[-1]
    assert sorted(enc.encoded) == sorted(texts)          # the sample is not embedded again
    # the warm-up, then two halves of a window per stratum, longest stratum first: the
    # strata are quarters of the (capped) length order, so the windows' lengths fall
    lengths = [[min(len(t.split()), 5) for t in call] for call in enc.calls[:9]]
    assert len(enc.calls[0]) == WARMUP
    means = [np.mean(a + b) for a, b in zip(lengths[1::2], lengths[2::2])]
    assert means == sorted(means, reverse=True) and means[0] == 5 and means[-1] < 3
    assert np.array_equal(got, enc.vectors(texts))


def test_a_short_job_prints_no_estimate_and_no_progress_means_silence(capsys):
    CachedEncoder(_WordEncoder(), None, progress=True).encode_documents(_texts(20))
    assert "about" not in capsys.readouterr().err
    CachedEncoder(_WordEncoder(), None, progress=False).encode_documents(_texts(200))
    assert capsys.readouterr().err == ""


def test_strata_and_windows_follow_the_length_order():
    lengths = [1, 9, 5, 5, 3, 7, 2, 8]
    # longest first, ties by position: 9(1) 8(7) 7(5) 5(2) 5(3) 3(4) 2(6) 1(0); 40 tokens,
    # a stratum per 10: each text where its token midpoint falls, 4 x midpoint / 40:
    # 4.5 -> 0.45, 13 -> 1.3, 20.5 -> 2.05, 26.5 -> 2.65, 31.5, 35.5, 38, 39.5 -> 3.x
    assert strata(lengths, 4) == [[1], [7], [5, 2], [3, 4, 6, 0]]
    # equal lengths: equal counts
    assert strata([3] * 8, 4) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    group, wide = list(range(40)), list(range(80))
    # two model batches of 8 = 16 texts (under a quarter of 80), centred: from 40 - 8 = 32
    assert window(wide, [100] * 80, set(), batch=8) == list(range(32, 48))
    # two default batches (128 texts), capped at a quarter of the stratum (10)
    assert window(group, [100] * 40, set()) == list(range(15, 25))
    # 20 free texts (20..39): a quarter is 5, centred: from 20 // 2 - 5 // 2 = 8th free one
    assert window(group, [100] * 40, set(range(20)), batch=8) == [28, 29, 30, 31, 32]
    # a padded-token budget binds: 300 tokens / 100 a text = 3 a batch, two batches = 6,
    # centred: from 40 - 3 = 37
    assert batch_texts(100, 8, 300) == 3 and batch_texts(100, 8, None) == 8
    assert batch_texts(1000, 8, 300) == 1  # never fewer than one text
    assert window(wide, [100] * 80, set(), batch=8, batch_tokens=300) == list(range(37, 43))
    assert tokens("a b c d", 2) == 2 and tokens("a b c d", None) == 4
    assert duration(45) == "45 s" and duration(460) == "7 min 40 s"
    assert duration(4320) == "1 h 12 min"


def test_the_stratified_estimate_arithmetic():
    groups = [[0, 1, 2, 3], [4, 5, 6, 7, 8, 9]]
    halves = [([0], [1]), ([4, 5], [6, 7])]
    seconds = [(2.0, 4.0), (1.0, 3.0)]
    est = stratified_estimate(groups, halves, seconds)
    # stratum 1: (2 + 4) / 2 = 3 s a text, halves 2 and 4; stratum 2: 4 / 4 = 1 s, halves
    # 0.5 and 1.5.  Point: 4 x 3 + 6 x 1 = 18; low 4 x 2 + 6 x 0.5 = 11; high 4 x 4 + 6 x 1.5 = 25
    assert est.seconds("point") == 18.0
    assert est.seconds("low") == 11.0 and est.seconds("high") == 25.0
    # with the 6 sampled texts done: 2 x 3 + 2 x 1 = 8 s left
    assert est.seconds("point", {0, 1, 4, 5, 6, 7}) == 8.0
    assert est.sample_texts == 6 and est.sample_seconds == 10.0
    line = estimate_line("documents", "m", 10, 50, est, set())
    assert line == ("embedding 10 documents (50 tokens) with m: about 18 s on this machine "
                    "(range 11 s to 25 s; timed after a warm-up on 6 of them drawn from 2 "
                    "length strata: 1 texts/s)")


def test_the_time_left_takes_over_from_the_observed_rate(monkeypatch):
    groups = [[0, 1], [2, 3]]
    est = stratified_estimate(groups, [([], [0]), ([], [2])], [(0.0, 4.0), (0.0, 1.0)])
    clock = iter([100.0, 104.0 + 4.0])  # started at 100; after text 1, 8 s have passed
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    eta = _Eta(est, {0, 2})
    # predicted: text 1 takes 4 s, text 3 takes 1 s; text 1 took 8 s (twice the
    # prediction), so text 3 is expected to take 2 s
    assert eta.advance([1]) == 2.0
