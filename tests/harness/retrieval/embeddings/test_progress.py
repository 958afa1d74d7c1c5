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
from harness.retrieval.embeddings.progress import (_Eta, duration, estimate_line, job_calls,
                                                   padded_tokens, sample_calls, strata,
                                                   stratified_estimate, tokens)
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
    first, second = err.splitlines()[:2]
    # before the warm-up: the sample about to be timed, two calls of 16 texts a stratum
    assert first == (f"embedding 400 documents ({expected_tokens:,} tokens) with "
                     "stand-in/words: timing 128 of them first, from 4 length strata after "
                     "a warm-up on 16, for an estimate")
    assert second.startswith(f"embedding 400 documents ({expected_tokens:,} tokens) with "
                             "stand-in/words: about ")
    assert " more on this machine (range " in second
    assert "timed after a warm-up on 128 of them drawn from 4 length strata" in second
    assert re.search(r" 400(\.0)?/400 ", err)
    assert err.index("embedding 400 documents (") < err.index("/400 ")
    assert "embedded 400 documents in " in err.splitlines()[-1]
    assert sorted(enc.encoded) == sorted(texts)          # the sample is not embedded again
    # 400 texts, batches of 16, calls of 4 batches at most and at least 16 calls where whole
    # batches allow: 400 // (16 x 16) = 1 batch a call, 25 calls.  The warm-up is one call,
    # then two calls per stratum, longest stratum first (the strata are equal-token runs of
    # the capped length order), so the timed calls' lengths fall
    assert [len(call) for call in enc.calls] == [16] * 25
    lengths = [[min(len(t.split()), 5) for t in call] for call in enc.calls[1:9]]
    means = [np.mean(a + b) for a, b in zip(lengths[0::2], lengths[1::2])]
    assert means == sorted(means, reverse=True) and means[0] == 5 and means[-1] < 3
    assert np.array_equal(got, enc.vectors(texts))


class _TokenisingEncoder(_WordEncoder):
    """Says its own tokens per text: a text of w words is 12 - w tokens (the reverse of
    the word order), so the sample must follow these lengths, not the words."""

    def token_lengths(self, texts):
        return [12 - len(t.split()) for t in texts]


def test_the_models_own_token_lengths_drive_the_estimate(capsys):
    texts = _texts(400)
    enc = _TokenisingEncoder()
    CachedEncoder(enc, None, progress=True).encode_documents(texts)
    first = capsys.readouterr().err.splitlines()[0]
    expected = sum(12 - (1 + i % 9) for i in range(400))  # the model's count, uncapped
    assert first.startswith(f"embedding 400 documents ({expected:,} tokens) with ")
    # strata in the model's length order: the first timed calls hold its longest texts, which
    # are the texts of fewest words
    words = [[len(t.split()) for t in call] for call in enc.calls[1:9]]
    means = [np.mean(a + b) for a, b in zip(words[0::2], words[1::2])]
    assert means == sorted(means) and means[0] < 2 and means[-1] > 7


def test_the_model_sees_the_same_batches_with_or_without_an_estimate():
    # the sample times whole calls of the job: the same texts reach the model together
    # whether progress is shown or not, so no vector depends on it
    texts = _texts(1000)
    shown, silent = _WordEncoder(), _WordEncoder()
    CachedEncoder(shown, None, progress=True).encode_documents(texts)
    CachedEncoder(silent, None, progress=False).encode_documents(texts)
    assert len(shown.calls) > 9  # a warm-up and a sample were taken
    assert sorted(map(sorted, shown.calls)) == sorted(map(sorted, silent.calls))


def test_a_short_job_prints_no_estimate_and_no_progress_means_silence(capsys):
    CachedEncoder(_WordEncoder(), None, progress=True).encode_documents(_texts(20))
    assert "about" not in capsys.readouterr().err
    CachedEncoder(_WordEncoder(), None, progress=False).encode_documents(_texts(200))
    assert capsys.readouterr().err == ""


def test_strata_calls_and_samples_follow_the_length_order():
    lengths = [1, 9, 5, 5, 3, 7, 2, 8]
    # longest first, ties by position: 9(1) 8(7) 7(5) 5(2) 5(3) 3(4) 2(6) 1(0); 40 tokens,
    # a stratum per 10: each text where its token midpoint falls, 4 x midpoint / 40:
    # 4.5 -> 0.45, 13 -> 1.3, 20.5 -> 2.05, 26.5 -> 2.65, 31.5, 35.5, 38, 39.5 -> 3.x
    assert strata(lengths, 4) == [[1], [7], [5, 2], [3, 4, 6, 0]]
    # equal lengths: equal counts
    assert strata([3] * 8, 4) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    # calls of whole batches: at most 4 batches of 8, fewer where that leaves 16 calls
    assert [len(c) for c in job_calls(1000, 8, 32)] == [32] * 31 + [8]   # 1000 // 128 = 7 -> 4
    assert [len(c) for c in job_calls(300, 8, 32)] == [16] * 18 + [12]  # 300 // 128 = 2
    assert [len(c) for c in job_calls(100, 8, 32)] == [8] * 12 + [4]    # never under a batch
    assert job_calls(5, 8, 3) == [[0, 1, 2], [3, 4]]  # a call smaller than a batch
    # 12 calls of 2 texts over 24 texts in length order; strata of 6 calls each
    calls = job_calls(24, 2, 2)
    groups = [list(range(12)), list(range(12, 24))]
    # two neighbours at the middle of each stratum's calls: calls 0-5 -> 2, 3; 6-11 -> 8, 9
    assert sample_calls(calls, groups, set()) == [[2, 3], [8, 9]]
    # the warm-up call (3) left out: 0, 1, 2, 4, 5 -> the middle two from 5 // 2 - 1 = 1
    assert sample_calls(calls, groups, {3}) == [[1, 2], [8, 9]]
    # a stratum of fewer than four calls gets one
    assert sample_calls(calls[:3], [list(range(6))], set()) == [[1]]
    assert tokens("a b c d", 2) == 2 and tokens("a b c d", None) == 4
    assert duration(45) == "45 s" and duration(460) == "7 min 40 s"
    assert duration(4320) == "1 h 12 min"


