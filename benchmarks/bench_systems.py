"""A system under test over HTTP (``harness bench --backend http``), measured side by side.

The system is :mod:`benchmarks.system_server` in its own process (an asyncio server that
answers ten hits, instantly or after 20 ms).  "Ours" is the bench retrieval path: the
runner's worker pool over :class:`~harness.retrieval.backends.http.HttpBackend` (URL
template, the bounded pooled client, retry loop and request log, field map, id check, the
harness's tie order).  The baseline is the bare client: the same pooled ``httpx.Client``
sending the same URLs from the same number of threads and parsing the JSON.

Rows:

1. **Harness overhead per query** at concurrency 8 against the instant server: ms per
   query (wall time / queries) for ours and the bare client, ratio = ours / baseline; the
   target is on the difference, ours - baseline <= 1 ms (named in the row).
2. **Throughput scaling** against the 20 ms server: queries per second at concurrency 8
   over concurrency 1 through the harness; target >= 6 (8 is perfect overlap).

``--quick`` sends fewer queries (a smoke run; its figures are indicative only).
"""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager


def _row(label, ours, baseline, unit, ratio, target, ok) -> dict:
    return {"benchmark": label, "ours": ours, "baseline": baseline, "unit": unit,
            "ratio": None if ratio is None else round(ratio, 3), "target": target, "ok": ok}


@contextmanager
def _server(delay: float):
    proc = subprocess.Popen([sys.executable, "-m", "benchmarks.system_server", "--delay",
                             str(delay)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True)
    try:
        port = int(proc.stdout.readline())
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def _queries(n: int):
    from harness.retrieval.backends.base import SearchQuery

    return [SearchQuery(f"q{i:05d}", f"what did they decide about item {i}?") for i in range(n)]


def _harness(url: str, queries, concurrency: int) -> float:
    """Seconds for the bench retrieval path to send ``queries`` and read the answers."""
    from harness.retrieval.backends.base import IndexDoc
    from harness.retrieval.backends.http import HttpBackend
    from harness.pipeline.config import ArmConfig
    from harness.pipeline.runner import retrieve_queries

    backend = HttpBackend(url_template=url + "/search?q={query}&k={k}", concurrency=concurrency)
    docs = [IndexDoc(f"d{i}_0", f"d{i}", "t", "t") for i in range(10)]
    backend.index(docs, ("bm25",))
    cfg = ArmConfig(corpus_specs=("bench",), out="bench", mode="bm25", size=10,
                    workers=concurrency, progress=False)
    try:
        retrieve_queries(cfg, backend, queries[:concurrency * 4], {}, {}, None)  # warm pool
        start = time.perf_counter()
        lists, _, _ = retrieve_queries(cfg, backend, queries, {}, {}, None)
        took = time.perf_counter() - start
    finally:
        backend.close()
    assert len(lists) == len(queries) and all(len(v) == 10 for v in lists.values())
    return took


def _bare(url: str, queries, concurrency: int) -> float:
    """Seconds for bare pooled httpx to send the same requests from the same threads."""
    import urllib.parse

    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    with httpx.Client(limits=limits, timeout=10.0, trust_env=False) as client:
        def one(q):
            r = client.get(f"{url}/search?q={urllib.parse.quote(q.text, safe='')}&k=10")
            return r.json()

        with ThreadPoolExecutor(max_workers=concurrency) as pool:
            list(pool.map(one, queries[:concurrency * 4]))
            start = time.perf_counter()
            answers = list(pool.map(one, queries))
            took = time.perf_counter() - start
    assert len(answers) == len(queries)
    return took


def run(quick: bool = False) -> list[dict]:
    rows = []
    n = 400 if quick else 3000
    queries = _queries(n)
    ours_s, bare_s = [], []
    with _server(0.0) as url:
        for _ in range(3):  # interleaved, best of three each
            ours_s.append(_harness(url, queries, 8))
            bare_s.append(_bare(url, queries, 8))
    ours, bare = min(ours_s) / n * 1000.0, min(bare_s) / n * 1000.0
    overhead = ours - bare
    rows.append(_row(f"http backend: ms per query at concurrency 8, instant server ({n} q); "
                     f"overhead over bare httpx {overhead:+.3f} ms",
                     round(ours, 4), round(bare, 4), "ms/query", ours / bare,
                     "overhead <= 1 ms", overhead <= 1.0))
    n = 200 if quick else 800
    queries = _queries(n)
    with _server(0.02) as url:
        one = len(queries[:n // 4]) / _harness(url, queries[:n // 4], 1)
        eight = n / _harness(url, queries, 8)
    ratio = eight / one
    rows.append(_row(f"http backend: throughput at concurrency 8 ({n} q) over 1 "
                     f"({n // 4} q), 20 ms server", round(eight, 1), round(one, 1),
                     "queries/s", ratio, ">= 6", ratio >= 6))
    return rows
