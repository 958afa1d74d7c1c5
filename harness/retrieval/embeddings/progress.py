"""What a long embedding job tells its reader before, while and after it runs.

Before the first block: how many texts and tokens the model will read, and how long that
should take on this machine, as a point and a range.  The estimate is timed, after a
warm-up, on a sample drawn to match the corpus's length distribution:

- the texts, in length order, are cut into :data:`STRATA` strata of equal total tokens
  (tokens are the cost's proxy, so the few long texts that hold most of the cost are
  sampled apart from the many short ones);
- from the middle of each stratum a window of neighbours (similar lengths, so little
  padding, as in the blocks that follow) is timed as two halves, each one model batch as
  the job forms it at that length (``batch`` texts, fewer under a padded-token budget), so
  per-call overhead weighs on a text as it will in the job;
- the estimate is the stratified sum ``sum_h N_h x t_h`` of each stratum's texts times its
  timed seconds per text (the stratified estimator of a total; Cochran 1977, *Sampling
  Techniques*, ch. 5), and the range is the same sum over the faster and the slower half
  of each stratum (what one more timing could have given).

Strata of equal counts and halves of at most 32 texts were tried first: the longest
quarter's middle window stood for a long tail that costs far more, and small halves paid
per-call overhead the job does not, so jobs took 0.62 to 1.27 times their estimate
(docs/migration.md).  Sampled texts are not embedded again, so a larger sample costs
only the timing's granularity.

The warm-up (:data:`WARMUP` texts of median length, untimed) takes the model's load and
the first calls' one-off costs (thread pools, kernel selection) out of the rate: a cold
sample made the demo print about 4 minutes for a job that took 30 seconds.  No sampled
text is embedded twice.

While it runs, the bar's time left is the estimate's remaining seconds scaled by the
observed / predicted ratio of the blocks done so far (so it takes over from the observed
rate after the first block, with the length order's long-first blocks accounted for).
After it: one line with the time taken next to the estimate.  Tokens are whitespace words,
each text capped at the model's maximum sequence length when the profile has one.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from harness.retrieval.embeddings.batching import length_order

#: length strata the sample is drawn from
STRATA = 4
#: texts per model batch when the caller does not say (the encoders' default)
BATCH = 64
#: texts embedded untimed before the sample (median length)
WARMUP = 8
#: below this many texts no estimate is printed (the job is over before it would help)
ESTIMATE_FROM = 128


def tokens(text: str, cap: int | None) -> int:
    n = len(text.split())
    return min(n, cap) if cap else n


def strata(lengths: Sequence[int], n_strata: int = STRATA) -> list[list[int]]:
    """The length order cut into ``n_strata`` runs of (nearly) equal tokens: a text is in
    the stratum its token midpoint falls in, so the few long texts that hold most of the
    cost get strata of their own."""
    order = length_order(lengths).tolist()  # the job's order (batching)
    sizes = [max(1, lengths[i]) for i in order]
    total = sum(sizes)
    groups: list[list[int]] = [[] for _ in range(n_strata)]
    before = 0
    for i, size in zip(order, sizes):
        groups[min(n_strata - 1, int(n_strata * (before + size / 2) / total))].append(i)
        before += size
    return [g for g in groups if g]


def batch_texts(length: int, batch: int, batch_tokens: int | None) -> int:
    """Texts in one model batch of texts ``length`` tokens long: ``batch``, or fewer where
    ``batch_tokens`` (padded tokens per batch) binds
    (:func:`harness.retrieval.embeddings.batching.batches`)."""
    if batch_tokens is None:
        return batch
    return max(1, min(batch, batch_tokens // max(1, length)))


def window(stratum: list[int], lengths: Sequence[int], skip: set[int], batch: int = BATCH,
           batch_tokens: int | None = None) -> list[int]:
    """A window of neighbours at the middle of ``stratum``: two model batches at its length
    (:func:`batch_texts`), at most a quarter of the stratum, ``skip`` (the warm-up) left
    out."""
    free = [i for i in stratum if i not in skip]
    if not free:
        return []
    middle = free[len(free) // 2]
    size = 2 * batch_texts(lengths[middle], batch, batch_tokens)
    size = max(2, min(size, len(free) // 4 or 1))
    start = max(0, min(len(free) // 2 - size // 2, len(free) - size))
    return free[start:start + size]


def duration(seconds: float) -> str:
    """``45 s``, ``7 min 40 s``, ``1 h 12 min``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


@dataclass(frozen=True)
class Estimate:
    """Seconds per text in each stratum (point, faster half, slower half), and the strata."""

    groups: tuple[tuple[int, ...], ...]
    per_text: tuple[float, ...]
    per_text_low: tuple[float, ...]
    per_text_high: tuple[float, ...]
    sample_texts: int
    sample_seconds: float

    def seconds(self, which: str = "point", skip: set[int] | frozenset = frozenset()) -> float:
        rates = {"point": self.per_text, "low": self.per_text_low,
                 "high": self.per_text_high}[which]
        return sum(rate * sum(1 for i in group if i not in skip)
                   for group, rate in zip(self.groups, rates))

    def cost(self) -> dict[int, float]:
        """Predicted seconds of each text (its stratum's per-text time)."""
        return {i: rate for group, rate in zip(self.groups, self.per_text) for i in group}


