"""Length-aware batching: sort texts by token length, encode in batches, restore order.

A transformer batch costs as much as its longest member times the batch size (every row is
padded to it), so batches of similar lengths waste little arithmetic on padding.  The order
is longest first, ties by position (a total order: the same texts always form the same
batches); vectors come back in the caller's order.  With a batch-invariant model the result
equals unsorted encoding up to float rounding of the padded positions.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np


def length_order(lengths: Sequence[int]) -> np.ndarray:
    """Positions sorted by length, longest first, ties by position."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return np.lexsort((np.arange(len(lengths)), -lengths))


def batches(lengths: Sequence[int], batch_size: int) -> list[np.ndarray]:
    """The position arrays of each batch, in encoding order."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    order = length_order(lengths)
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def encode_by_length(texts: Sequence[str], lengths: Sequence[int], batch_size: int,
                     encode_batch: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """``encode_batch`` over length-sorted batches, the rows put back in ``texts`` order."""
    if len(lengths) != len(texts):
        raise ValueError(f"{len(lengths)} lengths for {len(texts)} texts")
    out: np.ndarray | None = None
    for idx in batches(lengths, batch_size):
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
