"""What a long embedding job tells its reader before and while it runs.

Before the first block: how many texts and tokens the model will read, and how long that
should take on this machine, timed on a short sample of long, median and short texts
(:func:`sample_windows`).  The sample's vectors are kept (no text is embedded twice), and
its first text is embedded untimed, so loading a lazily loaded model does not enter the
rate.  Tokens are whitespace words, each text capped at the model's maximum sequence
length when the profile has one (a transformer reads no further), so the estimate is
``sample seconds / sample tokens x tokens``: an order of magnitude (on a loaded two-core
machine it was within a factor of about 3 either way), which the progress bar that follows
from the first block (texts, rate, time left) refines.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Sequence

#: texts timed before the estimate is printed (at most)
SAMPLE = 32
#: below this many texts no estimate is printed (the job is over before it would help)
ESTIMATE_FROM = 2 * SAMPLE


def tokens(text: str, cap: int | None) -> int:
    n = len(text.split())
    return min(n, cap) if cap else n


def sample_windows(n: int, k: int = SAMPLE) -> list[list[int]]:
    """Three windows of neighbouring positions (about ``k`` in all) at 10 %, 50 % and 90 % of
    ``0..n-1`` (one window of all of them when ``n <= k``).  The caller's texts are in length
    order, so each window is a batch of similar lengths (little padding, as in the blocks
    after it), and the three together sample long, median and short texts."""
    if n <= k:
        return [list(range(n))]
    size = k // 3
    out = []
    for share in (0.1, 0.5, 0.9):
        start = min(max(0, round(share * n) - size // 2), n - size)
        out.append(list(range(start, start + size)))
    return out


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
            windows = sample_windows(len(texts))
            encode_block(windows[0][:1])  # untimed: a lazily loaded model loads here
            timed = [windows[0][1:], *windows[1:]]
            tick = time.perf_counter()
            for window in timed:
                encode_block(window)
            seconds = time.perf_counter() - tick
            sample = [i for window in timed for i in window]
            done.update(windows[0][:1], sample)
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
