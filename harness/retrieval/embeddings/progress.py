"""What a long embedding job tells its reader before and while it runs.

Before the first block: how many texts and tokens the model will read, and how long that
should take on this machine, timed on a short sample spread over the texts' lengths (the
sample's vectors are kept: no text is embedded twice; its first text is embedded untimed,
so loading a lazily loaded model does not enter the rate).  Tokens are whitespace words, each
text capped at the model's maximum sequence length when the profile has one (a
transformer reads no further), so the estimate is ``sample seconds / sample tokens x
tokens``.  Then a progress bar from the first block (texts, rate, time left).
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Sequence

#: texts timed before the estimate is printed (at most)
SAMPLE = 32
#: texts per timed call of the sample
SAMPLE_GROUP = 8
#: below this many texts no estimate is printed (the job is over before it would help)
ESTIMATE_FROM = 2 * SAMPLE


def tokens(text: str, cap: int | None) -> int:
    n = len(text.split())
    return min(n, cap) if cap else n


def sample_positions(n: int, k: int = SAMPLE) -> list[int]:
    """``k`` positions spread evenly over ``0..n-1`` (all of them when ``n <= k``)."""
    if n <= k:
        return list(range(n))
    return sorted({round(i * (n - 1) / (k - 1)) for i in range(k)})


def duration(seconds: float) -> str:
    """``45 s``, ``7 min 40 s``, ``1 h 12 min``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def estimate_line(role: str, model: str, n_texts: int, n_tokens: int, sample_texts: int,
                  sample_tokens: int, sample_seconds: float) -> str:
    per_token = sample_seconds / max(1, sample_tokens)
    rate = sample_texts / sample_seconds if sample_seconds > 0 else float("inf")
    return (f"embedding {n_texts:,} {role} ({n_tokens:,} tokens) with {model}: about "
            f"{duration(per_token * n_tokens)} on this machine (timed on {sample_texts} of "
            f"them: {rate:.0f} texts/s)")


def encode_with_progress(texts: Sequence[str], encode_block: Callable[[list[int]], None], *,
                         role: str, model: str, cap: int | None, block: int,
                         progress: bool) -> None:
    """Call ``encode_block(indices)`` over every index of ``texts`` in blocks of ``block``:
    with ``progress``, first a timed sample and the estimate line (when there are enough
    texts to make it useful), then a bar updated after every block."""
    order = list(range(len(texts)))
    done: set[int] = set()
    bar = None
    try:
        if progress and len(texts) >= ESTIMATE_FROM:
            sample = sample_positions(len(texts))
            encode_block(sample[:1])  # untimed: a lazily loaded model loads here
            tick = time.perf_counter()
            # in groups of neighbours in the caller's (length) order, as the blocks below
            # run: one batch padded to the sample's longest text would overstate the cost
            for start in range(1, len(sample), SAMPLE_GROUP):
                encode_block(sample[start:start + SAMPLE_GROUP])
            seconds = time.perf_counter() - tick
            done.update(sample)
            sample = sample[1:]
            print(estimate_line(role, model, len(texts), sum(tokens(t, cap) for t in texts),
                                len(sample), sum(tokens(texts[i], cap) for i in sample),
                                seconds), file=sys.stderr, flush=True)
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(texts), initial=len(done), desc=f"embedding {role} ({model})",
                       unit="text", unit_scale=True, dynamic_ncols=True, mininterval=0)
        rest = [i for i in order if i not in done]
        for start in range(0, len(rest), block):
            chunk = rest[start:start + block]
            encode_block(chunk)
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
