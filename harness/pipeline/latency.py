"""Retrieval latency for runinfo.json (never for metrics.json: a duration is not
byte-identical across runs, and the claim must be).

Percentiles use linear interpolation between order statistics (numpy's default,
Hyndman & Fan 1996 definition 7).  The samples are a cost signal comparable between arms
measured under the same worker pool, not a user-facing latency, which is why the
concurrency is recorded beside them.

The BLAS library is held to one thread per worker while queries are timed
(:func:`one_blas_thread`).  Left multi-threaded, one query's dense matmul is handed to
BLAS helper threads; on a machine whose cores are busy, waking them costs a scheduler
slice, so identical runs of one arm measured p50 0.5 ms or 7.9 ms depending on whether the
helpers happened to be spinning (three back-to-back hybrid runs on the 72-query synthetic
corpus: 1.70, 1.43, 7.91 ms; with one thread: 1.10, 1.61, 1.56 ms).  The timing was of
the thread hand-off, not of retrieval.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Mapping

import numpy as np

#: BLAS threads per retrieval worker while queries are timed (recorded in the block)
BLAS_THREADS = 1


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS (OpenBLAS, MKL, BLIS) limited to :data:`BLAS_THREADS` thread(s) inside, restored
    on exit: the concurrency of an arm run is its worker pool, nothing hidden beneath it."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=BLAS_THREADS, user_api="blas"):
        yield


def latency_block(batches: Mapping[str, tuple[int, float]], concurrency: int, method: str,
                  query_batch: int = 1) -> dict:
    """``{samples, sample_unit, n, queries, concurrency, blas_threads, p50, p95, p99, max,
    mean}`` in ms (``blas_threads``: the limit :func:`one_blas_thread` held while timing).

    ``batches`` maps each batch's first query id to ``(queries in it, ms per query)``.  At
    ``query_batch`` 1 every sample is one query's latency.  Batched, the legs run jointly,
    so no single query's time exists: there is one sample per batch (its mean per query, in
    batch order), labelled as such, and its percentiles understate the per-query tail.
    """
    ids = sorted(batches)
    values = [round(float(batches[q][1]), 4) for q in ids]
    unit = "query" if query_batch == 1 else f"batch mean over up to {query_batch} queries"
    block = {"samples": values, "sample_order": "query_id", "sample_unit": unit,
             "n": len(values), "queries": sum(batches[q][0] for q in ids),
             "concurrency": concurrency, "blas_threads": BLAS_THREADS, "method": method,
             "unit": "ms"}
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
