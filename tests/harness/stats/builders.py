"""Results directories built from per-query values, for the statistics tests.

The metric rows are plain means written out here (independently of the harness's report
code), so a test states its inputs as per-query values and nothing else.
"""

from __future__ import annotations

from pathlib import Path

from harness.claims.metrics import SCHEMA_VERSION
from harness.evaluation.results import write_results

TIERS = {"alpha": "A", "beta": "B"}
#: a licence that fits each tier (tier A needs a publishable one)
LICENCES = {"A": "CC0-1.0", "B": "LicenseRef-internal", "C": "LicenseRef-unobtainable"}


def _rows(queries: dict, tiers: dict) -> list[dict]:
    """queries: {corpus: {query_id: (class, {measure: value})}} -> metric rows incl. pooled."""
    rows = []
    for corpus in sorted(queries):
        qs = queries[corpus]
        classes = sorted({c for c, _ in qs.values() if c})
        for cls in classes + ["all"]:
            ids = [q for q, (c, _) in qs.items() if cls == "all" or c == cls]
            measures = sorted(next(iter(qs.values()))[1])
            rows.append({"corpus": corpus, "tier": tiers[corpus], "query_class": cls, "n": len(ids),
                         "metrics": {m: sum(qs[q][1][m] for q in ids) / len(ids) for m in measures},
                         "queries_unanswered": 0, "queries_dropped_unjudgeable": 0})
    if len(queries) > 1:
        pairs = [(c, q) for c in queries for q in queries[c]]
        measures = sorted(next(iter(next(iter(queries.values())).values()))[1])
        tier = "B" if any(tiers[c] == "B" for c in queries) else "A"
        rows.append({"corpus": "+".join(sorted(queries)), "tier": tier, "query_class": "all",
                     "n": len(pairs),
                     "metrics": {m: sum(queries[c][q][1][m] for c, q in pairs) / len(pairs)
                                 for m in measures},
                     "queries_unanswered": 0, "queries_dropped_unjudgeable": 0})
    return rows


def make_results(out: Path, name: str, queries: dict, tiers: dict | None = None,
                 retrieval: dict | None = None, *, corpus_fields: dict | None = None,
                 **top) -> Path:
    """``corpus_fields`` are set on every corpus entry (e.g. ``sha256``); ``top`` replaces
    top-level metrics.json fields (e.g. ``relevance_policy``)."""
    tiers = tiers or TIERS
    metrics = {
        "schema_version": SCHEMA_VERSION,
        "control_name": name,
        "corpora": [{"name": c, "version": None, "licence": LICENCES[tiers[c]], "tier": tiers[c],
                     "sha256": None, "files": None, "chunks": None,
                     "evidence": f"licence {LICENCES[tiers[c]]} declared (test fixture)"}
                    for c in sorted(queries)],
        "index": None,
        "retrieval": retrieval or {"source": "test"},
        "metric_engine": {"name": "hand", "version": "0"},
        "relevance_policy": {},
        "rows": _rows(queries, tiers),
    }
    for corpus in metrics["corpora"]:
        corpus.update(corpus_fields or {})
    metrics.update(top)
    per_query = [{"corpus": c, "tier": tiers[c], "query_class": cls, "query_id": q, "measure": m,
                  "value": v, "answered": True}
                 for c in sorted(queries) for q, (cls, values) in sorted(queries[c].items())
                 for m, v in sorted(values.items())]
    return write_results(out / name, metrics, metrics_md=f"# {name}\n", per_query=per_query)
