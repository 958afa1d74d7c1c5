"""One arm run: load -> index -> retrieve (legs, fusion, rerank) -> score -> results dir.

All corpora of a run share one index, so every row, per-query value and calibration
record of the run carries the most restrictive tier of the indexed corpora (``index.tier``,
with ``index.corpora``): a tier-B corpus beside a tier-A one changes the tier-A numbers.

The claim (metrics.json, metrics.md, per_query.jsonl, rankings.jsonl, qrels.jsonl,
calibration.jsonl)
is deterministic: queries are cut into fixed batches in query-id order whatever the
number of workers, every list is in a total order, and nothing timed enters it.  Timing,
cache counts and the worker count go to runinfo.json.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping, Sequence

from harness.certificates.data import CALIBRATION_JSONL, calibration_row, calibration_text
from harness.pipeline.config import HEADER_TEMPLATE, ArmConfig
from harness.pipeline.latency import latency_block, one_blas_thread
from harness.pipeline.levels import (
    FILE_MEASURES,
    FILE_PREFIX,
    file_level_result,
    first_occurrence,
    merge_file_measures,
)
from harness.retrieval.prepared.prepare import (
    PreparedCorpus,
    check_disjoint,
    index_docs,
    search_queries,
)
from harness.pipeline.systems import repeat_retrieval, system_claim
from harness.retrieval.prepared.prepared_cache import attach_index_cache, prepare_run
from harness.retrieval.embeddings.provenance import certify_mixed, index_block, refuse_mixed
from harness.retrieval.fusion import fuse
from harness.core.measures import reported, resolve
from harness.core.tiers import most_restrictive_tier
from harness.evaluation.rows import QueryMeta, build_rows, metrics_table, per_query_rows, ranking_rows
from harness.claims.metrics import QRELS, QUERIES, MetricsClaim
from harness.evaluation.results import load_metrics, write_results
from harness.core.markdown import md_escape
from harness.evaluation.scored_run import qrels_text, queries_text
from harness.evaluation.engine import metric_engine_block
from harness.evaluation.scoring import score

log = logging.getLogger(__name__)

LATENCY_METHOD = (
    "wall time of one query (or, with --query-batch N > 1, of one batch divided evenly over "
    "its queries) through every leg, fusion and (rerank stage) the cross-encoder and "
    "diversity sampling; query embedding is done once for all queries before timing and is "
    "excluded"
)


@dataclass(frozen=True)
class ArmOutcome:
    out: Path
    metrics: dict
    runinfo: dict


class _LockedReranker:
    """Serialises cross-encoder calls (a tokenizer is not safe across threads)."""

    def __init__(self, reranker):
        self._reranker = reranker
        self._lock = threading.Lock()

    def score(self, query, texts):
        with self._lock:
            return self._reranker.score(query, texts)


def relevance_policy(cfg: ArmConfig):
    from ingestion.judgements import RelevancePolicy

    return RelevancePolicy(relevance_high=cfg.relevance_high, relevance_low=cfg.relevance_low,
                           binary=cfg.binary)


def _policy_block(cfg: ArmConfig, policy) -> dict:
    if cfg.granularity == "file":
        return {"graded_from": "gold files", "granularity": "file", "gain": "linear",
                "binary": True, "relevance": "1 for every file holding gold, else unjudged",
                "relevance_high": None, "relevance_low": None}
    block = dict(policy.block())
    block.setdefault("granularity", "chunk")
    return block


def load_corpora(cfg: ArmConfig) -> list:
    from ingestion import load_corpus

    return [load_corpus(spec) for spec in cfg.corpus_specs]


def build_encoder(cfg: ArmConfig):
    """The cached encoder of the arm's dense leg (None without one); with ``cfg.vectors``
    it pulls what the team store holds before embedding anything."""
    if not cfg.uses_dense:
        return None
    from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
    from harness.retrieval.embeddings.models import LazyEncoder, load_encoder
    from harness.retrieval.embeddings.profiles import DERIVED_KINDS, resolve_profile

    profile = resolve_profile(cfg.model, dim=cfg.dim, query_prefix=cfg.query_prefix,
                              document_prefix=cfg.document_prefix)
    # a model with weights is loaded on the first text the cache lacks (none: no load)
    certificate = None
    if cfg.precision == "certified":
        from harness.retrieval.embeddings.certified import choose

        certificate = choose(cfg.certificate_dir, profile.model_id, cfg.device)
        profile = resolve_profile(certificate.new)
    else:
        from harness.retrieval.embeddings.certified import note_offer

        note = note_offer(cfg.certificate_dir, profile.model_id, cfg.device)
        if note:
            print(note, file=sys.stderr, flush=True)
    model = (LazyEncoder(profile, device=cfg.device) if profile.kind not in DERIVED_KINDS
             else load_encoder(profile, device=cfg.device))
    if certificate is not None:
        model.certificate = certificate.claim_block()
    encoder = CachedEncoder(model, EmbeddingCache(cfg.resolved_cache_dir),
                            progress=cfg.progress)
    if cfg.vectors:
        from harness.core.store import open_store
        from harness.retrieval.embeddings.shared import SharedVectors

        encoder.shared = SharedVectors(open_store(cfg.vectors))
        encoder.stats.shared = encoder.shared.block()  # recorded even when nothing is asked
    return encoder


def build_backend(cfg: ArmConfig):
    """The configured backend with its encoder (when a dense leg is needed)."""
    from harness.retrieval.backends import backend_class

    encoder = build_encoder(cfg)
    cls = backend_class(cfg.backend)
    return cls(k1=cfg.k1, b=cfg.b, encoder=encoder, progress=cfg.progress,
               **dict(cfg.backend_options)), encoder


class DocFiles(dict):
    """Document id -> file id; an id the corpus does not hold (a system under test returned
    it) is a file of its own, so it takes a rank and is never relevant."""

    def __missing__(self, doc_id):
        return f"unknown:{doc_id}"


class DocTexts(Mapping):
    """Document id -> text, made into a dict the first time a text is asked for (only a
    rerank stage reads texts)."""

    def __init__(self, doc_ids: Sequence[str], texts: Sequence[str]):
        self._columns: tuple | None = (doc_ids, texts)
        self._texts: dict[str, str] = {}

    def _made(self) -> dict[str, str]:
        if self._columns is not None:
            self._texts = dict(zip(*self._columns))
            self._columns = None
        return self._texts

    def __getitem__(self, doc_id: str) -> str:
        return self._made()[doc_id]

    def __iter__(self):
        return iter(self._made())

    def __len__(self) -> int:
        return len(self._made())


@dataclass
class OpenIndex:
    """Everything a run needs once the corpora are loaded, judged and indexed."""

    prepared: list
    backend: object
    encoder: object
    provenance: dict
    doc_file: dict
    doc_text: Mapping
    queries: list
    reranker: object
    policy: object
    #: hits and misses of the prepared-corpus and index caches (runinfo.json)
    cache: dict
    #: what every arm over this index derives alike (the judgements, qrels.jsonl), made once
    memo: dict = field(default_factory=dict)


@contextmanager
def open_index(cfg: ArmConfig, corpora: Sequence | None, phases: dict):
    """Load, judge and index the corpora, embed the queries; close the backend on exit.

    Raises :class:`harness.retrieval.embeddings.MixedEmbeddingSpace` when the index holds vectors
    from two named models.
    """
    reranker = None
    if cfg.stage == "rerank":
        from harness.retrieval.rerank import CrossEncoderReranker

        reranker = CrossEncoderReranker(cfg.reranker)  # raises when the weights are absent

    tick = time.perf_counter()
    policy = relevance_policy(cfg)
    prepared, cache = prepare_run(cfg, corpora, policy)  # loads only what the cache lacks
    check_disjoint(prepared)
    phases["load_seconds"] = time.perf_counter() - tick

    tick = time.perf_counter()
    backend, encoder = build_backend(cfg)
    attach_index_cache(backend, cfg, cache)
    try:
        docs = index_docs(prepared, cfg.embed_header)
        backend.index(docs, cfg.legs)
        survey = backend.embedding_survey()
        provenance = index_block(survey.counts, survey.dimension,
                                 encoder.label if encoder is not None else None)
        if provenance["embedding_verdict"] == "mixed":
            from harness.retrieval.embeddings.certified import equivalent_pairs

            provenance = certify_mixed(provenance, equivalent_pairs(cfg.certificate_dir))
        refuse_mixed(provenance)
        phases["index_seconds"] = time.perf_counter() - tick

        queries = search_queries(prepared, cfg.scope == "gold-files")
        tick = time.perf_counter()
        backend.prepare_queries(queries)
        phases["query_embedding_seconds"] = time.perf_counter() - tick
        yield OpenIndex(prepared, backend, encoder, provenance,
                        DocFiles(zip(docs.doc_id, docs.file_id)), DocTexts(docs.doc_id, docs.text),
                        queries, None if reranker is None else _LockedReranker(reranker), policy,
                        cache)
    finally:
        backend.close()
        if encoder is not None and encoder.cache is not None:
            encoder.cache.close()


def run_arm(cfg: ArmConfig, corpora: Sequence | None = None) -> ArmOutcome:
    """Run one arm and write its results directory (module docstring).

    Raises :class:`harness.retrieval.embeddings.MixedEmbeddingSpace` before writing anything when
    the index holds vectors from two named models.
    """
    started = time.perf_counter()
    phases: dict[str, float] = {}
    with open_index(cfg, corpora, phases) as ix:
        return measure_arm(cfg, ix, phases, started)


def measure_arm(cfg: ArmConfig, ix: OpenIndex, phases: dict, started: float, *,
                latency_method: str = LATENCY_METHOD,
                runinfo_extra: dict | None = None) -> ArmOutcome:
    """Retrieve, score and write one arm over an open index (``harness sweep`` runs several
    arms over one); ``runinfo_extra`` adds to runinfo.json, never to the claim."""
    measures = resolve(reported(cfg.measures))
    tick = time.perf_counter()
    lists, calib, latency = retrieve_queries(cfg, ix.backend, ix.queries, ix.doc_file,
                                             ix.doc_text, ix.reranker)
    repeats = repeat_retrieval(ix.backend, lists, lambda: retrieve_queries(
        cfg, ix.backend, ix.queries, ix.doc_file, ix.doc_text, ix.reranker)[0])
    phases["retrieval_seconds"] = time.perf_counter() - tick
    ix.backend.end_measurement()  # raises when a remote index changed under the run
    backend_block = ix.backend.describe()
    run_stats = ix.backend.run_stats()
    reranker = ix.reranker._reranker if ix.reranker is not None else None

    tick = time.perf_counter()
    metrics, files = _score_and_report(cfg, ix.prepared, measures, lists, calib, ix.doc_file,
                                       ix.policy, backend_block, ix.provenance, ix.encoder,
                                       reranker, ix.memo)
    metrics = system_claim(metrics, backend_block, repeats, lambda again: _score_and_report(
        cfg, ix.prepared, measures, again, again, ix.doc_file, ix.policy, backend_block,
        ix.provenance, ix.encoder, reranker)[0].rows)
    phases["score_seconds"] = time.perf_counter() - tick

    runinfo = {
        "command": "bench",
        "elapsed_seconds": time.perf_counter() - started,
        "phases": phases,
        "retrieval_latency_ms": latency_block(latency, cfg.workers, latency_method,
                                              cfg.query_batch),
        "workers": cfg.workers,
        "query_batch": cfg.query_batch,
        "embedding": run_stats.get("embedding", {"texts_embedded": 0, "texts_from_cache": 0}),
        "backend": {k: v for k, v in run_stats.items() if k != "embedding"},
        "cache_dir": str(cfg.resolved_cache_dir) if cfg.uses_dense else None,
        "prepared_cache": ix.cache,
        **(runinfo_extra or {}),
    }
    out = write_results(cfg.out, metrics, metrics_md=files.pop("metrics.md"),
                        per_query=files.pop("per_query"), rankings=files.pop("rankings"),
                        runinfo=runinfo, extra_files=files)
    return ArmOutcome(out, load_metrics(out), runinfo)


# --------------------------------------------------------------------------- retrieval


def retrieve_queries(cfg: ArmConfig, backend, queries, doc_file, doc_text, reranker):
    """``(final lists, calibration lists, latency)``: lists per query id; latency maps each
    batch's first query id to ``(queries in the batch, ms per query)``."""
    batches = [queries[i:i + cfg.query_batch] for i in range(0, len(queries), cfg.query_batch)]
    query_text = {q.query_id: q.text for q in queries}
    depth = cfg.leg_depth

    def one_batch(batch):
        t0 = time.perf_counter()
        fused = backend.fused_search(batch, cfg.fusion, cfg.size) if cfg.mode == "hybrid" else None
        legs = backend.search_legs(cfg.legs, batch, depth) if fused is None else {}
        out = {}
        for q in batch:
            if fused is not None:
                ranked = fused[q.query_id]
            elif cfg.mode == "hybrid":
                ranked = fuse([legs["bm25"][q.query_id], legs["dense"][q.query_id]],
                              cfg.fusion, cfg.size)
            else:
                ranked = list(legs[cfg.legs[0]][q.query_id][:cfg.size])
            if reranker is None:
                out[q.query_id] = (ranked, ranked)
                continue
            from harness.retrieval.rerank import rerank_stage

            pool, prompt = rerank_stage(
                query_text[q.query_id], ranked, doc_text.__getitem__, doc_file.__getitem__,
                reranker, rerank_max_pairs=cfg.rerank_max_pairs,
                max_chunks_per_file=cfg.max_chunks_per_file, final_chunks=cfg.final_chunks)
            final = [(doc_id, float(len(prompt) - i)) for i, (doc_id, _, _) in enumerate(prompt)]
            head = [(doc_id, s) for doc_id, s, reranked in pool if reranked]
            out[q.query_id] = (final, head)
        per_query_ms = (time.perf_counter() - t0) * 1000.0 / max(1, len(batch))
        return out, per_query_ms

    lists: dict[str, list] = {}
    calib: dict[str, list] = {}
    latency: dict[str, tuple[int, float]] = {}
    bar = None
    if cfg.progress:
        from tqdm import tqdm

        bar = tqdm(total=len(queries), desc=f"retrieving ({cfg.mode}, {cfg.stage})",
                   unit="query", dynamic_ncols=True)
    def done(batch, out, ms) -> None:
        for query_id, (final, head) in out.items():
            lists[query_id] = final
            calib[query_id] = head
        latency[batch[0].query_id] = (len(out), ms)
        if bar is not None:
            bar.update(len(out))

    try:
        with one_blas_thread():
            if cfg.workers <= 1:  # in this thread: no hand-over of the GIL per batch
                for batch in batches:
                    done(batch, *one_batch(batch))
            else:
                with ThreadPoolExecutor(max_workers=cfg.workers) as pool:
                    futures = {pool.submit(one_batch, b): b for b in batches}
                    for future in as_completed(futures):
                        done(futures[future], *future.result())
    finally:
        if bar is not None:
            bar.close()
    return lists, calib, latency


