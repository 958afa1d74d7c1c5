"""A gated arm run: retrieve and score one query at a time until the gate decides.

``harness bench ... --gate sequential --gate-measure nDCG@10 --gate-threshold 0.30`` indexes
once, then streams the slice's judgeable queries, in a seeded order, through retrieval (legs,
fusion, rerank) and scoring one query at a time (:class:`harness.stats.sequential.QueryStream`).
The anytime-valid gate (Waudby-Smith & Ramdas 2024) stops as soon as its verdict is decided,
so what is saved is retrieval and reranking never done - counted in ``queries_scored`` -
not a smaller number in a report.  The other policies consume every query.

A gated run writes no results directory: it is partial by design.  It prints the gate's
Markdown summary and can write the gate document (kind ``gate``).  The result's
``extra["tier"]`` is the shared index's tier (the most restrictive of every indexed corpus):
the summary withholds the numbers of a slice that is not tier A.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from harness.pipeline.config import ArmConfig
from harness.pipeline.levels import first_occurrence
from harness.pipeline.runner import index_tier_of, open_index, retrieve_queries
from harness.core.measures import resolve
from harness.claims.metrics import pooled_name
from harness.evaluation.scoring import score
from harness.stats.gate import GateResult


@dataclass(frozen=True)
class GateOptions:
    policy: str
    measure: str
    threshold: float
    #: the slice's corpus (default: the only corpus, else all corpora pooled)
    corpus: str | None = None
    query_class: str = "all"
    #: control values keyed by (corpus, query_id), for ``regression``
    control: dict | None = None
    alpha: float = 0.05
    seed: int = 0
    budget: int | None = None
    resamples: int = 10000
    permutations: int = 10000
    #: the control's metrics.json and where it was read: a control that measured something
    #: else (another index, granularity, engine ...) is refused before any query is retrieved
    control_claim: dict | None = None
    control_source: str = "control"


class TieredGateResult(GateResult):
    """A gate result whose document names the slice's licence tier (``extra["tier"]``) and
    the corpora of the index it was retrieved from."""

    def to_dict(self) -> dict:
        doc = super().to_dict()
        doc["tier"] = self.extra["tier"]
        doc["index_corpora"] = list(self.extra["index_corpora"])
        return doc


@dataclass(frozen=True)
class GatedOutcome:
    result: object
    #: queries sent through retrieval (what the gate cost)
    retrieved: int
    #: requests that reached a system under test, retries included (None: not a system)
    requests_sent: int | None = None


def _slice(ix, gate: GateOptions):
    """``(corpus label, {(corpus, query_id): (prepared corpus, query)})`` for the slice."""
    names = sorted(p.name for p in ix.prepared)
    corpus = gate.corpus or (names[0] if len(names) == 1 else pooled_name(names))
    members = set(corpus.split("+"))
    unknown = sorted(members - set(names))
    if unknown:
        raise ValueError(f"--gate-corpus {corpus!r}: no corpus {unknown} in this run; "
                         f"corpora: {names}")
    wanted = {}
    search = {q.query_id: q for q in ix.queries}
    for p in ix.prepared:
        if p.name not in members:
            continue
        for query_id in sorted(p.qrels):
            query = p.queries[query_id]
            if gate.query_class != "all" and query.query_class != gate.query_class:
                continue
            wanted[(p.name, query_id)] = (p, search[query_id])
    if not wanted:
        raise ValueError(f"no judgeable query in {corpus} / {gate.query_class}")
    return corpus, wanted


def claim_header(cfg: ArmConfig, ix, measure) -> dict:
    """What a full run of this arm would record in metrics.json about what its numbers
    mean (engine, relevance policy, corpora, retrieval, index corpora): a control is
    compared with it as ``harness intervals`` compares two results directories."""
    from harness.evaluation.engine import metric_engine_block
    from harness.pipeline.runner import _policy_block

    reranker = ix.reranker._reranker.describe() if ix.reranker is not None else None
    return {
        "control_name": cfg.name(),
        "corpora": [p.source_block() for p in sorted(ix.prepared, key=lambda p: p.name)],
        "index": {"corpora": sorted(p.name for p in ix.prepared),
                  "tier": index_tier_of(ix.prepared)},
        "retrieval": cfg.retrieval_block(ix.backend.describe(), reranker),
        "metric_engine": metric_engine_block([measure], cfg.stage == "rerank" or getattr(
            ix.backend, "preserve_order", False)),
        "relevance_policy": _policy_block(cfg, ix.policy),
    }


def _refuse_incomparable(cfg: ArmConfig, ix, measure, gate: GateOptions) -> None:
    from harness.stats.randomization import refuse_incomparable

    claim = claim_header(cfg, ix, measure)
    refuse_incomparable(gate.control_claim, claim,
                        control_name=str(gate.control_claim.get("control_name")),
                        control_source=gate.control_source, arm_name=claim["control_name"],
                        arm_source=f"bench {cfg.name()}")


def _arm_label(cfg: ArmConfig, backend) -> str:
    if getattr(backend, "kind", None) in ("http", "command"):
        return f"system:{backend.kind}"
    return cfg.fusion.arm_id if cfg.mode == "hybrid" else cfg.mode


def run_gated(cfg: ArmConfig, gate: GateOptions, corpora=None) -> GatedOutcome:
    """Index once, then gate ``gate.measure`` on the slice, retrieving lazily."""
    from harness.stats.gate import GateSpec, run_gate
    from harness.stats.sequential import QueryStream

    measure = resolve([gate.measure])[0]
    if measure.name.startswith("file:"):
        raise ValueError(f"a gated run scores {measure.name!r}'s chunk-level measures only; "
                         "use --granularity file with the plain measure name")
    single = replace(cfg, workers=1, query_batch=1, progress=False)
    phases: dict[str, float] = {}
    with open_index(cfg, corpora, phases) as ix:
        corpus, wanted = _slice(ix, gate)
        if gate.control_claim is not None:
            _refuse_incomparable(cfg, ix, measure, gate)
        retrieved = 0
        preserve = cfg.stage == "rerank" or getattr(ix.backend, "preserve_order", False)

        def value_of(key) -> float | None:
            nonlocal retrieved
            prepared, query = wanted[key]
            query_id = query.query_id
            lists, _, _ = retrieve_queries(single, ix.backend, [query], ix.doc_file,
                                           ix.doc_text, ix.reranker)
            retrieved += 1
            ranking = lists.get(query_id, [])
            if cfg.granularity == "file":  # the same conversion as a full run's scoring
                ranking = first_occurrence(ranking, ix.doc_file.__getitem__)
            result = score({query_id: prepared.qrels[query_id]}, {query_id: ranking},
                           [measure.name],
                           binary=cfg.binary, preserve_order=preserve)
            values = result.per_query.get(query_id)
            return None if values is None else values[measure.name]

        stream = QueryStream(wanted.keys(), value_of,
                             seed=gate.seed if gate.policy == "sequential" else None,
                             label=f"bench {cfg.name()}")
        spec = GateSpec(measure=measure.name, threshold=gate.threshold, corpus=corpus,
                        query_class=gate.query_class, stream=stream, control=gate.control,
                        alpha=gate.alpha, seed=gate.seed, resamples=gate.resamples,
                        permutations=gate.permutations, budget=gate.budget,
                        source=f"bench {cfg.name()} ({_arm_label(cfg, ix.backend)})",
                        progress=cfg.progress)
        result = run_gate(gate.policy, spec)
        ix.backend.end_measurement()
        requests = ix.backend.run_stats().get("requests_sent")
    result = TieredGateResult(**{f.name: getattr(result, f.name) for f in fields(result)})
    # the slice was retrieved from the shared index: as restrictive as every corpus in it
    result.extra["tier"] = index_tier_of(ix.prepared)
    result.extra["index_corpora"] = sorted(p.name for p in ix.prepared)
    return GatedOutcome(result, retrieved, requests)
