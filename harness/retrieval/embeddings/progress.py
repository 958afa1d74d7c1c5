"""What a long embedding job tells its reader before, while and after it runs.

Before the first block: how many texts and tokens the model will read and how many of them
are timed first, then how long the rest should take on this machine, as a point and a
range.  The estimate is timed, after a
warm-up, on a sample drawn to match the corpus's length distribution:

- the texts, in length order, are cut into :data:`STRATA` strata of equal total tokens
  (tokens are the cost's proxy, so the few long texts that hold most of the cost are
  sampled apart from the many short ones);
- the job is cut into calls of whole model batches (:func:`job_calls`, the same calls
  whether or not an estimate is made), and from the middle of each stratum two neighbouring
  calls are timed, one at a time, so per-call overhead weighs on a text as it will in the
  job and no model batch differs from the job's own;
- the rest of the job is then laid out as it will run (its remaining calls, each cut into
  model batches as the encoder cuts it: :mod:`~harness.retrieval.embeddings.batching`),
  and each planned batch is predicted as its padded tokens (texts x longest) times the
  seconds per padded token timed in the stratum of its longest text: the ratio estimator of
  a total with padded tokens as the auxiliary variable (Cochran 1977, *Sampling
  Techniques*, ch. 6), summed over the plan; the range is the same sum at the faster and
  the slower half's rate.

Three designs came before this one (docs/migration.md): strata of equal counts with halves
of at most 32 texts (small halves paid per-call overhead the job does not), then with halves
of one model batch (the longest quarter's middle stood for a long tail that costs far more),
then strata of equal tokens with a rate per text, which cannot see that the job's batches
over a sparse stretch of lengths are padded to their longest text (a 7-second job took 1.75
times its estimate).

The warm-up (the middle call of the median stratum, untimed) takes the model's load and
the first calls' one-off costs (thread pools, kernel selection) out of the rate: a cold
sample made the demo print about 4 minutes for a job that took 30 seconds.  No sampled
text is embedded twice.

While it runs, the bar's time left is the estimate's remaining seconds scaled by the
observed / predicted ratio of the blocks done so far (so it takes over from the observed
rate after the first block, with the length order's long-first blocks accounted for).
After it: one line with the time taken next to the estimate.  Tokens are the model's own
(its tokenizer, special tokens included, truncated at its maximum length) when the encoder
can count them, which costs about 2% of the job (0.8 s for QMSum's 14,246 chunks); else
whitespace words, each text capped at the model's maximum sequence length when the profile
has one.  Whitespace words mislead the proxy (a short text costs its special tokens too,
and a 200-word turn is cut at 256 model tokens): on QMSum the job then took 0.82 times its
estimate, against 1.02 with the model's tokens.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from harness.retrieval.embeddings.batching import batches, length_order

#: length strata the sample is drawn from
STRATA = 4
#: texts per model batch when the caller does not say (the encoders' default)
BATCH = 64
#: a job is cut into at least this many calls where whole model batches allow, so a
#: sample of calls is a small part of a small job
CALLS = 16
#: below this many texts no estimate is printed (the job is over before it would help)
ESTIMATE_FROM = 128


def longest_first(text: str, tie: str) -> tuple[int, str]:
    """The order a job's texts are embedded in (the sort key): longest first by characters,
    ties by ``tie``, so neighbouring calls hold similar lengths."""
    return -len(text), tie


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


def job_calls(n: int, batch: int, most: int) -> list[list[int]]:
    """The job's calls over positions ``0..n-1`` in order: whole model batches of ``batch``
    texts, at most ``most`` texts a call, fewer where that leaves at least :data:`CALLS`
    calls.  They are the same calls whether or not an estimate is made, and the sample
    times whole calls, so a batch the model sees, and so every vector, does not depend on
    whether progress is shown."""
    per = (max(1, min(most // batch, n // (CALLS * batch))) * batch if most >= batch
           else max(1, most))
    return [list(range(start, min(start + per, n))) for start in range(0, n, per)]


def sample_calls(calls: list[list[int]], groups: list[list[int]],
                 skip: set[int]) -> list[list[int]]:
    """For each stratum, the calls to time: two neighbours at the middle of the calls whose
    middle text is in the stratum (one where it has fewer than four), ``skip`` (the
    warm-up call) left out."""
    stratum = {i: h for h, group in enumerate(groups) for i in group}
    picked = []
    for h in range(len(groups)):
        ids = [c for c, call in enumerate(calls)
               if c not in skip and stratum.get(call[len(call) // 2]) == h]
        size = 2 if len(ids) >= 4 else min(1, len(ids))
        start = max(0, len(ids) // 2 - size // 2)
        picked.append(ids[start:start + size])
    return picked


def duration(seconds: float) -> str:
    """``45 s``, ``7 min 40 s``, ``1 h 12 min``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def model_batches(positions: Sequence[int], lengths: Sequence[int], batch: int,
                  batch_tokens: int | None) -> list[list[int]]:
    """``positions`` cut into model batches as the encoder cuts a block of them: length
    order, ``batch`` texts or ``batch_tokens`` padded tokens (:func:`batching.batches`)."""
    cut = batches([lengths[i] for i in positions], batch, batch_tokens)
    return [[positions[j] for j in idx] for idx in cut]


