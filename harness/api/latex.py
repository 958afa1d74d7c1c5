"""The Python API's tables as the warehouse's export of the same runs, built in memory and
rendered by the warehouse's one LaTeX renderer (:mod:`warehouse.latex`), so a table made
here has the bytes ``python -m warehouse export`` gives for the same runs."""

from __future__ import annotations

import json
from typing import Any, Mapping

from harness.core.tiers import most_restrictive_tier


def export_of(evaluations: Mapping[str, Any], control: str | None,
              intervals: Mapping[str, dict] | None, comparisons: dict | None, *,
              measures=None, caption: str | None = None, label: str | None = None,
              columns: int = 1, query_class: str | None = None):
    """``evaluations`` as the warehouse's export of the same runs
    (:func:`warehouse.exports.assemble`), against ``control`` (or None: the values alone)
    with each run's ``intervals`` (intervals.json, or None: no interval) and the family's
    ``comparisons``: the one renderer's input for :class:`harness.api.comparison.Comparison`
    and a single :class:`harness.api.evaluation.Evaluation`."""
    import pandas as pd

    from harness.claims.metrics import comparability_notes
    from harness.stats.best import tied_with_best
    from warehouse.exports import assemble

    arms = [n for n in evaluations if n != control] if control is not None else []
    stored = dict(intervals or {})

    tier = most_restrictive_tier(e.tier for e in evaluations.values())
    view = "publishable" if tier == "A" else "internal"
    # the measures evaluated are the ones chosen (``compare(measures=...)``)
    measures = list(measures or evaluations[control or next(iter(evaluations))].measures)
    ids = {name: f"{i:04d}-{name}" for i, name in enumerate(evaluations)}
    wanted = None if measures is None else set(measures)
    if query_class is not None:
        known = sorted({row["query_class"] for e in evaluations.values()
                        for row in e.metrics["rows"]})
        if query_class not in known:
            raise ValueError(f"query_class: unknown class {query_class!r}; expected one "
                             f"of {known}")
    table: list[dict] = []
    deltas: list[dict] = []
    runs_info: list[dict] = []
    control_values: dict = {}
    for name, evaluation in evaluations.items():
        doc = evaluation.metrics
        bounds = {(r["corpus"], r["query_class"], r["measure"]): r
                  for r in stored.get(name, {}).get("rows", [])}
        for row in doc["rows"]:
            for measure, value in row["metrics"].items():
                if wanted is not None and measure not in wanted or (
                        query_class is not None and row["query_class"] != query_class):
                    continue
                key = (row["corpus"], row["query_class"], measure)
                iv = bounds.get(key, {})
                table.append({
                    "run_id": ids[name], "control_name": name, "created_at": len(ids),
                    "corpus": row["corpus"], "tier": row["tier"],
                    "query_class": row["query_class"], "measure": measure, "value": value,
                    "n": row["n"], "queries_unanswered": row["queries_unanswered"],
                    "queries_dropped_unjudgeable": row["queries_dropped_unjudgeable"],
                    "lower": iv.get("lower"), "upper": iv.get("upper"),
                    "interval_method": iv.get("method"),
                    "confidence": iv.get("confidence")})
                if name == control:
                    control_values[key] = (value, row["n"], row["tier"])
        runs_info.append({
            "run_id": ids[name], "control_name": name,
            "metric_engine": doc["metric_engine"]["name"],
            "metric_engine_version": doc["metric_engine"]["version"],
            "embedding_model": None, "embedding_models": None, "backend": None,
            "mode": None, "stage": None, "code_revision": None,
            "relevance_policy": json.dumps(doc["relevance_policy"]),
            "granularity": (doc.get("retrieval") or {}).get("granularity"),
            "scope": (doc.get("retrieval") or {}).get("scope"),
            "retrieval": json.dumps(doc.get("retrieval") or {}),
            "corpora": [{k: c.get(k) for k in ("name", "version", "licence", "tier",
                                               "sha256")} for c in doc["corpora"]]})
    tests = {(r["arm"], r["corpus"], r["query_class"], r["measure"]): r
             for r in (comparisons or {}).get("rows", [])}
    for name in arms:
        notes = "; ".join(comparability_notes(evaluations[str(control)].metrics,
                                              evaluations[name].metrics))
        for r in table:
            key = (r["corpus"], r["query_class"], r["measure"])
            if r["control_name"] != name or key not in control_values:
                continue
            value, n, tier = control_values[key]
            # the stored test holds only for the queries both runs scored: as the
            # warehouse joins it, only when the arm scored as many as the control (and
            # the test as many); otherwise the delta stands alone (paired is False)
            paired = n == r["n"]
            test = tests.get((name, *key), {})
            if not paired or test.get("n", r["n"]) != r["n"]:
                test = {}
            deltas.append({
                "run_id": ids[name], "corpus": key[0], "query_class": key[1],
                "measure": key[2], "delta": r["value"] - value,
                "delta_lower": test.get("delta_lower"),
                "delta_upper": test.get("delta_upper"), "p_holm": test.get("p_holm"),
                "verdict": test.get("verdict"), "comparable": not notes,
                "not_comparable_because": notes, "paired": paired,
                "tier": most_restrictive_tier([tier, r["tier"], test.get("tier", tier)])})
    order = {ids[n]: i for i, n in enumerate(evaluations)}
    frame = pd.DataFrame(table)
    frame["created_at"] = frame["run_id"].map(order)
    filters = {"runs": list(ids.values()), "corpora": None,
               "classes": None if query_class is None else [query_class],
               "measures": list(measures) if measures else None}
    per_query = pd.DataFrame(
        [{"run_id": ids[name], "corpus": r["corpus"], "query_class": r["query_class"],
          "query_id": r["query_id"], "measure": r["measure"], "value": r["value"]}
         for name, e in evaluations.items() for r in e.per_query_rows
         if r["measure"] in measures],
        columns=["run_id", "corpus", "query_class", "query_id", "measure", "value"])
    return assemble(view, frame, pd.DataFrame(deltas) if arms else None, runs_info,
                    [(ids[n], n) for n in evaluations],
                    None if control is None else ids[control], filters,
                    None, caption=caption, label=label, columns=columns,
                    per_query=per_query if len(ids) > 1 else None,
                    tie_test=tied_with_best)


def latex_of(export) -> str:
    """The paste-ready LaTeX of an export (:func:`export_of`)."""
    from warehouse.render import render_latex

    return render_latex(export)
