"""One migration study: OLD -> NEW on one corpus, at T0 and/or T1, as a report document.

Splits (all seeded, all recorded):

* **T0 pool**: the corpus's chunks with duplicate texts removed (first occurrence kept), so
  no proxy has an identical twin.  A **sample** of ``sample`` of them is T0's index.
* **Held-out proxies**: ``heldout`` sample documents of at least ``min_proxy_words`` words
  (a one-word turn is no query), used as T0's queries and *encoded the way a query is
  encoded* (NEW's query prefix, OLD's query prefix for the OLD baseline).
* **Fitting pairs**: the rest of the sample (disjoint from the proxies): NEW's and OLD's
  document vectors of the same documents.  A ``validation_share`` of them is held back to
  tune each adapter family (by fitting error) and to measure each family's retention on
  them as T0-style proxies; the chosen family (:func:`harness.studies.embedding_migration.adapters.choose`)
  is then refitted on all fitting pairs.

T0: a proxy's relevant document is NEW's nearest document with the proxy itself masked
(NEW's exact kNN in NEW's index); the oracle therefore finds it at rank 1.  T1: the
corpus's real queries and judgements (every chunk is indexed), recall@k against the
judged-relevant chunks.  Both tiers also compare OLD and NEW directly, for a NEW that might
replace OLD outright: the per-query top-k overlap of NEW in NEW's index with OLD in OLD's
index, and at T1 the paired nDCG@k difference over the judged grades.  Quantities and
decisions: :mod:`harness.studies.embedding_migration.retention`,
:mod:`harness.studies.embedding_migration.decision`.
"""

from __future__ import annotations

import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Mapping, Sequence

import numpy as np

from harness.studies.embedding_migration import adapters as adapters_mod
from harness.claims.migration import EVAL_TIERS as TIERS
from harness.claims.migration import KIND, SCHEMA_VERSION
from harness.studies.embedding_migration.decision import THRESHOLDS, check_thresholds, decide
from harness.studies.embedding_migration.retention import (STREAM, hits, interval_block,
                                                         mean_interval, ndcg_at_k, overlap_at_k,
                                                         ratio, recall_at_k, search)
from harness.stats.intervals import METHODS
from harness.core.seeding import check_seed, derive_rng

log = logging.getLogger(__name__)

#: fewest held-out proxies (T0) or judged queries (T1) a tier is measured on
MIN_QUERIES = 10
#: fewest fitting pairs an adapter is fitted on
MIN_PAIRS = 20

T0_CAVEAT = (
    "T0 cannot evaluate query encoding (query prefixes, or an adapter specific to queries): "
    "its oracle lives in NEW's document space (a proxy's relevant document is NEW's nearest "
    "document), so an adapter fitted on document pairs is optimal there by construction, and "
    "a wrong or missing query prefix can even raise T0's ARR by making queries look like "
    "documents. Only T1 (real queries, human judgements) sees the query side.")
ARR_CAVEAT = (
    "ARR is relative to NEW's own retrieval (the oracle) and is not comparable across model "
    "pairs: against a weak oracle (upgrade gain below 1) a high ARR means little. Read it "
    "with the gain and with OLD's own retention.")
THRESHOLD_CAVEAT = (
    "The decision thresholds are data derived from one reference corpus (scientific "
    "abstracts, 295 queries, four pairs of small models); they are starting points, not "
    "universal bands.")


