"""Arms as data: a run's retrieval parameters as columns, and the group of runs whose numbers
share a measure column.

Parameters come from the run's claim as stored (``runs.retrieval``, ``granularity``,
``scope``, the configured embedding model): backend, mode, model, fusion strategy and its
rank constant, BM25 k1 and b, the reranker, granularity and corpus scope.  A parameter the
run does not have is empty, never guessed.

Runs judged at another granularity (chunk- or file-level relevance) or under another
relevance policy measure something else under the same measure name: a file-level nDCG@10 is
not comparable with a chunk-level one.  :func:`comparability_group` names what a run's
numbers are (``chunk-level, graded``), and every export and the Results page keep each group
in tables of its own.
"""

from __future__ import annotations

import json
from typing import Any, Mapping

#: the parameter columns, in the order a table shows them
ARM_COLUMNS = ("backend", "mode", "model", "fusion", "fusion_k", "bm25_k1", "bm25_b", "rerank",
               "granularity", "scope")


def _json(value) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return None
    return value


def arm_parameters(run: Mapping) -> dict:
    """``run``: a row of ``warehouse.queries.runs`` or ``run_provenance`` (``retrieval`` as
    stored JSON).  Returns one value per :data:`ARM_COLUMNS` (None where it does not apply)."""
    retrieval = _json(run.get("retrieval")) or {}
    fusion = retrieval.get("fusion") or _json(run.get("fusion")) or {}
    bm25 = retrieval.get("bm25") or {}
    reranker = retrieval.get("reranker") or {}
    model = run.get("configured_embedding_model") or run.get("embedding_model")
    if isinstance(model, (list, tuple)):
        model = ", ".join(str(m) for m in model)
    rerank = (reranker.get("model") or reranker.get("name") or "yes") if reranker else None
    if retrieval.get("stage") == "rerank" and rerank is None:
        rerank = "yes"
    return {
        "backend": run.get("backend") or retrieval.get("backend"),
        "mode": run.get("mode") or retrieval.get("mode"),
        "model": model or None,
        "fusion": fusion.get("strategy") if isinstance(fusion, dict) else None,
        "fusion_k": fusion.get("rank_constant") if isinstance(fusion, dict) else None,
        "bm25_k1": bm25.get("k1"), "bm25_b": bm25.get("b"),
        "rerank": rerank,
        "granularity": run.get("granularity") or retrieval.get("granularity"),
        "scope": run.get("scope") or retrieval.get("scope"),
    }


def relevance_text(policy) -> str:
    """``graded`` / ``binary``, with where the grades come from when not the qrels."""
    policy = _json(policy) or {}
    text = "binary" if policy.get("binary") else "graded"
    source = policy.get("graded_from")
    if source and source != "qrels":
        text += f" from {source}"
    low = policy.get("relevance_low")
    if low is not None:
        text += f", relevant from {low}"
    return text


def comparability_group(run: Mapping) -> str:
    """What a run's numbers measure: its granularity and relevance policy, e.g.
    ``chunk-level, graded`` (``granularity unrecorded`` when the claim has none)."""
    granularity = run.get("granularity") or (_json(run.get("retrieval")) or {}).get("granularity")
    level = f"{granularity}-level" if granularity else "granularity unrecorded"
    return f"{level}, {relevance_text(run.get('relevance_policy'))}"


def groups_of(runs) -> dict[str, str]:
    """``run_id -> group`` for ``runs`` (mappings); a policy that differs but reads the same
    gets a number, so two groups never share a name."""
    seen: dict[str, dict[str, str]] = {}
    out = {}
    for run in runs:
        name = comparability_group(run)
        key = json.dumps([run.get("granularity"), _json(run.get("relevance_policy"))],
                         sort_keys=True, default=str)
        variants = seen.setdefault(name, {})
        if key not in variants:
            variants[key] = name if not variants else f"{name} ({len(variants) + 1})"
        out[run["run_id"]] = variants[key]
    return out