def test_padded_tokens():
    lengths = [3, 9, 1, 7]
    assert padded_tokens([0, 2], lengths) == 2 * 3 and padded_tokens([], lengths) == 0
    assert padded_tokens([1, 3, 2], lengths) == 3 * 9


def test_the_ratio_estimate_arithmetic():
    groups = [[0, 1, 2, 3], [4, 5, 6, 7, 8, 9]]
    lengths = [10, 10, 10, 10, 2, 2, 2, 2, 2, 2]
    halves = [([0], [1]), ([4, 5], [6, 7])]
    seconds = [(2.0, 4.0), (1.0, 3.0)]
    # padded tokens of the halves: 1 x 10, 1 x 10, 2 x 2, 2 x 2.  Seconds per padded token:
    # stratum 1 (2 + 4) / 20 = 0.3, halves 0.2 and 0.4; stratum 2 (1 + 3) / 8 = 0.5, halves
    # 0.25 and 0.75.  The sample itself costs what it took: 2 + 4 + 1 + 3 = 10 s.
    # Batches of 64: the rest (2, 3, 8, 9) is one batch led by a 10-token text, padded to
    # 4 x 10 = 40 tokens at stratum 1's rate: 12 s (low 8, high 16)
    wide = stratified_estimate(groups, halves, seconds, lengths, [[2, 3, 8, 9]], batch=64)
    assert wide.seconds("point") == 10.0 + 12.0
    assert wide.seconds("low") == 10.0 + 8.0 and wide.seconds("high") == 10.0 + 16.0
    assert wide.seconds("point", {0, 1, 4, 5, 6, 7}) == 12.0
    assert wide.cost()[8] == 3.0  # a 2-token text padded to 10 pays its share of 40
    # Batches of 2: [2, 3] padded 20 x 0.3 = 6 s and [8, 9] padded 4 x 0.5 = 2 s: the same
    # texts cost 8 s, not 12, when no short text is padded to a long one
    narrow = stratified_estimate(groups, halves, seconds, lengths, [[2, 3], [8, 9]], batch=2)
    assert narrow.seconds("point", {0, 1, 4, 5, 6, 7}) == 8.0
    assert wide.sample_texts == 6 and wide.sample_seconds == 10.0
    line = estimate_line("documents", "m", 10, 50, wide, set())
    assert line == ("embedding 10 documents (50 tokens) with m: about 22 s more on this machine "
                    "(range 18 s to 26 s; timed after a warm-up on 6 of them drawn from 2 "
                    "length strata: 1 texts/s)")


def test_an_untimed_stratum_takes_the_overall_rate():
    # strata 1 and 2 timed at 4 / 8 = 0.5 and 4 / 4 = 1.0 s per padded token; stratum 3
    # not timed (its texts were all in the warm-up): its batch takes the rate over every
    # timed half, 8 / 12, so [4, 5] (2 x 1 padded tokens) is predicted 2 x 8 / 12 s
    est = stratified_estimate([[0, 1], [2, 3], [4, 5]], [([0], [1]), ([2], [3]), ([], [])],
                              [(2.0, 2.0), (1.0, 3.0), (0.0, 0.0)], [4, 4, 2, 2, 1, 1],
                              [[4, 5]], batch=2)
    for which in ("point", "low", "high"):
        assert abs(est.seconds(which, {0, 1, 2, 3}) - 2 * 8 / 12) < 1e-12


def test_the_time_left_takes_over_from_the_observed_rate(monkeypatch):
    groups = [[0, 1], [2, 3]]
    est = stratified_estimate(groups, [([], [0]), ([], [2])], [(0.0, 4.0), (0.0, 1.0)],
                              [1, 1, 1, 1], [[1], [3]], batch=1)
    clock = iter([100.0, 104.0 + 4.0])  # started at 100; after text 1, 8 s have passed
    monkeypatch.setattr(progress.time, "perf_counter", lambda: next(clock))
    eta = _Eta(est, {0, 2})
    # predicted: text 1 takes 4 s, text 3 takes 1 s; text 1 took 8 s (twice the
    # prediction), so text 3 is expected to take 2 s
    assert eta.advance([1]) == 2.0