@dataclass(frozen=True)
class StudyOptions:
    tiers: tuple[str, ...] = TIERS
    sample: int = 5000
    heldout: int = 500
    seed: int = 0
    k: int = 10
    resamples: int = 10000
    confidence: float = 0.95
    method: str = "bca"
    validation_share: float = 0.2
    min_proxy_words: int = 5
    thresholds: Mapping[str, float] = field(default_factory=lambda: dict(THRESHOLDS))

    def checked(self) -> "StudyOptions":
        tiers = tuple(sorted(set(self.tiers)))
        if not tiers or set(tiers) - set(TIERS):
            raise ValueError(f"tiers must be a non-empty subset of {list(TIERS)}, got "
                             f"{list(self.tiers)}")
        for name in ("sample", "heldout", "k", "min_proxy_words", "resamples"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        check_seed(self.seed)
        if not 0.0 < self.validation_share < 1.0:
            raise ValueError(f"validation_share must be in (0, 1), got {self.validation_share!r}")
        if self.method not in METHODS:
            raise ValueError(f"unknown bootstrap method {self.method!r}; known: {sorted(METHODS)}")
        if not 0.0 < self.confidence < 1.0:
            raise ValueError(f"confidence must be in (0, 1), got {self.confidence!r}")
        if self.heldout >= self.sample:
            raise ValueError(f"heldout ({self.heldout}) must be smaller than sample "
                             f"({self.sample}): the rest of the sample fits the adapter")
        return StudyOptions(tiers, self.sample, self.heldout, self.seed, self.k, self.resamples,
                            self.confidence, self.method, self.validation_share,
                            self.min_proxy_words, check_thresholds(self.thresholds))

    def block(self) -> dict:
        out = asdict(self)
        out["tiers"] = list(self.tiers)
        out["thresholds"] = dict(self.thresholds)
        return out


@dataclass
class _Split:
    sample: np.ndarray       # chunk positions, sorted
    heldout: np.ndarray      # chunk positions, sorted (subset of sample)
    train: np.ndarray        # fitting pairs used to tune
    validation: np.ndarray   # fitting pairs held back to tune / select
    proxies_val: np.ndarray  # validation pairs long enough to be proxies
    pool: int

    @property
    def fit(self) -> np.ndarray:
        return np.sort(np.concatenate([self.train, self.validation]))


def split(texts: Sequence[str], options: StudyOptions) -> _Split:
    """The seeded T0 split (module docstring)."""
    first: dict[str, int] = {}
    for i, text in enumerate(texts):
        first.setdefault(text, i)
    pool = np.array(sorted(first.values()), dtype=np.int64)
    size = min(options.sample, len(pool))
    sample = np.sort(derive_rng(options.seed, "migration", "sample")
                     .choice(pool, size=size, replace=False)) if size < len(pool) else pool
    long_enough = np.array([p for p in sample if len(texts[p].split()) >= options.min_proxy_words],
                           dtype=np.int64)
    count = min(options.heldout, len(long_enough))
    if count < MIN_QUERIES:
        raise ValueError(f"T0 needs at least {MIN_QUERIES} held-out proxies of >= "
                         f"{options.min_proxy_words} words; the sample of {size} distinct "
                         f"texts has {len(long_enough)}")
    heldout = np.sort(derive_rng(options.seed, "migration", "heldout")
                      .choice(long_enough, size=count, replace=False))
    fit = np.setdiff1d(sample, heldout)
    if len(fit) < MIN_PAIRS:
        raise ValueError(f"only {len(fit)} fitting pairs remain after {count} proxies are held "
                         f"out (need {MIN_PAIRS}); raise --sample or lower --heldout")
    order = derive_rng(options.seed, "migration", "validation").permutation(len(fit))
    n_val = max(2, int(round(options.validation_share * len(fit))))
    validation = np.sort(fit[order[:n_val]])
    train = np.sort(fit[order[n_val:]])
    proxies_val = np.array([p for p in validation
                            if len(texts[p].split()) >= options.min_proxy_words], dtype=np.int64)
    if len(proxies_val) < 2:
        proxies_val = validation
    return _Split(sample, heldout, train, validation, proxies_val, len(pool))


def _t0_hits(q_new, new_index, old_index, mask, k, *, adapted=None, q_old=None):
    """Per-proxy hits at T0: relevant = NEW's top-1 with the proxy masked."""
    relevant = search(q_new, new_index, 1, mask)[:, 0]
    out = {"relevant": relevant,
           "oracle": hits(search(q_new, new_index, k, mask), relevant)}
    if adapted is not None:
        out["adapted"] = hits(search(adapted, old_index, k, mask), relevant)
    if q_old is not None:
        out["old"] = hits(search(q_old, old_index, k, mask), relevant)
    if q_new.shape[1] == old_index.shape[1]:
        out["unadapted"] = hits(search(q_new, old_index, k, mask), relevant)
    return out


def _tier_block(tier: str, values: Mapping[str, np.ndarray], options: StudyOptions,
                dims: tuple[int, int], extra: Mapping,
                equivalence: Mapping[str, np.ndarray] | None = None) -> dict:
    """Ratios with intervals, the drop-in comparison, the decision and the caveat of one
    tier (``equivalence``: per-query ``overlap`` and, at T1, ``ndcg_old`` / ``ndcg_new``)."""
    def r(num, den, what):
        return ratio(num, den, tier=tier, seed=options.seed, resamples=options.resamples,
                     confidence=options.confidence, method=options.method, what=what)

    def m(series, what):
        return mean_interval(series, tier=tier, seed=options.seed, resamples=options.resamples,
                             confidence=options.confidence, method=options.method, what=what)

    oracle, adapted, old = values["oracle"], values["adapted"], values["old"]
    arr = r(adapted, oracle, "ARR")
    old_ret = r(old, oracle, "OLD retention")
    bridge = r(adapted - old, oracle, "ARR - OLD retention")
    gain = r(oracle, old, "upgrade gain") if tier == "T1" else None
    unadapted, reason = None, None
    if "unadapted" in values:
        unadapted = r(values["unadapted"], oracle, "unadapted retention")
    else:
        reason = (f"NEW has {dims[1]} dimensions and OLD {dims[0]}: a NEW vector cannot enter "
                  "the OLD index at all")
    intervals = {"arr": (arr.lower, arr.upper), "bridge_minus_old": (bridge.lower, bridge.upper)}
    if gain is not None:
        intervals["gain"] = (gain.lower, gain.upper)
    equivalence = equivalence or {}
    overlap = m(equivalence["overlap"], "top-k overlap") if "overlap" in equivalence else None
    delta, ndcg = None, None
    if "ndcg_new" in equivalence:
        ndcg_old, ndcg_new = equivalence["ndcg_old"], equivalence["ndcg_new"]
        delta = m(ndcg_new - ndcg_old, "nDCG NEW - OLD")
        ndcg = {"old": float(ndcg_old.mean()), "new": float(ndcg_new.mean())}
        intervals["ndcg_delta"] = (delta.lower, delta.upper)
    if overlap is not None:
        intervals["overlap"] = (overlap.lower, overlap.upper)
    decision = decide(arr.estimate, old_ret.estimate,
                      gain.estimate if gain is not None else None,
                      overlap=overlap.estimate if overlap is not None and delta is not None
                      else None,
                      ndcg_delta=delta.estimate if delta is not None else None,
                      intervals=intervals, thresholds=options.thresholds)
    return {
        **extra,
        "n": int(len(oracle)),
        "recall": {"oracle": float(oracle.mean()), "adapted": float(adapted.mean()),
                   "old": float(old.mean()),
                   "unadapted": float(values["unadapted"].mean()) if "unadapted" in values else None},
        "arr": interval_block(arr),
        "old_retention": interval_block(old_ret),
        "bridge_minus_old": interval_block(bridge),
        "unadapted": interval_block(unadapted) if unadapted is not None else None,
        "unadapted_reason": reason,
        "gain": interval_block(gain) if gain is not None else None,
        "overlap": interval_block(overlap) if overlap is not None else None,
        "overlap_min": float(equivalence["overlap"].min()) if overlap is not None else None,
        "ndcg": ndcg,
        "ndcg_delta": interval_block(delta) if delta is not None else None,
        "decision": decision.to_dict(),
        "caveat": T0_CAVEAT if tier == "T0" else None,
    }


def pair_situation(models: Mapping[str, Mapping]) -> str | None:
    """What the pair stands for, when one model is derived from the other (a derived
    profile's ``situation`` describes a migration from its base to it)."""
    old, new = models.get("old") or {}, models.get("new") or {}
    if new.get("derived_from") and new["derived_from"] == old.get("model_id"):
        return new.get("situation") or None
    if old.get("derived_from") and old["derived_from"] == new.get("model_id") \
            and old.get("situation"):
        return f"the reverse of a migration that stands for: {old['situation']}"
    return None


def _encode_rows(encoder, texts: Sequence[str], positions: np.ndarray) -> np.ndarray:
    return encoder.encode_documents([texts[p] for p in positions])


def run_study(corpus, chunks, judgements, old, new, options: StudyOptions | None = None,
              *, models: Mapping[str, Mapping] | None = None,
              timings: dict | None = None) -> tuple[dict, list[dict]]:
    """Measure OLD -> NEW on ``corpus`` and return ``(report document, per-query rows)``.

    ``chunks`` and ``judgements`` come from :func:`ingestion.chunking.chunk_corpus` and
    :func:`ingestion.judgements.judge`; ``old`` and ``new`` encode through
    ``encode_documents`` / ``encode_queries`` (a :class:`~harness.retrieval.embeddings.CachedEncoder`,
    which applies each model's own prefixes); ``models`` is the provenance of each side.
    ``timings`` (when given) receives seconds per step (for runinfo.json, never the claim).
    """
    options = (options or StudyOptions()).checked()
    timings = timings if timings is not None else {}
    clock = time.perf_counter()

    def lap(name):
        nonlocal clock
        now = time.perf_counter()
        timings[name] = round(now - clock, 3)
        clock = now

    texts = [c.text for c in chunks]
    doc_ids = [c.doc_id for c in chunks]
    if len(set(doc_ids)) != len(doc_ids):
        raise ValueError(f"corpus {corpus.name}: chunk ids repeat; one index cannot hold them")
    t0_split = split(texts, options)
    want_t1 = "T1" in options.tiers
    t1_queries: list = []
    if want_t1:
        by_id = {q.query_id: q for q in corpus.rank_queries()}
        t1_queries = sorted((qid for qid, rel in judgements.qrels.items()
                             if qid in by_id and any(g > 0 for g in rel.values())))
        if len(t1_queries) < MIN_QUERIES:
            raise ValueError(f"T1 needs at least {MIN_QUERIES} judged queries; corpus "
                             f"{corpus.name} has {len(t1_queries)} (use --tier T0)")
    indexed = np.arange(len(texts)) if want_t1 else t0_split.sample
    row = np.full(len(texts), -1, dtype=np.int64)
    row[indexed] = np.arange(len(indexed))
    lap("split")

    old_docs = _encode_rows(old, texts, indexed)
    new_docs = _encode_rows(new, texts, indexed)
    dims = (int(old_docs.shape[1]), int(new_docs.shape[1]))
    lap("embed_documents")

    # ---- adapters: tune on train, select by validation retention, refit on all pairs
    s = t0_split
    old_s, new_s = old_docs[row[s.sample]], new_docs[row[s.sample]]
    in_sample = {int(p): i for i, p in enumerate(s.sample)}
    x_tr, y_tr = new_docs[row[s.train]], old_docs[row[s.train]]
    x_va, y_va = new_docs[row[s.validation]], old_docs[row[s.validation]]
    tuned = adapters_mod.tune(x_tr, y_tr, x_va, y_va)
    q_val = new.encode_queries([texts[p] for p in s.proxies_val])
    mask_val = [in_sample[int(p)] for p in s.proxies_val]
    candidates = []
    for name in adapters_mod.ADAPTERS:
        if name not in tuned:
            continue
        fitted = adapters_mod.fit(name, x_tr, y_tr, tuned[name]["hyper"])
        v = _t0_hits(q_val, new_s, old_s, mask_val, options.k, adapted=fitted.apply(q_val))
        candidates.append({"name": name, "parameters": fitted.parameters,
                           "hyper": dict(fitted.hyper),
                           "validation_mse": tuned[name]["validation_mse"],
                           "validation_retention": float(v["adapted"].sum() / v["oracle"].sum()),
                           "retention": float(v["adapted"].sum() / v["oracle"].sum())})
    chosen = adapters_mod.choose(candidates)
    fit = s.fit
    adapter = adapters_mod.fit(chosen["name"], new_docs[row[fit]], old_docs[row[fit]],
                               tuned[chosen["name"]]["hyper"])
    lap("adapters")

    tiers: dict[str, dict] = {}
    per_query: list[dict] = []
    if "T0" in options.tiers:
        proxies = [texts[p] for p in s.heldout]
        q_new = new.encode_queries(proxies)
        q_old = old.encode_queries(proxies)
        mask = [in_sample[int(p)] for p in s.heldout]
        v = _t0_hits(q_new, new_s, old_s, mask, options.k, adapted=adapter.apply(q_new),
                     q_old=q_old)
        v["overlap"] = overlap_at_k(search(q_new, new_s, options.k, mask),
                                    search(q_old, old_s, options.k, mask))
        tiers["T0"] = _tier_block("T0", v, options, dims, {
            "queries": "held-out documents encoded as queries",
            "relevance": "NEW's nearest document to the proxy, the proxy itself masked",
            "index_documents": int(len(s.sample))}, {"overlap": v["overlap"]})
        for i, p in enumerate(s.heldout):
            per_query.append({"tier": "T0", "query_id": doc_ids[p],
                              "relevant": [doc_ids[int(s.sample[v["relevant"][i]])]],
                              **{key: float(v[key][i]) for key in
                                 ("oracle", "adapted", "old", "unadapted", "overlap")
                                 if key in v}})
        lap("tier_T0")
    if want_t1:
        by_id = {q.query_id: q for q in corpus.rank_queries()}
        position = {d: i for i, d in enumerate(doc_ids)}
        relevant = [frozenset(position[d] for d, g in judgements.qrels[qid].items()
                              if g > 0 and d in position) for qid in t1_queries]
        query_texts = [by_id[qid].text for qid in t1_queries]
        q_new = new.encode_queries(query_texts)
        q_old = old.encode_queries(query_texts)
        grades = [{position[d]: float(g) for d, g in judgements.qrels[qid].items()
                   if g > 0 and d in position} for qid in t1_queries]
        k = options.k
        top_new, top_old = search(q_new, new_docs, k), search(q_old, old_docs, k)
        v = {"oracle": recall_at_k(top_new, relevant),
             "adapted": recall_at_k(search(adapter.apply(q_new), old_docs, k), relevant),
             "old": recall_at_k(top_old, relevant)}
        if dims[0] == dims[1]:
            v["unadapted"] = recall_at_k(search(q_new, old_docs, k), relevant)
        v["overlap"] = overlap_at_k(top_new, top_old)
        v["ndcg_old"], v["ndcg_new"] = ndcg_at_k(top_old, grades), ndcg_at_k(top_new, grades)
        tiers["T1"] = _tier_block("T1", v, options, dims, {
            "queries": "the corpus's judged queries",
            "relevance": "judged-relevant chunks (grade > 0)",
            "index_documents": int(len(texts)),
            "queries_dropped_unjudgeable": len(judgements.dropped)},
            {key: v[key] for key in ("overlap", "ndcg_old", "ndcg_new")})
        for i, qid in enumerate(t1_queries):
            per_query.append({"tier": "T1", "query_id": qid,
                              "relevant": sorted(doc_ids[p] for p in relevant[i]),
                              **{key: float(v[key][i]) for key in
                                 ("oracle", "adapted", "old", "unadapted", "overlap",
                                  "ndcg_old", "ndcg_new") if key in v}})
        lap("tier_T1")

    headline = "T1" if "T1" in tiers else "T0"
    src = corpus.source
    doc = {
        "kind": KIND,
        "schema_version": SCHEMA_VERSION,
        "corpus": src.name,
        "tier": src.tier,
        "corpora": [{
            "name": src.name, "version": src.version, "licence": src.licence, "tier": src.tier,
            "evidence": src.evidence, "sha256": src.sha256, "citation": src.citation,
            "registry_source": src.registry_source,
            "files": len({c.file_id for c in chunks}), "chunks": len(chunks),
            "distinct_texts": s.pool,
            "queries_judged": len(t1_queries) if want_t1 else None,
            "queries_dropped_unjudgeable": len(judgements.dropped) if want_t1 else None,
        }],
        "models": {side: dict(block) for side, block in (models or {}).items()},
        "pair": {"dimensions": {"old": dims[0], "new": dims[1]},
                 "unadapted_possible": dims[0] == dims[1],
                 "situation": pair_situation(models or {})},
        "settings": {**options.block(), "stream": STREAM,
                     "near_tie_band": adapters_mod.NEAR_TIE_BAND,
                     "ridge_alphas": list(adapters_mod.RIDGE_ALPHAS),
                     "ranks": [r for r in adapters_mod.RANKS if r < min(dims)],
                     "recall": f"recall@{options.k}", "ndcg": f"nDCG@{options.k}",
                     "overlap": f"top-{options.k} overlap, NEW in NEW's index vs OLD in OLD's",
                     "search": "exact inner product, float64"},
        "split": {"distinct_texts": s.pool, "sample": int(len(s.sample)),
                  "heldout": int(len(s.heldout)), "fitting_pairs": int(len(fit)),
                  "train": int(len(s.train)), "validation": int(len(s.validation)),
                  "validation_proxies": int(len(s.proxies_val))},
        "adapter": {
            "chosen": chosen["name"],
            "parameters": adapter.parameters,
            "hyper": dict(adapter.hyper),
            "fitted_on": int(len(fit)),
            "rule": (f"highest validation retention; within {adapters_mod.NEAR_TIE_BAND} of "
                     "the best, fewer free parameters wins"),
            "candidates": [{key: c[key] for key in ("name", "parameters", "hyper",
                                                      "validation_mse", "validation_retention")}
                           for c in candidates],
        },
        "tiers": tiers,
        "decision": {"tier": headline, **tiers[headline]["decision"]},
        "thresholds": dict(options.thresholds),
        "caveats": [T0_CAVEAT, ARR_CAVEAT, THRESHOLD_CAVEAT] if "T0" in tiers
        else [ARR_CAVEAT, THRESHOLD_CAVEAT],
    }
    return doc, per_query
