"""texts/s of MiniLM on a CUDA device against CPU fp32, for ``tools/gpu-check.sh``.

The same full-length QMSum turns (a seeded sample of the validation split's chunks as
indexed) through the product's encoders: CPU fp32 (the baseline), CUDA fp32 and
``minilm-cuda-fp16``; each after a warm-up, best of two rounds, with the cosine of the
fp16 vectors to CPU fp32.  Not part of ``make bench``: it needs a GPU and says so.
"""

from __future__ import annotations

import argparse
import random
import sys
import time

SEED = 20261203


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--qmsum", required=True, help="the QMSum validation split's directory")
    p.add_argument("--texts", type=int, default=1024, help="full-length turns (default 1024)")
    p.add_argument("--cpu-texts", type=int, default=256, help="of them on the CPU (default 256)")
    args = p.parse_args(argv)

    from harness.core import settings
    from harness.retrieval.embeddings.devices import capability, cuda_devices, cpu_isa_path
    from harness.retrieval.embeddings.models import load_encoder
    from harness.retrieval.embeddings.profiles import DEFAULT_MODEL, PROFILES
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus

    settings.go_offline()
    if not cuda_devices():
        print("no CUDA device: torch sees none here; nothing measured", file=sys.stderr)
        return 2
    pool = sorted({c.text for c in chunk_corpus(load_corpus(f"qmsum:{args.qmsum}"))})
    texts = random.Random(SEED).sample(pool, min(args.texts, len(pool)))
    encoders = {"cpu fp32": (load_encoder(PROFILES[DEFAULT_MODEL], 32, device="cpu"),
                             texts[:args.cpu_texts]),
                "cuda fp32": (load_encoder(PROFILES[DEFAULT_MODEL], 128, device="cuda"), texts),
                "cuda fp16": (load_encoder(PROFILES["minilm-cuda-fp16"], device="cuda"), texts)}
    rates, vectors = {}, {}
    for name, (enc, sample) in encoders.items():
        enc.encode(sample[:16])  # warm-up
        best = float("inf")
        for _ in range(2):
            tick = time.perf_counter()
            vectors[name] = enc.encode(sample)
            best = min(best, time.perf_counter() - tick)
        rates[name] = len(sample) / best
    gpu = capability("cuda:0")["path"]
    print(f"device: {gpu}; CPU path: {cpu_isa_path()}")
    for name, rate in rates.items():
        print(f"{name}: {rate:.0f} texts/s ({rate / rates['cpu fp32']:.1f}x CPU fp32)")
    n = args.cpu_texts
    cosine = (vectors["cpu fp32"] * vectors["cuda fp16"][:n]).sum(axis=1)
    print(f"cosine fp16 (CUDA) to fp32 (CPU) on {n} turns: mean {cosine.mean():.6f}, "
          f"min {cosine.min():.6f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
