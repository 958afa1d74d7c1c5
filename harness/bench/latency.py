"""Per-query retrieval latency for runinfo.json (never for metrics.json: a duration is not
byte-identical across runs, and the claim must be).

Percentiles use linear interpolation between order statistics (numpy's default,
Hyndman & Fan 1996 definition 7).  The samples are a cost signal comparable between arms
measured under the same worker pool, not a user-facing latency, which is why the
concurrency is recorded beside them.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np


def latency_block(samples_ms: Mapping[str, float], concurrency: int, method: str) -> dict:
    """``{samples (in query-id order), concurrency, p50, p95, p99, max, mean}`` in ms."""
    ids = sorted(samples_ms)
    values = [round(float(samples_ms[q]), 4) for q in ids]
    block = {"samples": values, "sample_order": "query_id", "n": len(values),
             "concurrency": concurrency, "method": method, "unit": "ms"}
    if values:
        arr = np.asarray(values, dtype=float)
        block.update({
            "p50": float(np.percentile(arr, 50)),
            "p95": float(np.percentile(arr, 95)),
            "p99": float(np.percentile(arr, 99)),
            "max": float(arr.max()),
            "mean": float(arr.mean()),
        })
    else:
        block.update({"p50": None, "p95": None, "p99": None, "max": None, "mean": None})
    return block