# --------------------------------------------------------------------------- scoring


def _judgements(prepared: Sequence[PreparedCorpus]):
    """``(qrels, file_qrels, meta, corpus_of, shared_tier, tiers)`` of the indexed corpora."""
    qrels: dict[str, dict[str, int]] = {}
    file_qrels: dict[str, dict[str, int]] = {}
    meta: dict[str, QueryMeta] = {}
    corpus_of: dict[str, PreparedCorpus] = {}
    for p in prepared:
        for query_id, judged in p.qrels.items():
            qrels[query_id] = judged
        for query_id in p.dropped:
            qrels.setdefault(query_id, {})
        for query_id in set(p.qrels) | set(p.dropped):
            meta[query_id] = QueryMeta(p.name, p.queries[query_id].query_class)
            corpus_of[query_id] = p
        file_qrels.update(p.file_qrels)
    shared_tier = index_tier_of(prepared)
    #: every corpus's numbers are as restrictive as the index they were retrieved from
    tiers = {p.name: most_restrictive_tier([p.tier, shared_tier]) for p in prepared}
    return qrels, file_qrels, meta, corpus_of, shared_tier, tiers


def _score_and_report(cfg, prepared: Sequence[PreparedCorpus], measures, lists, calib,
                      doc_file, policy, backend_block, provenance, encoder, reranker,
                      memo: dict | None = None):
    """The claim and its files for one arm; ``memo`` keeps what every arm over the same
    prepared corpora derives alike (the judgements and ``qrels.jsonl``)."""
    memo = {} if memo is None else memo
    if "judgements" not in memo:
        memo["judgements"] = _judgements(prepared)
    qrels, file_qrels, meta, corpus_of, shared_tier, tiers = memo["judgements"]
    file_of = doc_file.__getitem__
    preserve = cfg.stage == "rerank" or bool(
        (backend_block.get("system_under_test") or {}).get("preserve_order"))

    if cfg.granularity == "file":
        run = {q: first_occurrence(lst, file_of) for q, lst in lists.items()}
    else:
        run = lists
    keep = max((len(v) for v in run.values()), default=0) or None
    result = score(qrels, run, [m.name for m in measures], binary=cfg.binary,
                   preserve_order=preserve, keep_rankings=keep)
    engine = metric_engine_block(measures, preserve)
    if cfg.granularity == "chunk":
        file_result = file_level_result(result, file_qrels, file_of)
        result = merge_file_measures(result, file_result)
        engine["file_level"] = {
            "measures": [FILE_PREFIX + m for m in FILE_MEASURES],
            "derived": "each file at the rank of its first chunk in the scored list, scored in "
                       "that order against file qrels (a file holding gold is relevant, 1)",
        }

    rows = build_rows(result, meta, tiers)
    calibration = []
    for query_id in result.per_query:
        p = corpus_of[query_id]
        if cfg.granularity == "file":
            relevant = file_qrels.get(query_id, {})
            def is_rel(doc, r=relevant):
                return r.get(file_of(doc), 0) > 0
        else:
            relevant = qrels[query_id]
            def is_rel(doc, r=relevant):
                return r.get(doc, 0) > 0
        candidates = calib.get(query_id, [])
        calibration.append(calibration_row(
            corpus=p.name, tier=tiers[p.name], query_id=query_id,
            query_class=p.queries[query_id].query_class, stage=cfg.stage,
            scores=[score for _, score in candidates],
            relevant=[is_rel(doc_id) for doc_id, _ in candidates]))

    index = {
        "backend": backend_block,
        "corpora": sorted(p.name for p in prepared),
        "tier": shared_tier,
        "documents": backend_block.get("documents"),
        "files": sum(len(p.file_ids()) for p in prepared),
        **provenance,
        "embedding_model": encoder.encoder.describe() if encoder is not None else None,
        "embedded_text": (f"{HEADER_TEMPLATE}\n\n{{chunk text}}" if cfg.embed_header
                          else "{chunk text}") if encoder is not None else None,
    }
    metrics = MetricsClaim(
        control_name=cfg.name(),
        corpora=[p.source_block() for p in sorted(prepared, key=lambda p: p.name)],
        index=index,
        retrieval=cfg.retrieval_block(backend_block,
                                      reranker.describe() if reranker is not None else None),
        metric_engine=engine,
        relevance_policy=_policy_block(cfg, policy),
        judgements={
            "queries_in_qrels": len(qrels),
            "queries_scored": result.n,
            "queries_dropped_unjudgeable": len(result.queries_dropped_unjudgeable),
            "queries_unanswered": len(result.queries_unanswered),
            "judged_documents": result.judged_documents,
            "relevant_documents": result.relevant_documents,
            "answer_scored_queries_excluded": sum(p.answer_queries for p in prepared),
        },
        rows=rows,
    )
    md = _markdown(cfg, metrics.to_dict(), rows, list(result.measures))
    files = {
        "metrics.md": md,
        "per_query": per_query_rows(result, meta, tiers),
        "rankings": ranking_rows(result, meta),
        CALIBRATION_JSONL: calibration_text(calibration),
        # what was judged, for export-run --qrels (the same for every arm over this index)
        QRELS: memo.get(QRELS) or memo.setdefault(QRELS, qrels_text(qrels, meta, tiers)),
        # the query texts, so a reader of a query's change sees what was asked
        QUERIES: memo.get(QUERIES) or memo.setdefault(QUERIES, queries_text(
            {q: corpus_of[q].queries[q].text for q in meta}, meta, tiers)),
    }
    return metrics, files


