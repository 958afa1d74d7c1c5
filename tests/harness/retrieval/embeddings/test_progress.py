"""A long embedding job prints its estimate before the first block (texts, tokens, time
from a timed sample) and a bar from the first block; the sample is not embedded twice and
the vectors are the ones embedding everything at once gives."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
from harness.retrieval.embeddings.progress import (duration, estimate_line, sample_windows,
                                                   tokens)
from tests.harness.retrieval.stand_in_encoder import StandInEncoder


class _Profile:
    max_seq_length = 5


class _WordEncoder(StandInEncoder):
    """Vectors from the text's sha256, 64 texts a model batch, a profile capping at 5."""

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
    texts = _texts(200)
    enc = _WordEncoder()
    with EmbeddingCache(tmp_path) as cache:
        got = CachedEncoder(enc, cache, progress=True).encode_documents(texts)
    err = capsys.readouterr().err
    # 200 texts of 1..9 words, each counted at most 5 (the profile's maximum length)
    expected_tokens = sum(min(1 + i % 9, 5) for i in range(200))
    first = err.splitlines()[0]
    assert first.startswith(f"embedding 200 documents ({expected_tokens:,} tokens) with "
                            "stand-in/words: about ")
    assert "timed on 29 of them" in first
    assert re.search(r" 200(\.0)?/200 ", err)                             # the bar, after the estimate
    assert err.index("embedding 200 documents (") < err.index("/200 ")
    assert sorted(enc.encoded) == sorted(texts)          # the sample is not embedded again
    # a warm-up text, then the timed sample: three windows of 10 neighbours at 10 %, 50 %
    # and 90 % of the length order (9 words x 22, 8 x 22, ..., 1 x 23 texts): positions
    # 15..24 hold 9 and 8 words, 95..104 hold 5 words, 175..184 hold 1 and 2 words
    assert [len(c) for c in enc.calls[:4]] == [1, 9, 10, 10]
    assert [sorted({len(t.split()) for t in c}) for c in
            (enc.calls[0] + enc.calls[1], enc.calls[2], enc.calls[3])] == [[8, 9], [5], [1, 2]]
    assert np.array_equal(got, enc.vectors(texts))


def test_the_bar_moves_after_the_first_block(tmp_path, capsys):
    """Blocks of four model batches (64 texts): after the sample, the first update reads
    32 + 64 = 96 texts, long before the end."""
    CachedEncoder(_WordEncoder(), None, progress=True).encode_documents(_texts(300))
    err = capsys.readouterr().err
    assert re.search(r" 94(\.0)?/300 ", err), err


def test_a_short_job_prints_no_estimate_and_no_progress_means_silence(tmp_path, capsys):
    CachedEncoder(_WordEncoder(), None, progress=True).encode_documents(_texts(20))
    assert "about" not in capsys.readouterr().err
    CachedEncoder(_WordEncoder(), None, progress=False).encode_documents(_texts(200))
    assert capsys.readouterr().err == ""


def test_the_estimate_arithmetic():
    assert sample_windows(5) == [[0, 1, 2, 3, 4]]
    assert sample_windows(100, 6) == [[9, 10], [49, 50], [89, 90]]
    assert sample_windows(40, 30) == [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [15, 16, 17, 18, 19, 20,
                                      21, 22, 23, 24], [30, 31, 32, 33, 34, 35, 36, 37, 38, 39]]
    assert tokens("a b c d", 2) == 2 and tokens("a b c d", None) == 4
    assert duration(45) == "45 s" and duration(460) == "7 min 40 s"
    assert duration(4320) == "1 h 12 min"
    # 32 texts, 320 tokens in 2 s: 160 tokens/s; 96,000 tokens take 600 s = 10 min
    line = estimate_line("documents", "m", 14_000, 96_000, 32, 320, 2.0)
    assert line == ("embedding 14,000 documents (96,000 tokens) with m: about 10 min 0 s on "
                    "this machine (timed on 32 of them: 16 texts/s)")
