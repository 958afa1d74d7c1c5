"""Ingestion speed, measured side by side in one run.

- judge: chunks that record their source turns (``turn_indexes``/``turn_fractions``, what
  :func:`ingestion.chunking.chunk_corpus` writes) against the same chunks stripped to speaker
  and time window, which forces the time-overlap matching an external indexer's chunks need.
  Both must give identical qrels; the ratio is baseline time / our time.
- synth: generating the default-size demo corpus (60 meetings, written, measured and
  validated); target a few seconds.
"""

from __future__ import annotations

import dataclasses
import tempfile
import time
from pathlib import Path


def _best(fn, repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - started)
    return best, result


def run(quick: bool) -> list[dict]:
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus
    from ingestion.judgements import judge
    from ingestion.synthetic import DEFAULT_MEETINGS, generate

    meetings = 20 if quick else DEFAULT_MEETINGS
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-ingestion-") as tmp:
        gen_seconds, out = _best(lambda: generate(20260812, meetings, Path(tmp) / "synthetic"),
                                 1 if quick else 3)
        corpus = load_corpus(f"synthetic:{out}")
    chunks = chunk_corpus(corpus)
    windows = [dataclasses.replace(c, turn_indexes=(), turn_fractions=()) for c in chunks]
    repeat = 2 if quick else 5
    ours, fast = _best(lambda: judge(corpus, chunks), repeat)
    base, slow = _best(lambda: judge(corpus, windows), repeat)
    rows.append({
        "benchmark": f"judge {len(chunks)} chunks x {len(fast.qrels)} queries: turn ids vs time windows",
        "ours": ours * 1000, "baseline": base * 1000, "unit": "ms", "ratio": base / ours,
        "target": ">= 1 and identical qrels", "ok": base / ours >= 1 and fast.qrels == slow.qrels,
    })
    rows.append({
        "benchmark": f"synth {meetings} meetings (write + BM25 report + validate)",
        "ours": gen_seconds, "baseline": None, "unit": "s", "ratio": None,
        "target": "<= 5 s", "ok": gen_seconds <= 5.0,
    })
    return rows
