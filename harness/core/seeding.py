"""Random streams derived from one recorded seed.

Every random quantity the statistics produce comes from ``numpy.random.default_rng`` fed a
:class:`numpy.random.SeedSequence` built from the user's seed and a label naming what the
stream is for (``bootstrap|qmsum|lookup``).  A row's stream therefore depends only on the
seed and the row's own key: adding a row, an arm or a measure never changes another row's
numbers, and the seed written into a claim file is enough to reproduce it.
"""

from __future__ import annotations

import hashlib

import numpy as np

#: how a stream is derived, written into every document that used one
STREAM_RULE = ("numpy default_rng(SeedSequence([seed, *sha256('|'.join(labels)) as four "
               "32-bit words]))")


def check_seed(seed: object) -> int:
    """A seed must be a non-negative integer (it is written into claim files)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return int(seed)


def derive_rng(seed: int, *labels: str) -> np.random.Generator:
    """The generator for the stream named ``labels`` under ``seed`` (see :data:`STREAM_RULE`)."""
    seed = check_seed(seed)
    digest = hashlib.sha256("|".join(str(label) for label in labels).encode("utf-8")).digest()
    words = [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]
    return np.random.default_rng(np.random.SeedSequence([seed, *words]))
