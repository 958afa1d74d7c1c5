"""``python -m harness migrate``: should an index built with model OLD move to model NEW?

Measures adapted recall retention at T0 (held-out documents as queries) and T1 (the
corpus's real queries and judgements), the baselines, the upgrade gain, and decides:
no upgrade needed / bridge sufficient / bridge and migrate / caution / full re-index
(docs/migration.md).  Writes ``migration.json`` (the claim), ``migration.md``,
``per_query.jsonl`` and ``runinfo.json`` into ``--out`` and ingests the report into the
warehouse unless ``--no-warehouse``.

Exit codes: 0 written (whatever the decision); 2 bad input (the message names what); 4
written but not ingested (the warehouse was busy; the retry command is printed).
"""

from __future__ import annotations

from harness.core import settings
from harness.cli.ingest import add_warehouse_arguments

HELP = ("embedding-model migration: adapted recall retention (T0/T1) with intervals, "
        "baselines, upgrade gain and a decision (keep / bridge / re-index)")


def add_arguments(p) -> None:
    from harness.retrieval.embeddings.profiles import DEFAULT_MODEL, PROFILES

    names = ", ".join(["minilm", *sorted(n for n in PROFILES if n != DEFAULT_MODEL)])
    g = p.add_argument_group("models")
    for side in ("old", "new"):
        word = "the model the index was built with" if side == "old" else "the model to move to"
        g.add_argument(f"--{side}", required=True, metavar="MODEL",
                       help=f"{word.upper()[0] + word[1:]}: a profile name ({names}) "
                            "or a local model directory")
        g.add_argument(f"--{side}-dim", type=int, default=None, metavar="N",
                       help=f"--{side} without a profile: its output dimension (required)")
        g.add_argument(f"--{side}-query-prefix", default=None, metavar="TEXT",
                       help=f"--{side} without a profile: the text put before every query "
                            "(required; '' for none; never guessed)")
        g.add_argument(f"--{side}-document-prefix", default=None, metavar="TEXT",
                       help=f"--{side} without a profile: the text put before every document "
                            "(required; '' for none; never guessed)")
    g = p.add_argument_group("corpus and measurement")
    g.add_argument("--corpus", required=True, metavar="KIND:PATH",
                   help="beir:PATH | qmsum:PATH | synthetic:PATH (| trec:PATH)")
    g.add_argument("--tier", choices=("T0", "T1"), action="append", default=None,
                   help="T0 (held-out documents as queries) or T1 (real queries and "
                        "judgements); repeatable; default both")
    g.add_argument("--sample", type=int, default=5000,
                   help="distinct documents in T0's index (default 5000)")
    g.add_argument("--heldout", type=int, default=500,
                   help="held-out proxy queries at T0 (default 500)")
    g.add_argument("--seed", type=int, default=0, help="seed of every split and bootstrap (default 0)")
    g.add_argument("--resamples", type=int, default=10000, help="bootstrap resamples (default 10000)")
    g.add_argument("--confidence", type=float, default=0.95, help="interval confidence (default 0.95)")
    g.add_argument("--max-words", type=int, default=200, help="chunk size cap in words (default 200)")
    g = p.add_argument_group("output")
    g.add_argument("--out", required=True, metavar="DIR", help="report directory to write")
    g.add_argument("--cache-dir", default=None,
                   help="embedding cache and distilled models (default: $HARNESS_CACHE or ./cache)")
    from harness.retrieval.embeddings.devices import DEVICE_HELP

    g.add_argument("--device", default="auto", metavar="auto|cpu|cuda[:N]",
                   help=DEVICE_HELP + "; a CUDA-only profile (minilm-cuda-fp16) runs on CUDA "
                        "whatever this says")
    g.add_argument("--certificates", default=None, metavar="DIR",
                   help="where an equivalent_drop_in decision is kept as a certificate for "
                        "this machine's CPU path or GPU (default: certificates/ in the cache "
                        "directory)")
    add_warehouse_arguments(p)


def provenance(encoder, profile) -> dict:
    """What the report records about one model: its profile block, weights digest, label,
    where it came from (as given: a profile source or the directory named on the command
    line), and what the model stands for."""
    from pathlib import Path

    block = dict(encoder.describe())
    block["source"] = profile.source
    if profile.kind == "distilled":
        block["built_as"] = Path(encoder.path).name
    block["description"] = profile.description
    block["situation"] = profile.situation
    return block


def texts_per_second(encoder, texts) -> float:
    """``encoder``'s texts/s on ``texts`` (embedded directly, no cache), after a warm-up."""
    import time

    encoder.encode(texts[:8])  # loads a lazily loaded model
    tick = time.perf_counter()
    encoder.encode(texts)
    return round(len(texts) / max(time.perf_counter() - tick, 1e-9), 1)