def index_tier_of(prepared: Sequence[PreparedCorpus]) -> str:
    """The tier of one shared index: the most restrictive tier of the corpora in it (their
    documents are each other's distractors and share the collection statistics)."""
    return most_restrictive_tier(p.tier for p in prepared)


def _markdown(cfg: ArmConfig, metrics: dict, rows, measures) -> str:
    r = metrics["retrieval"]
    i = metrics["index"]
    lines = [
        f"# {md_escape(metrics['control_name'])}",
        "",
        f"- arm: `{r['fusion']['arm_id']}` · mode {r['mode']} · stage {r['stage']} · "
        f"scope {r['scope']} · granularity {r['granularity']} · size {r['size']}",
        f"- embedding: {', '.join(map(md_escape, i['embedding_models'])) or 'none'} "
        f"(verdict {i['embedding_verdict']}; header {'on' if r['embed_header'] else 'off'})",
    ]
    if r["upper_bound"]:
        lines.append("- **upper bound**: gold-files oracle scope, not a system result")
    lines.append(f"- index: {', '.join(map(md_escape, i['corpora']))} in one index, tier "
                 f"{i['tier']} (every "
                 "row is as restrictive as the most restrictive indexed corpus)")
    lines += ["", metrics_table(rows, measures)]
    return "\n".join(lines)
