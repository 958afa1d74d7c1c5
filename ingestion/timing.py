"""Synthetic timings for transcripts that carry none (QMSum).

QMSum publishes speaker turns without timestamps.  Chunking and citation work on time, so
each turn gets a duration from its word count at a fixed conversational rate of
:data:`WORDS_PER_SECOND` (2.5 words/s = 150 words per minute), turns laid end to end with no
gap or overlap.  A turn with no words still lasts one word's time, so every turn has a
positive duration and the order (start, end, index) is the file order.  Files timed this way
are flagged ``timing="synthetic"``: no timing-derived measure may be computed from them.

Arithmetic is in integer milliseconds (400 ms per word), so the timings are exact and
identical on every machine.
"""

from __future__ import annotations

WORDS_PER_SECOND = 2.5
MS_PER_WORD = 400  # 1000 / WORDS_PER_SECOND, exact


def sequential_timings(word_counts) -> list[tuple[float, float]]:
    """``(start, end)`` in seconds for consecutive turns of the given word counts."""
    out = []
    clock_ms = 0
    for words in word_counts:
        duration_ms = MS_PER_WORD * max(int(words), 1)
        out.append((clock_ms / 1000, (clock_ms + duration_ms) / 1000))
        clock_ms += duration_ms
    return out