def padded_tokens(batch: Sequence[int], lengths: Sequence[int]) -> int:
    """What a model batch costs in the proxy: its texts x its longest text."""
    return len(batch) * max((max(1, lengths[i]) for i in batch), default=0)


@dataclass(frozen=True)
class Estimate:
    """Predicted seconds of each text (point, at the faster half's rate, at the slower
    half's rate; a sampled text's are its half's measured time), and the strata."""

    groups: tuple[tuple[int, ...], ...]
    point: tuple[float, ...]
    low: tuple[float, ...]
    high: tuple[float, ...]
    sample_texts: int
    sample_seconds: float

    def seconds(self, which: str = "point", skip: set[int] | frozenset = frozenset()) -> float:
        costs = {"point": self.point, "low": self.low, "high": self.high}[which]
        return sum(c for i, c in enumerate(costs) if i not in skip)

    def cost(self) -> dict[int, float]:
        """Predicted seconds of each text (its planned batch's share)."""
        return dict(enumerate(self.point))


def stratified_estimate(groups: list[list[int]], halves: list[tuple[list[int], list[int]]],
                        seconds: list[tuple[float, float]], lengths: Sequence[int],
                        plan: list[list[int]], batch: int = BATCH,
                        batch_tokens: int | None = None) -> Estimate:
    """The ratio estimate (module docstring): each stratum's seconds per padded token from
    its two timed halves, applied to every batch of ``plan`` by the stratum of its longest
    (first) text; a text's cost is its batch's divided among the batch's texts."""
    def padded(half: list[int]) -> int:
        return sum(padded_tokens(b, lengths) for b in model_batches(half, lengths, batch,
                                                                     batch_tokens))

    total_s = sum(sa + sb for sa, sb in seconds)
    total_p = sum(padded(a) + padded(b) for a, b in halves)
    overall = total_s / total_p if total_p else 0.0
    rates = []  # (point, low, high) seconds per padded token, per stratum
    for (a, b), (sa, sb) in zip(halves, seconds):
        per = [s / padded(h) for h, s in ((a, sa), (b, sb)) if h]
        p = padded(a) + padded(b)
        rates.append(((sa + sb) / p, min(per), max(per)) if p else (overall,) * 3)
    stratum = {i: h for h, group in enumerate(groups) for i in group}
    costs = [[0.0] * len(lengths) for _ in range(3)]
    for half, s in ((h, s) for pair, times in zip(halves, seconds)
                    for h, s in zip(pair, times) if h):
        for i in half:
            for which in costs:
                which[i] = s / len(half)
    for b in plan:
        if not b:
            continue
        size = padded_tokens(b, lengths)
        for which, rate in zip(costs, rates[stratum[b[0]]]):
            share = size * rate / len(b)
            for i in b:
                which[i] = share
    return Estimate(tuple(tuple(g) for g in groups), tuple(costs[0]), tuple(costs[1]),
                    tuple(costs[2]), sum(len(a) + len(b) for a, b in halves), total_s)


def sample_line(role: str, model: str, n_texts: int, n_tokens: int, plan: SamplePlan,
                calls: list[list[int]]) -> str:
    """What the reader sees before the warm-up: the job, and the sample about to be timed."""
    return (f"embedding {n_texts:,} {role} ({n_tokens:,} tokens) with {model}: timing "
            f"{plan.texts(calls):,} of them first, from {len(plan.groups)} length strata "
            f"after a warm-up on {len(calls[plan.warm_call]):,}, for an estimate")


def estimate_line(role: str, model: str, n_texts: int, n_tokens: int, est: Estimate,
                  skip: set[int]) -> str:
    rate = est.sample_texts / est.sample_seconds if est.sample_seconds > 0 else float("inf")
    return (f"embedding {n_texts:,} {role} ({n_tokens:,} tokens) with {model}: about "
            f"{duration(est.seconds('point', skip))} more on this machine (range "
            f"{duration(est.seconds('low', skip))} to {duration(est.seconds('high', skip))}; "
            f"timed after a warm-up on {est.sample_texts:,} of them drawn from {len(est.groups)} "
            f"length strata: {rate:.0f} texts/s)")


