"""The dense leg's encoders, measured side by side in one run.

Two text sets from the QMSum validation split (a generated Zipfian corpus without it):
**full-length turns** (a seeded sample of the chunks as they are indexed, up to 200 words,
so up to 256 tokens) and **short texts** (chunks of at most 16 words).  On each set, every
variant encodes the same texts; rounds alternate the variants and the best time of each is
kept (the machine is shared, so contention only slows a variant down):

* ``raw fp32``: ``SentenceTransformer.encode`` as a user would call it (batch 32) - the
  baseline of every ratio;
* the four profiles (sentence-transformers fp32, ``minilm-onnx``, ``minilm-onnx-int8``,
  ``minilm-bf16``) through the product's encoder, **naive** (batches in the given order) and
  **length-aware** (:mod:`harness.retrieval.embeddings.batching`); the first three at batch
  32, ``minilm-bf16`` with its own batching (a token budget of 8 full-length turns, at
  most 64 texts, chosen for speed: :mod:`harness.retrieval.embeddings.bf16_encoder`).

Each label names the device and the CPU's ISA path the rates were measured on
(:mod:`harness.retrieval.embeddings.devices`; a certificate is valid for that path only).
Last, **predicted against actual**: the progress estimate
(:mod:`harness.retrieval.embeddings.progress`: warm-up, length-stratified timed sample) of
embedding a seeded sample of 3,000 chunks (the demo's size) with fp32 MiniLM, against the
time the rest of them then took (ratio actual / predicted; the range is printed with it).

ratio = variant texts/s / raw fp32 texts/s (higher is faster).  Target: the cheaper
profiles (``minilm-onnx-int8``, ``minilm-bf16``) at least 2x raw fp32 on full-length turns
(the retrieval parity half of the goal is measured by ``harness migrate``,
docs/migration.md).  The ONNX exports are built first (once per machine) and not timed.
``--quick`` shrinks the sets (ratios indicative only).
"""

from __future__ import annotations

import os
import random
import time

from benchmarks import qmsum_val, row

SEED = 20260812
BATCH = 32


def _pool() -> tuple[list[str], str]:
    """Distinct QMSum validation chunks as indexed (a generated Zipfian corpus without it)."""
    val = qmsum_val()
    if val is not None:
        from ingestion import load_corpus
        from ingestion.chunking import chunk_corpus

        return sorted({c.text for c in chunk_corpus(load_corpus(f"qmsum:{val}"))}), \
            "QMSum validation"
    rng = random.Random(SEED)
    vocab = [f"w{i}" for i in range(20_000)]
    return [" ".join(rng.choices(vocab, k=rng.randint(1, 200))) for _ in range(5000)], \
        "generated"


def _sets(pool: list[str], source: str, quick: bool) -> dict[str, list[str]]:
    rng = random.Random(SEED)
    n_long, n_short = (48, 128) if quick else (128, 256)
    short = [t for t in pool if len(t.split()) <= 16]
    return {f"full-length turns ({source})": rng.sample(pool, min(n_long, len(pool))),
            f"short texts ({source}, <= 16 words)": rng.sample(short, min(n_short, len(short)))}


def _best(variants: dict, texts: list[str], rounds: int) -> dict[str, float]:
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        for name, encode in variants.items():
            started = time.perf_counter()
            out = encode(texts)
            best[name] = min(best[name], time.perf_counter() - started)
            if len(out) != len(texts):
                raise RuntimeError(f"{name} returned {len(out)} vectors for {len(texts)} texts")
    return {name: len(texts) / seconds for name, seconds in best.items()}


def _predicted_vs_actual(enc, pool: list[str], where: str) -> dict:
    """The estimate of embedding ``pool`` (in the cache's order, longest first) against
    the time the rest of it took."""
    from harness.retrieval.embeddings.progress import job_calls, longest_first, timed_sample

    pool = sorted(pool, key=lambda t: longest_first(t, t))

    def encode_block(indices):
        enc.encode([pool[i] for i in indices])

    calls = job_calls(len(pool), enc.batch_size, 4 * enc.batch_size)
    est, ran, _, _ = timed_sample(pool, encode_block, calls, enc.token_lengths(pool),
                                  enc.batch_size, getattr(enc, "max_batch_tokens", None))
    done = {i for c in ran for i in calls[c]}
    tick = time.perf_counter()
    for c, call in enumerate(calls):
        if c not in ran:
            encode_block(call)
    actual = time.perf_counter() - tick
    predicted = est.seconds("point", done)
    return row(f"predicted vs actual embedding time, fp32 MiniLM, {len(pool) - len(done)} "
               f"chunks after a {len(done)}-text sample ({where}; range "
               f"{est.seconds('low', done):.1f}-{est.seconds('high', done):.1f} s; x "
               "predicted)", round(actual, 1), round(predicted, 1), "s",
               actual / predicted if predicted else None, None, None)


def run(quick: bool) -> list[dict]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from harness.retrieval.embeddings.models import load_encoder
    from harness.retrieval.embeddings.devices import cpu_isa_path
    from harness.retrieval.embeddings.profiles import DEFAULT_MODEL, PROFILES

    where = f"device cpu, ISA path {cpu_isa_path()}"

    encoders = {"sentence-transformers fp32": load_encoder(PROFILES[DEFAULT_MODEL], BATCH),
                "minilm-onnx": load_encoder(PROFILES["minilm-onnx"], BATCH),
                "minilm-onnx-int8": load_encoder(PROFILES["minilm-onnx-int8"], BATCH),
                "minilm-bf16": load_encoder(PROFILES["minilm-bf16"])}
    st = encoders["sentence-transformers fp32"].model
    variants = {"raw fp32": lambda texts: st.encode(texts, batch_size=BATCH,
                                                    show_progress_bar=False)}
    for name, enc in encoders.items():
        variants[f"{name} naive"] = lambda texts, enc=enc: enc.encode(texts, length_aware=False)
        variants[f"{name} length-aware"] = lambda texts, enc=enc: enc.encode(texts)
    pool, source = _pool()
    sets = _sets(pool, source, quick)
    for encode in variants.values():  # warm every session and tokenizer
        encode(next(iter(sets.values()))[:4])
    rows = []
    for set_name, texts in sets.items():
        rates = _best(variants, texts, 1 if quick else 2)
        raw = rates["raw fp32"]
        for name in encoders:
            naive, aware = rates[f"{name} naive"], rates[f"{name} length-aware"]
            rows.append(row(f"{name} naive, {set_name} ({len(texts)} texts, {where}; x raw "
                            "fp32)",
                             round(naive, 1), round(raw, 1), "texts/s", naive / raw, None, None))
            target = (2.0 if name in ("minilm-onnx-int8", "minilm-bf16")
                      and set_name.startswith("full") else None)
            rows.append(row(f"{name} length-aware, {set_name} ({len(texts)} texts, {where}; "
                            "x raw fp32)", round(aware, 1), round(raw, 1), "texts/s", aware / raw,
                             target, None if target is None else aware / raw >= target))
    # a job the size of the demo's (a seeded sample of the chunks; smaller with --quick)
    job = random.Random(SEED + 1).sample(pool, min(800 if quick else 3000, len(pool)))
    rows.append(_predicted_vs_actual(encoders["sentence-transformers fp32"], job, where))
    return rows
