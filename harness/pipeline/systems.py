"""What an arm run against a system under test adds to its claim.

A live system is not reproducible the way an embedded run is, so ``--repeat N`` sends the
whole query set N times and ``system_under_test.repeat_band`` records, for every row and
measure, the lowest and highest value over the repeats, and the queries whose ranking (the
list of document ids) changed between repeats.  Reference 000: "a control with an
unmeasured reproducibility band is not a control".  The claim's rows, per-query values and
rankings are those of the first repeat.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence


def repeat_retrieval(backend, first: dict, retrieve: Callable[[], dict]) -> list[dict]:
    """``[first, lists of repeat 2, ...]``: ``retrieve()`` again for every further repeat."""
    repeats = [first]
    for r in range(1, getattr(backend, "repeat", 1)):
        backend.start_repeat(r)
        repeats.append(retrieve())
    return repeats


def repeat_band(rows_by_repeat: Sequence[Sequence[dict]], repeats: Sequence[dict]) -> dict:
    """The run-to-run band of every (corpus, class, measure) and the changed queries."""
    values: dict[tuple[str, str, str], list[float]] = {}
    for rows in rows_by_repeat:
        for row in rows:
            for measure, value in row["metrics"].items():
                values.setdefault((row["corpus"], row["query_class"], measure), []).append(value)
    band = [{"corpus": c, "query_class": q, "measure": m, "min": min(v), "max": max(v),
             "range": round(max(v) - min(v), 10)} for (c, q, m), v in sorted(values.items())]
    changed = sorted(q for q in repeats[0]
                     if any([d for d, _ in r.get(q, [])] != [d for d, _ in repeats[0][q]]
                            for r in repeats[1:]))
    return {"repeats": len(repeats), "band": band,
            "widest": max((b["range"] for b in band), default=0.0),
            "queries_changed": len(changed), "changed_query_ids": changed}


def system_claim(metrics, backend_block: dict, repeats: Sequence[dict],
                 rows_of: Callable[[dict], list]):
    """``metrics`` with ``system_under_test`` filled (and ``index.backend`` without it);
    unchanged for a backend that is not a system under test."""
    sut = backend_block.get("system_under_test")
    if sut is None:
        return metrics
    block = dict(sut)
    if len(repeats) > 1:
        block["repeat_band"] = repeat_band([metrics.rows] + [rows_of(r) for r in repeats[1:]],
                                           repeats)
    index = dict(metrics.index)
    index["backend"] = {k: v for k, v in backend_block.items() if k != "system_under_test"}
    return dataclasses.replace(metrics, index=index, system_under_test=block)