@dataclass(frozen=True)
class SamplePlan:
    """What the estimate runs before the job: a warm-up call (untimed, the middle call of
    the median stratum), then each stratum's calls (:func:`sample_calls`)."""

    groups: list[list[int]]
    warm_call: int
    picked: list[list[int]]

    def texts(self, calls: list[list[int]]) -> int:
        return sum(len(calls[c]) for ids in self.picked for c in ids)


def plan_sample(calls: list[list[int]], lengths: Sequence[int]) -> SamplePlan:
    """The sample of a job cut into ``calls``: its strata, warm-up call and timed calls."""
    groups = strata(lengths)
    median = len(groups) // 2
    middle = sample_calls(calls, groups[median:median + 1], set())
    warm_call = middle[0][0] if middle and middle[0] else len(calls) // 2
    return SamplePlan(groups, warm_call, sample_calls(calls, groups, {warm_call}))


def timed_sample(texts: Sequence[str], encode_block: Callable[[list[int]], None],
                 calls: list[list[int]], lengths: Sequence[int], batch: int = BATCH,
                 batch_tokens: int | None = None, plan: SamplePlan | None = None,
                 ) -> tuple[Estimate, set[int], set[int], float]:
    """Warm up (untimed), time the stratified sample of ``plan`` (whole calls of the job,
    one at a time), lay out the rest of the job (its remaining calls, each cut into batches
    of ``batch`` texts or ``batch_tokens`` padded tokens) and return the estimate, the
    calls already run (warm-up and sample), the warm-up's positions and when the warm-up
    ended."""
    plan = plan or plan_sample(calls, lengths)
    encode_block(calls[plan.warm_call])  # untimed: a lazily loaded model loads here
    warmed = time.perf_counter()
    ran = {plan.warm_call}
    halves, seconds = [], []
    for picked in plan.picked:
        pair = [calls[c] for c in picked]
        a, b = ([], pair[0]) if len(pair) == 1 else (pair + [[], []])[:2]
        timing = []
        for half in (a, b):
            tick = time.perf_counter()
            if half:
                encode_block(half)
            timing.append(time.perf_counter() - tick)
        halves.append((a, b))
        seconds.append((timing[0], timing[1]))
        ran.update(picked)
    plan_of_rest = [b for c, call in enumerate(calls) if c not in ran
                    for b in model_batches(call, lengths, batch, batch_tokens)]
    est = stratified_estimate(plan.groups, halves, seconds, lengths, plan_of_rest, batch,
                              batch_tokens)
    return est, ran, set(calls[plan.warm_call]), warmed


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
                         batch_tokens: int | None = None,
                         token_lengths: Callable[[list[str]], list[int] | None] | None = None,
                         ) -> None:
    """Call ``encode_block(indices)`` over every index of ``texts`` in blocks of ``block``:
    with ``progress``, first the warm-up, the timed sample (in the job's calls of ``block``
    texts, cut into the encoder's model batches of ``batch`` texts or ``batch_tokens``
    padded tokens) and the estimate line (when there are enough texts to make it useful),
    then a bar updated after every block, then the time taken next to the estimate.
    ``token_lengths``: the model's own tokens per text (its tokenizer, truncated), the
    estimate's cost proxy when the encoder can say them; else whitespace words capped at
    ``cap``."""
    counted = None
    if progress and len(texts) >= ESTIMATE_FROM and token_lengths is not None:
        counted = token_lengths(list(texts))
    lengths = list(counted) if counted is not None else [tokens(t, cap) for t in texts]
    calls = job_calls(len(texts), batch, block)
    ran: set[int] = set()
    warm: set[int] = set()
    bar = eta = est = None
    started = 0.0
    try:
        if progress and len(texts) >= ESTIMATE_FROM:
            plan = plan_sample(calls, lengths)
            print(sample_line(role, model, len(texts), sum(lengths), plan, calls),
                  file=sys.stderr, flush=True)
            est, ran, warm, started = timed_sample(texts, encode_block, calls, lengths, batch,
                                                   batch_tokens, plan)
            done = {i for c in ran for i in calls[c]}
            eta = _Eta(est, done)
            print(estimate_line(role, model, len(texts), sum(lengths), est, done),
                  file=sys.stderr, flush=True)
        if progress:
            from tqdm import tqdm

            bar = tqdm(total=len(texts), initial=sum(len(calls[c]) for c in ran),
                       desc=f"embedding {role} ({model})",
                       unit="text", unit_scale=True, dynamic_ncols=True, mininterval=0,
                       bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}, "
                                  "{rate_fmt}{postfix}]" if eta is not None else None)
        for c, chunk in enumerate(calls):
            if c in ran:
                continue
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
