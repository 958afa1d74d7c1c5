"""A family of arms in one process (``harness sweep``): prepare once, index once, write each
arm's own results directory.

Arms whose index is the same (same corpora, chunking, judgements, legs, BM25 and embedding
parameters, backend, scope and stage: :func:`index_signature`) share one open index: the
corpora are prepared (or read from the prepared cache) and indexed once, the queries
embedded once.  Arms that also ask each leg for the same candidates (same legs, depth and
query batches) share those candidate lists: the legs are searched once, by the first such
arm, and each arm fuses (and reranks) them itself.  Neither can change a number: every
arm's claim files are byte-identical to a separate ``harness bench`` of the same flags
(tested); what sharing changes is recorded in runinfo.json (``sweep``), and an arm served
shared legs says that its latency samples time fusion only.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from harness.retrieval.arms import FusionSpec
from harness.pipeline.config import ArmConfig
from harness.pipeline.runner import LATENCY_METHOD, ArmOutcome, measure_arm, open_index

SHARED_LEGS_NOTE = ("; this arm's leg candidates were searched once per sweep (by the arm "
                    "named in runinfo.sweep.legs_from) and served from memory, so its samples "
                    "time fusion (and rerank) only, not the legs")

#: the fusion family: 8 RRF rank constants, 7 unweighted normalisation-combination pairs
#: (z-score admits only the arithmetic mean), 9 weighted arithmetic means (BM25 weight first)
FUSION_FAMILY: tuple[FusionSpec, ...] = (
    *(FusionSpec("rrf", k, selected_explicitly=True) for k in (10, 20, 30, 40, 60, 80, 100, 200)),
    *(FusionSpec("normalization", 60, norm, comb, selected_explicitly=True)
      for norm in ("min_max", "l2") for comb in ("arithmetic_mean", "geometric_mean",
                                                 "harmonic_mean")),
    FusionSpec("normalization", 60, "z_score", "arithmetic_mean", selected_explicitly=True),
    *(FusionSpec("normalization", 60, norm, "arithmetic_mean", w, selected_explicitly=True)
      for norm, weights in (("min_max", ((30, 70), (40, 60), (60, 40), (70, 30))),
                            ("z_score", ((30, 70), (40, 60), (60, 40), (70, 30))),
                            ("l2", ((30, 70),)))
      for w in weights),
)

def _spec_flags(spec: FusionSpec) -> tuple[str, ...]:
    if spec.strategy == "rrf":
        return ("--mode", "hybrid", "--fusion", "rrf", "--rank-constant", str(spec.rank_constant))
    flags = ("--mode", "hybrid", "--fusion", "normalization", "--normalization-technique",
             spec.normalization, "--combination-technique", spec.combination)
    if spec.weights:
        flags += ("--combination-weights", f"{spec.weights[0] / 100:g},{spec.weights[1] / 100:g}")
    return flags


def fusion_family() -> dict[str, tuple[str, ...]]:
    return {spec.arm_id: _spec_flags(spec) for spec in FUSION_FAMILY}


#: family name -> a function giving the ``harness bench`` flags of each arm, by arm name
FAMILIES: dict[str, Callable[[], dict[str, tuple[str, ...]]]] = {"fusion": fusion_family}


def index_signature(cfg: ArmConfig) -> tuple:
    """What an open index depends on: arms with equal signatures can share one."""
    return (cfg.corpus_specs, cfg.granularity, cfg.max_words, cfg.relevance_high,
            cfg.relevance_low, cfg.binary, cfg.backend, cfg.backend_options, cfg.k1, cfg.b,
            cfg.model, cfg.dim, cfg.query_prefix, cfg.document_prefix, cfg.embed_header,
            cfg.cache_dir, cfg.prepared_cache, cfg.legs, cfg.scope, cfg.stage, cfg.reranker)


class SharedLegs:
    """A backend whose ``search_legs`` answers a batch it has seen from memory.

    Keyed by the legs, the batch's query ids and scopes and the depth: the same request
    gets the same lists (every leg's list is in a total order, so it is the list a new
    search would return).  Everything else is the wrapped backend's.
    """

    def __init__(self, backend):
        self._backend = backend
        self._memo: dict[tuple, dict] = {}
        self._lock = threading.Lock()
        self.served = 0

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def search_legs(self, legs, queries, k):
        key = (tuple(legs), tuple((q.query_id, q.text, q.files) for q in queries), k)
        with self._lock:
            found = self._memo.get(key)
            if found is not None:
                self.served += 1
                return found
        found = self._backend.search_legs(legs, queries, k)
        with self._lock:
            self._memo.setdefault(key, found)
        return found

    def fused_search(self, queries, spec, size):
        return self._backend.fused_search(queries, spec, size)


@dataclass(frozen=True)
class ArmResult:
    name: str
    outcome: ArmOutcome
    seconds: float
    shared_index: bool
    legs_from: str | None


def leg_signature(cfg: ArmConfig) -> tuple:
    return (cfg.legs, cfg.leg_depth, cfg.query_batch)


def run_sweep(arms: Sequence[tuple[str, ArmConfig]], *, share_legs: bool = True,
              on_arm: Callable[[ArmResult], None] | None = None) -> list[ArmResult]:
    """Run every ``(name, config)`` arm; arms sharing an index signature share one open
    index (in the order first given), and with ``share_legs`` their leg candidates."""
    groups: dict[tuple, list[tuple[str, ArmConfig]]] = {}
    for name, cfg in arms:
        groups.setdefault(index_signature(cfg), []).append((name, cfg))
    results: list[ArmResult] = []
    for members in groups.values():
        opened_at = time.perf_counter()
        shared_phases: dict[str, float] = {}
        first_cfg = members[0][1]
        with open_index(first_cfg, None, shared_phases) as ix:
            backend = SharedLegs(ix.backend) if share_legs else ix.backend
            view = dataclasses.replace(ix, backend=backend)
            legs_owner: dict[tuple, str] = {}
            for position, (name, cfg) in enumerate(members):
                started = opened_at if position == 0 else time.perf_counter()
                phases = dict(shared_phases)
                owner = legs_owner.setdefault(leg_signature(cfg), name) if share_legs else name
                legs_from = owner if owner != name else None
                extra = {"sweep": {"arms": len(arms), "position": len(results) + 1,
                                   "index_from": members[0][0],
                                   "index_shared": position > 0,
                                   "legs_from": legs_from}}
                method = LATENCY_METHOD + (SHARED_LEGS_NOTE if legs_from else "")
                tick = time.perf_counter()
                outcome = measure_arm(cfg, view, phases, started, latency_method=method,
                                      runinfo_extra=extra)
                result = ArmResult(name, outcome, time.perf_counter() - tick, position > 0,
                                   legs_from)
                results.append(result)
                if on_arm is not None:
                    on_arm(result)
    return results
