"""Results directories for warehouse tests, built from hand-chosen per-query values.

Rows are the plain means of the values given (computed here, independently of the
warehouse), written through ``harness.evaluation.results.write_results`` so they are real results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from harness.core.tiers import most_restrictive_tier
from harness.evaluation.results import write_results


def build_results(
    out,
    values: Mapping[tuple[str, str], Mapping[str, float]],
    *,
    corpora: Mapping[str, tuple[str, str]],
    classes: Mapping[str, str] | None = None,
    control_name: str = "run",
    latency: list[float] | None = None,
    concurrency: int = 1,
    rankings: list[dict] | None = None,
    retrieval: Mapping | None = None,
    index: Mapping | None = None,
    extra_files: Mapping[str, str] | None = None,
    corpus_fields: Mapping[str, Mapping] | None = None,
    runinfo_fields: Mapping | None = None,
) -> Path:
    """``values[(corpus, query_id)][measure] = value``; ``corpora[name] = (tier, licence)``;
    ``corpus_fields[name]`` overrides fields of that corpus's block (sha256, evidence ...);
    ``runinfo_fields`` go into runinfo.json (created_at ...).

    Rows: per corpus, one per class present and ``all``; plus a pooled ``all`` row over
    several corpora (tier: the most restrictive).
    """
    classes = dict(classes or {})
    measures = sorted({m for v in values.values() for m in v})

    def row(corpus, tier, cls, keys):
        return {"corpus": corpus, "tier": tier, "query_class": cls, "n": len(keys),
                "metrics": {m: sum(values[k][m] for k in keys) / len(keys) for m in measures},
                "queries_unanswered": 0, "queries_dropped_unjudgeable": 0}

    rows = []
    names = sorted(corpora)
    for corpus in names:
        keys = sorted(k for k in values if k[0] == corpus)
        tier = corpora[corpus][0]
        for cls in sorted({classes[q] for _, q in keys if q in classes}):
            rows.append(row(corpus, tier, cls, [k for k in keys if classes.get(k[1]) == cls]))
        rows.append(row(corpus, tier, "all", keys))
    if len(names) > 1:
        rows.append(row("+".join(names), most_restrictive_tier(corpora[c][0] for c in names),
                        "all", sorted(values)))
    metrics = {
        "schema_version": 1,
        "control_name": control_name,
        "corpora": [{"name": c, "version": "1", "licence": corpora[c][1], "tier": corpora[c][0],
                     "sha256": "0" * 64, "files": 2, "chunks": 10,
                     "evidence": f"licence {corpora[c][1]} declared (test fixture)",
                     **(corpus_fields or {}).get(c, {})} for c in names],
        "index": dict(index) if index is not None else None,
        "retrieval": dict(retrieval) if retrieval is not None else {"source": "run file"},
        "metric_engine": {"name": "pytrec_eval_terrier", "version": "0.5.10"},
        "relevance_policy": {"binary": False, "gain": "linear"},
        "rows": rows,
    }
    per_query = [{"corpus": c, "tier": corpora[c][0], "query_class": classes.get(q),
                  "query_id": q, "measure": m, "value": values[(c, q)][m], "answered": True}
                 for (c, q) in sorted(values) for m in measures]
    runinfo = {"command": "test", **(runinfo_fields or {})}
    if latency is not None:
        runinfo["retrieval_latency_ms"] = {"samples": latency, "concurrency": concurrency}
    return write_results(out, metrics, metrics_md=f"# {control_name}\n",
                         per_query=per_query, rankings=rankings, runinfo=runinfo,
                         extra_files=extra_files)


def simple_run(out, n_queries: int = 3, *, control_name: str = "run", offset: float = 0.0,
               corpus: str = "pub", tier: str = "A", latency=None,
               classed: bool = False) -> Path:
    """One corpus, ``n_queries`` queries q1.., measures nDCG@10 and MRR with values
    ``i/10 + offset`` and ``1/i`` (i = 1..n); with ``classed``, odd queries are class
    ``lookup`` and even ones ``summarize`` (else no query has a class)."""
    values = {(corpus, f"q{i}"): {"nDCG@10": i / 10 + offset, "MRR": 1 / i}
              for i in range(1, n_queries + 1)}
    classes = ({f"q{i}": "lookup" if i % 2 else "summarize" for i in range(1, n_queries + 1)}
               if classed else None)
    return build_results(out, values, corpora={corpus: (tier, "MIT" if tier == "A" else
                                                        "CC-BY-NC-4.0")},
                         control_name=control_name, latency=latency, classes=classes)
