"""Length-aware batching: sort texts by token length, encode in batches, restore order.

A transformer batch costs as much as its longest member times the batch size (every row is
padded to it), so batches of similar lengths waste little arithmetic on padding.  The order
is longest first, ties by position (a total order: the same texts always form the same
batches); vectors come back in the caller's order.  With a batch-invariant model the result
equals unsorted encoding up to float rounding of the padded positions.

A token budget (``max_tokens``) sizes each batch by its padded cost instead of a fixed
count: texts join a batch while ``texts x longest`` stays within the budget (and the count
within ``batch_size``), so a batch of short texts holds many and a batch of full-length ones
few.  Over the length order the first text of a batch is its longest, so the batches are
fixed by the lengths alone, as before.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def length_order(lengths: Sequence[int]) -> np.ndarray:
    """Positions sorted by length, longest first, ties by position."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.lexsort((np.arange(len(lengths)), -lengths))


def _positive(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


def batches(lengths: Sequence[int], batch_size: int, max_tokens: int | None = None,
            *, sort: bool = True) -> list[np.ndarray]:
    """The position arrays of each batch, in encoding order: the length order (``sort``;
    else the given order), cut every ``batch_size`` texts or, with ``max_tokens``, where the
    next text would take the padded batch (texts x longest) past the budget."""
    _positive("batch_size", batch_size)
    order = length_order(lengths) if sort else np.arange(len(lengths))
    if max_tokens is None:
        return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]
    _positive("max_tokens", max_tokens)
    out, start, longest = [], 0, 0
    for i, pos in enumerate(order):
        size = max(1, int(lengths[pos]))
        wider = max(longest, size)
        if i > start and (i - start >= batch_size or (i - start + 1) * wider > max_tokens):
            out.append(order[start:i])
            start, wider = i, size
        longest = wider
    if len(order):
        out.append(order[start:])
    return out


def encode_by_length(texts: Sequence[str], lengths: Sequence[int], batch_size: int,
                     encode_batch: Callable[[list[str]], np.ndarray],
                     max_tokens: int | None = None, *, sort: bool = True) -> np.ndarray:
    """``encode_batch`` over the batches of :func:`batches`, the rows put back in ``texts``
    order."""
    if len(lengths) != len(texts):
        raise ValueError(f"{len(lengths)} lengths for {len(texts)} texts")
    out: np.ndarray | None = None
    for idx in batches(lengths, batch_size, max_tokens, sort=sort):
        vectors = np.asarray(encode_batch([texts[i] for i in idx]), dtype=np.float32)
        if vectors.ndim != 2 or len(vectors) != len(idx):
            raise ValueError(f"a batch of {len(idx)} texts gave vectors of shape "
                             f"{vectors.shape}")
        if out is None:
            out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
        out[idx] = vectors
    if out is None:
        raise ValueError("no texts to encode")
    return out