def drop_in_rates(encoders, corpus_texts) -> dict:
    """Both models' texts/s here on a length-stratified sample of the corpus (the calls
    of :mod:`harness.retrieval.embeddings.progress`), for the certificate."""
    from harness.retrieval.embeddings.progress import (BATCH, job_calls, longest_first,
                                                       plan_sample, tokens)

    texts = sorted(set(corpus_texts), key=lambda t: longest_first(t, t))
    calls = job_calls(len(texts), BATCH, 4 * BATCH)
    plan = plan_sample(calls, [tokens(t, 256) for t in texts])
    sample = [texts[i] for picked in plan.picked for c in picked for i in calls[c]]
    return {side: texts_per_second(encoders[side], sample) for side in ("old", "new")}


def certify(out, new_encoder, rates: dict, store) -> None:
    """Keep a drop-in decision as a certificate for the machine NEW ran on, with both
    models' texts/s there (:mod:`harness.retrieval.embeddings.certified`; rates live in the
    certificate, never in the claim)."""
    import json

    from harness.retrieval.embeddings.certified import record
    from harness.retrieval.embeddings.devices import capability, machine_key

    claim_bytes = (out / "migration.json").read_bytes()
    machine = capability(getattr(new_encoder, "device", "cpu"))
    path = record(store, claim_bytes, json.loads(claim_bytes), machine, rates)
    print(f"certificate for {machine_key(machine)}: {path} (NEW {rates['new']:.0f} texts/s, "
          f"OLD {rates['old']:.0f} texts/s on a length-stratified sample)")


def run(args) -> int:
    import logging
    import time
    from pathlib import Path

    settings.go_offline()
    from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache, default_cache_dir
    from harness.retrieval.embeddings.certified import default_store
    from harness.retrieval.embeddings.models import open_encoders, resolve_model
    from harness.studies.embedding_migration.document import summary_lines, write_report
    from harness.studies.embedding_migration.study import StudyOptions, run_study
    from harness.cli.ingest import ingest_claim_file
    from ingestion import load_corpus
    from ingestion.chunking import chunk_corpus
    from ingestion.judgements import judge

    from harness.evaluation.results import check_out_directory

    check_out_directory(args.out)  # before any model is loaded
    from harness.retrieval.embeddings.devices import parse_device

    parse_device(args.device)
    log = logging.getLogger(__name__)
    started = time.perf_counter()
    profiles = {side: resolve_model(getattr(args, side), side,
                                    dim=getattr(args, f"{side}_dim"),
                                    query_prefix=getattr(args, f"{side}_query_prefix"),
                                    document_prefix=getattr(args, f"{side}_document_prefix"))
                for side in ("old", "new")}
    options = StudyOptions(tiers=tuple(args.tier or ("T0", "T1")), sample=args.sample,
                           heldout=args.heldout, seed=args.seed, resamples=args.resamples,
                           confidence=args.confidence).checked()
    corpus = load_corpus(args.corpus)
    chunks = chunk_corpus(corpus, max_words=args.max_words)
    judgements = judge(corpus, chunks)
    log.info("corpus %s: %d chunks, %d judged queries", corpus.name, len(chunks),
             len(judgements.qrels))
    cache_dir = Path(args.cache_dir) if args.cache_dir else default_cache_dir()
    timings: dict = {}
    with EmbeddingCache(cache_dir) as cache:
        encoders = dict(zip(("old", "new"), open_encoders(
            [profiles["old"], profiles["new"]], cache,
            device=args.device)))  # distilled: once per machine
        cached = {side: CachedEncoder(encoders[side], cache) for side in ("old", "new")}
        models = {side: provenance(encoders[side], profiles[side]) for side in ("old", "new")}
        doc, per_query = run_study(corpus, chunks, judgements, cached["old"], cached["new"],
                                   options, models=models, timings=timings)
        embedding = {side: cached[side].stats.block() for side in ("old", "new")}
        rates = None
        if doc["decision"]["decision"] == "equivalent_drop_in":  # measured while the cache is open
            rates = drop_in_rates(encoders, [c.text for c in chunks])
    runinfo = {"elapsed_seconds": round(time.perf_counter() - started, 3), "steps": timings,
               "embedding": embedding}
    out = write_report(args.out, doc, per_query, runinfo)
    for line in summary_lines(doc):
        print(line)
    print(f"wrote {out}")
    if rates is not None:
        certify(out, encoders["new"], rates, store=(
            Path(args.certificates) if args.certificates else default_store(cache_dir)))
    ingest_claim_file(out / "migration.json", args)
    return 0
