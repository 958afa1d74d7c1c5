"""Exporting the metric table: publishable tables hold tier-A rows only, or nothing.

A ``publishable`` export refuses (with the offending corpora, tiers, licences and runs)
whenever the filters select any row the publishable view withholds, rather than quietly
dropping it: a published table must be the whole table that was asked for.  Every export
carries its provenance: run ids, metric engine and version, embedding model, code
revision, and each corpus's version, licence, tier and checksum.  Exports contain no
timestamps, so the same warehouse and filters give the same bytes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.core.measures import MEASURES
from harness.claims.metrics import ALL
from warehouse import queries, schema
from warehouse.db import connect
from warehouse.errors import ExportRefused
from warehouse.render import RENDERERS

ID_COLUMNS = ("run", "run_id", "corpus", "tier", "class", "n")
COUNT_COLUMNS = ("unanswered", "dropped")


@dataclass(frozen=True)
class Export:
    """A wide metric table (one row per run x corpus x class) and its provenance."""

    view: str
    table: Any  # pandas DataFrame
    provenance: dict


def measure_order(names) -> list[str]:
    """Known measures in the harness's order, file-level (``file:``) after their kin,
    unknown names last, alphabetically."""
    known = list(MEASURES)

    def key(name: str):
        base = name.split(":", 1)[1] if name.startswith("file:") else name
        return (base not in MEASURES, name.startswith("file:"),
                known.index(base) if base in MEASURES else 0, name)

    return sorted(set(names), key=key)


def wide(long_table):
    """Pivot :func:`warehouse.queries.metric_table` rows to one column per measure."""
    import pandas as pd

    if long_table.empty:
        return pd.DataFrame(columns=[*ID_COLUMNS, *COUNT_COLUMNS])
    keys = ["created_at", "run_id", "control_name", "corpus", "tier", "query_class", "n",
            "queries_unanswered", "queries_dropped_unjudgeable"]
    table = long_table.pivot_table(index=keys, columns="measure", values="value",
                                   aggfunc="first", sort=False).reset_index()
    table["_all"] = table["query_class"] == ALL
    table = table.sort_values(["created_at", "run_id", "corpus", "_all", "query_class"],
                              kind="stable")
    measures = measure_order(long_table["measure"].unique())
    out = pd.DataFrame({
        "run": table["control_name"], "run_id": table["run_id"], "corpus": table["corpus"],
        "tier": table["tier"], "class": table["query_class"], "n": table["n"].astype("int64"),
    })
    for m in measures:
        out[m] = table[m].astype("float64")
    out["unanswered"] = table["queries_unanswered"].astype("int64")
    out["dropped"] = table["queries_dropped_unjudgeable"].astype("int64")
    return out.reset_index(drop=True)


def _refusal(withheld, publishable_corpora) -> str:
    parts = []
    for row in withheld.itertuples(index=False):
        listed = [n for n in (row.not_publishable if row.not_publishable is not None else [])
                  if n is not None]
        why = ", ".join(listed) if listed else "a contributing corpus is not recorded as tier A"
        parts.append(f"{row.corpus} (tier {row.tier}; {why}; runs "
                     f"{[r[:12] for r in row.run_ids]})")
    return ("refused: a publishable export may contain tier-A rows only, and these filters "
            f"select rows from corpora that are not, or from runs whose shared index holds a "
            f"corpus that is not: {'; '.join(parts)}. Narrow the export with --corpus to "
            f"tier-A corpora ({publishable_corpora or 'none match'}) and --run to runs whose "
            "every corpus is tier A, or use --view internal (never published).")


def build_export(view: str, runs=None, corpora=None, classes=None, measures=None, *,
                 db_path=None) -> Export:
    """The table and provenance of an export (one read-only snapshot)."""
    queries.relation(view, "metric_rows")
    filters = {"runs": runs, "corpora": corpora, "classes": classes, "measures": measures}
    with connect(db_path, read_only=True) as conn:
        resolved = queries.resolve_runs(conn, runs)
        if view == "publishable":
            withheld = queries.fetch_withheld(conn, resolved, corpora, classes, measures)
            if len(withheld):
                allowed = queries.fetch_metric_table(conn, view, resolved, corpora, classes,
                                                     measures)
                raise ExportRefused(_refusal(withheld, sorted(set(allowed["corpus"]))))
        long_table = queries.fetch_metric_table(conn, view, resolved, corpora, classes, measures)
        if long_table.empty:
            raise ExportRefused(f"nothing to export: no {view} metric rows match "
                                f"{ {k: v for k, v in filters.items() if v} or 'the warehouse'}")
        if view == "publishable" and set(long_table["tier"]) != {"A"}:
            raise ExportRefused("refused: a non-A row reached a publishable export")
        run_ids = sorted(set(long_table["run_id"]))
        runs_info = queries.run_provenance(conn, run_ids)
        version = schema.check(conn)
    names = {name for corpus in set(long_table["corpus"]) for name in corpus.split("+")}
    corpora_info = sorted(
        {json.dumps(c, sort_keys=True) for r in runs_info for c in r["corpora"]
         if c["name"] in names})
    table = wide(long_table)
    provenance = {
        "view": view,
        "rows": int(len(table)),
        "values": int(len(long_table)),
        "schema_version": version,
        "filters": {k: queries.as_list(v) or [] for k, v in
                    {"runs": resolved, "corpora": corpora, "classes": classes,
                     "measures": measures}.items()},
        "runs": [{
            "run_id": r["run_id"], "control_name": r["control_name"],
            "metric_engine": r["metric_engine"], "metric_engine_version": r["metric_engine_version"],
            "embedding_model": r["embedding_model"] or (
                json.loads(r["embedding_models"]) if r["embedding_models"] else None),
            "backend": r["backend"], "mode": r["mode"], "stage": r["stage"],
            "code_revision": r["code_revision"],
            "relevance_policy": json.loads(r["relevance_policy"]),
        } for r in runs_info],
        "corpora": [json.loads(c) for c in corpora_info],
    }
    return Export(view, table, provenance)


def render(export: Export, fmt: str):
    """``str`` for csv / md / latex, ``bytes`` for parquet."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {sorted(RENDERERS)}")
    return RENDERERS[fmt](export.table, export.provenance)


def export_table(view: str, fmt: str, runs=None, corpora=None, classes=None, measures=None, *,
                 db_path=None):
    """The metric table under ``view`` as ``fmt`` (csv, md, latex: str; parquet: bytes),
    provenance included.  A publishable export raises
    :class:`~warehouse.errors.ExportRefused` naming the corpora it would have to include."""
    if fmt not in RENDERERS:
        raise ValueError(f"unknown export format {fmt!r}; expected one of {sorted(RENDERERS)}")
    return render(build_export(view, runs, corpora, classes, measures, db_path=db_path), fmt)
