"""Predicted against actual embedding time on a synthetic corpus: fp32 MiniLM on the CPU,
no cache, the progress estimate (:mod:`harness.retrieval.embeddings.progress`) and then the
job, which ends with the time taken next to the estimate (figures: docs/migration.md).

Usage: ``python -m benchmarks.estimate_check MEETINGS [LIMIT]`` (seed 7; ``LIMIT``: a seeded
sample of that many distinct chunks).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    from harness.core import settings
    from harness.retrieval.embeddings.cache import CachedEncoder
    from harness.retrieval.embeddings.models import LazyEncoder
    from harness.retrieval.embeddings.profiles import resolve_profile
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus
    from ingestion.synthetic import generate

    settings.go_offline()
    meetings = int(argv[0])
    limit = int(argv[1]) if len(argv) > 1 else None
    with tempfile.TemporaryDirectory() as tmp:
        path = generate(7, meetings, Path(tmp) / "corpus")
        texts = sorted({c.text for c in chunk_corpus(load_corpus(f"synthetic:{path}"))})
        if limit:
            texts = random.Random(0).sample(texts, min(limit, len(texts)))
        print(f"{meetings} meetings: {len(texts)} distinct chunks", file=sys.stderr)
        enc = CachedEncoder(LazyEncoder(resolve_profile("minilm"), device="cpu"), None,
                            progress=True)
        tick = time.perf_counter()
        enc.encode_documents(texts)
        print(f"wall, model load included: {time.perf_counter() - tick:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
