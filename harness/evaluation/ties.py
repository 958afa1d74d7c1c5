"""Ties as the engine sees them.

``pytrec_eval_terrier`` keeps scores as C floats (IEEE single precision), so two scores that
differ as doubles can tie there (0.50000000001 and 0.5), and a double beyond the single range
is infinite (1e300 and 1e39).  A list whose scores hold no such tie may go to the engine as it
is; any other list takes rank-derived scores (:mod:`harness.evaluation.ordering`).
"""

from __future__ import annotations

import math
from array import array
from itertools import chain, islice
from operator import eq, gt, itemgetter
from typing import Sequence

_SCORE = itemgetter(1)

def as_single(values) -> list[float]:
    """``values`` as the engine keeps them: C floats (IEEE single precision, the C cast's
    round-to-nearest; a value beyond its range becomes infinite), read back as doubles.
    Rounding is monotone, so values strictly ordered as singles are so as doubles."""
    return array("f", values).tolist()


def ascending_if_untied(values, n: int, np):
    """The values (as doubles) sorted ascending when they are finite numbers, pairwise
    distinct and finite as the single-precision floats the engine keeps (so ``2**53`` and
    ``2**53 + 1``, 0.50000000001 and 0.5, or 1e300 and 1e39 count as a tie); else None,
    and the list goes to the checked path.  ``np`` is numpy (sorts long lists faster)."""
    try:
        if n < 32:
            ascending = sorted(map(float, values))
            single = as_single(ascending)
            if not all(map(math.isfinite, single)):  # (a NaN need not sort to an end)
                return None
            return None if any(map(eq, single, islice(single, 1, None))) else ascending
        ascending = np.fromiter(values, float, n)
    except (TypeError, ValueError, OverflowError):
        return None
    ascending.sort()  # NaN sorts last
    with np.errstate(over="ignore"):  # beyond single range: infinite, refused below
        single = ascending.astype(np.float32)  # monotone: still ascending
    if not (math.isfinite(single[0]) and math.isfinite(single[-1])):
        return None
    return None if (single[1:] == single[:-1]).any() else ascending


_BATCH_VALUES = 1 << 20  # values per numpy batch (8 MiB)


def _untied_floats(values: list) -> list[float] | None:
    """``values`` (exact floats) when all are finite and pairwise distinct as single-precision
    floats (:func:`as_single`); else None.  (-0.0 and 0.0 are one set member: a tie.)"""
    single = as_single(values)
    if not math.isfinite(sum(single)) or len(set(single)) != len(single):
        return None
    return values


def strictly_descending(values: list) -> bool:
    """Whether ``values`` fall strictly as single-precision floats (so no two tie in the
    engine; NaN compares false) and are finite there."""
    single = as_single(values)
    return (all(map(gt, single, islice(single, 1, None)))
            and math.isfinite(single[0]) and math.isfinite(single[-1]))


def untied_lists(lists: dict[str, dict],
                  descending: set[str] | None = None) -> dict[str, Sequence[float]]:
    """The scores of each dict whose scores hold no tie in single precision
    (:func:`ascending_if_untied`):
    in their own order for exact floats, ascending otherwise.  Exact floats (what the run
    readers return) are checked in plain Python; other values (numpy scalars, integers ...)
    as the rows of numpy arrays of one length, so numpy's per-call cost is paid per batch,
    and numpy is imported only for them.  Exact-float dicts whose scores fall strictly in
    their own order are added to ``descending``."""
    out: dict[str, Sequence[float]] = {}
    by_length: dict[int, list[str]] = {}
    for query_id, docs in lists.items():
        values = list(docs.values())
        if set(map(type, values)) == {float}:
            if strictly_descending(values):
                out[query_id] = values
                if descending is not None:
                    descending.add(query_id)
                continue
            ascending = _untied_floats(values)
            if ascending is not None:
                out[query_id] = ascending
        else:
            by_length.setdefault(len(docs), []).append(query_id)
    if not by_length:
        return out
    import numpy as np

    for n, ids in by_length.items():
        rows = max(1, _BATCH_VALUES // n)
        if n < 32 or len(ids) < 8:
            for query_id in ids:
                ascending = ascending_if_untied(lists[query_id].values(), n, np)
                if ascending is not None:
                    out[query_id] = ascending
            continue
        for start in range(0, len(ids), rows):
            batch = ids[start:start + rows]
            try:
                values = np.fromiter(chain.from_iterable(lists[q].values() for q in batch),
                                     float, n * len(batch)).reshape(len(batch), n)
            except (TypeError, ValueError, OverflowError):  # one bad list: check one by one
                for query_id in batch:
                    ascending = ascending_if_untied(lists[query_id].values(), n, np)
                    if ascending is not None:
                        out[query_id] = ascending
                continue
            values.sort(axis=1)  # NaN sorts last
            with np.errstate(over="ignore"):  # beyond single range: infinite, refused
                single = values.astype(np.float32)  # monotone: rows still ascending
            good = (np.isfinite(single[:, 0]) & np.isfinite(single[:, -1])
                    & ~(single[:, 1:] == single[:, :-1]).any(axis=1))
            for query_id, row, ok in zip(batch, values, good.tolist()):
                if ok:
                    out[query_id] = row
    return out


def has_tie(ranking: list[tuple[str, float]]) -> bool:
    """Whether two scores of a list are one single-precision float (a tie for the engine)."""
    try:
        single = as_single(map(float, map(_SCORE, ranking)))
    except (TypeError, ValueError, OverflowError):
        return False
    return len(set(single)) != len(single)