def stratified_estimate(groups: list[list[int]], halves: list[tuple[list[int], list[int]]],
                        seconds: list[tuple[float, float]]) -> Estimate:
    """The stratified estimate (module docstring) from each stratum's two timed halves."""
    point, low, high = [], [], []
    for (a, b), (sa, sb) in zip(halves, seconds):
        n = len(a) + len(b)
        rates = [s / len(h) for h, s in ((a, sa), (b, sb)) if h]
        point.append((sa + sb) / n if n else 0.0)
        low.append(min(rates) if rates else 0.0)
        high.append(max(rates) if rates else 0.0)
    return Estimate(tuple(tuple(g) for g in groups), tuple(point), tuple(low), tuple(high),
                    sum(len(a) + len(b) for a, b in halves),
                    sum(sa + sb for sa, sb in seconds))


def estimate_line(role: str, model: str, n_texts: int, n_tokens: int, est: Estimate,
                  skip: set[int]) -> str:
    rate = est.sample_texts / est.sample_seconds if est.sample_seconds > 0 else float("inf")
    return (f"embedding {n_texts:,} {role} ({n_tokens:,} tokens) with {model}: about "
            f"{duration(est.seconds('point', skip))} on this machine (range "
            f"{duration(est.seconds('low', skip))} to {duration(est.seconds('high', skip))}; "
            f"timed after a warm-up on {est.sample_texts} of them drawn from {len(est.groups)} "
            f"length strata: {rate:.0f} texts/s)")


def timed_sample(texts: Sequence[str], encode_block: Callable[[list[int]], None],
                 cap: int | None, batch: int = BATCH, batch_tokens: int | None = None,
                 ) -> tuple[Estimate, set[int], set[int], float]:
    """Warm up, time the stratified sample (halves of one model batch of ``batch`` texts,
    or fewer under ``batch_tokens``), and return the estimate, the positions already
    embedded (warm-up and sample), the warm-up's positions and when the warm-up ended."""
    lengths = [tokens(t, cap) for t in texts]
    groups = strata(lengths)
    median = groups[len(groups) // 2]
    warm = median[len(median) // 2:len(median) // 2 + WARMUP]
    encode_block(warm)  # untimed: a lazily loaded model loads here
    warmed = time.perf_counter()
    done = set(warm)
    halves, seconds = [], []
    for group in groups:
        win = window(group, lengths, done, batch, batch_tokens)
        a, b = win[:len(win) // 2], win[len(win) // 2:]
        timing = []
        for half in (a, b):
            tick = time.perf_counter()
            if half:
                encode_block(half)
            timing.append(time.perf_counter() - tick)
        halves.append((a, b))
        seconds.append((timing[0], timing[1]))
        done.update(win)
    return stratified_estimate(groups, halves, seconds), done, set(warm), warmed


class _Eta:
    """Time left: predicted remaining seconds scaled by observed / predicted so far."""

    def __init__(self, est: Estimate, done: set[int]):
        self.cost = est.cost()
        self.left = sum(c for i, c in self.cost.items() if i not in done)
        self.predicted_done = 0.0
        self.started = time.perf_counter()

    def advance(self, chunk: list[int]) -> float:
        spent = sum(self.cost.get(i, 0.0) for i in chunk)
        self.left -= spent
        self.predicted_done += spent
        observed = time.perf_counter() - self.started
        factor = observed / self.predicted_done if self.predicted_done > 0 else 1.0
        return max(0.0, self.left * factor)


def encode_with_progress(texts: Sequence[str], encode_block: Callable[[list[int]], None], *,
                         role: str, model: str, cap: int | None, block: int,
                         progress: bool, batch: int = BATCH,
                         batch_tokens: int | None = None) -> None:
    """Call ``encode_block(indices)`` over every index of ``texts`` in blocks of ``block``:
    with ``progress``, first the warm-up, the timed sample (in the encoder's model batches:
    ``batch`` texts, ``batch_tokens`` padded tokens) and the estimate line (when there are
    enough texts to make it useful), then a bar updated after every block, then the time
    taken next to the estimate."""
    done: set[int] = set()
    warm: set[int] = set()
    bar = eta = est = None
    started = 0.0
    try:
        if progress and len(texts) >= ESTIMATE_FROM:
            est, done, warm, started = timed_sample(texts, encode_block, cap, batch,
                                                    batch_tokens)
            eta = _Eta(est, done)
            print(estimate_line(role, model, len(texts), sum(tokens(t, cap) for t in texts),
                                est, done), file=sys.stderr, flush=True)
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(texts), initial=len(done), desc=f"embedding {role} ({model})",
                       unit="text", unit_scale=True, dynamic_ncols=True, mininterval=0,
                       bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, "
                                  "{rate_fmt}{postfix}]" if eta is not None else None)
        rest = [i for i in range(len(texts)) if i not in done]
        for start in range(0, len(rest), block):
            chunk = rest[start:start + block]
            encode_block(chunk)
            if bar is not None:
                if eta is not None:
                    bar.set_postfix_str(f"about {duration(eta.advance(chunk))} left",
                                        refresh=False)
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    if est is not None:
        print(f"embedded {len(texts):,} {role} in {duration(time.perf_counter() - started)} "
              f"after the warm-up (estimated {duration(est.seconds('point', warm))}, range "
              f"{duration(est.seconds('low', warm))} to {duration(est.seconds('high', warm))})",
              file=sys.stderr, flush=True)
