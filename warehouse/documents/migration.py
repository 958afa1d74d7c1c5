"""Kind ``migration``: an embedding-model migration report (``python -m harness migrate``),
one row per evaluation tier (T0, T1) in ``migration_decisions`` (migration 004).

The report is validated by the harness's own ``harness.studies.embedding_migration.document.validate_document``
(kind, schema, licence tier, both models, every estimate inside its interval).
:func:`decisions` is the named read-only query the dashboard's Migration page loads.
"""

from __future__ import annotations

from typing import Mapping

from warehouse.documents import _common as c

KIND = "migration"
TABLE = "migration_decisions"

COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("eval_tier", "string"), ("headline", "bool"),
    ("old_model", "string"), ("old_label", "string"), ("old_dimension", "int32"),
    ("new_model", "string"), ("new_label", "string"), ("new_dimension", "int32"),
    ("situation", "string"), ("n_queries", "int32"), ("index_documents", "int32"),
    ("k", "int32"), ("oracle_recall", "double"),
    ("arr", "double"), ("arr_lower", "double"), ("arr_upper", "double"),
    ("old_retention", "double"), ("old_retention_lower", "double"),
    ("old_retention_upper", "double"),
    ("bridge_minus_old", "double"), ("bridge_minus_old_lower", "double"),
    ("bridge_minus_old_upper", "double"),
    ("unadapted", "double"), ("unadapted_lower", "double"), ("unadapted_upper", "double"),
    ("unadapted_reason", "string"),
    ("gain", "double"), ("gain_lower", "double"), ("gain_upper", "double"),
    ("adapter", "string"), ("adapter_parameters", "int64"),
    ("decision", "string"), ("rule", "string"), ("reason", "string"),
    ("flags", "string_list"), ("straddles", "string_list"),
    ("confidence", "double"), ("resamples", "int32"), ("seed", "int64"),
    ("corpus", "string"), ("tier", "string"), ("ingested_at", "timestamp")])

_QUANTITIES = ("arr", "old_retention", "bridge_minus_old", "unadapted", "gain")


def validate(doc, source) -> None:
    from harness.studies.embedding_migration.document import validate_document

    validate_document(doc, source)


def _spread(name: str, block: Mapping | None) -> dict:
    if block is None:
        return {name: None, f"{name}_lower": None, f"{name}_upper": None}
    return {name: block["estimate"], f"{name}_lower": block["lower"],
            f"{name}_upper": block["upper"]}


def rows(doc: Mapping, document_id: str) -> list[dict]:
    """The table rows of one (canonical) report, T0 before T1."""
    old, new = doc["models"]["old"], doc["models"]["new"]
    settings, adapter = doc["settings"], doc["adapter"]
    ingested_at = c.now()
    out = []
    for eval_tier in sorted(doc["tiers"]):
        t = doc["tiers"][eval_tier]
        d = t["decision"]
        row = {"document_id": document_id, "eval_tier": eval_tier,
               "headline": doc["decision"]["tier"] == eval_tier,
               "old_model": old["model_id"], "old_label": old["label"],
               "old_dimension": old["dimension"], "new_model": new["model_id"],
               "new_label": new["label"], "new_dimension": new["dimension"],
               "situation": doc["pair"].get("situation"), "n_queries": t["n"],
               "index_documents": t["index_documents"], "k": settings["k"],
               "oracle_recall": t["recall"]["oracle"],
               "unadapted_reason": t.get("unadapted_reason"),
               "adapter": adapter["chosen"], "adapter_parameters": adapter["parameters"],
               "decision": d["decision"], "rule": d["rule"], "reason": d["reason"],
               "flags": list(d["flags"]), "straddles": list(d["straddles"]),
               "confidence": settings["confidence"], "resamples": settings["resamples"],
               "seed": settings["seed"], "corpus": doc["corpus"], "tier": doc["tier"],
               "ingested_at": ingested_at}
        for name in _QUANTITIES:
            row.update(_spread(name, t.get(name)))
        out.append(row)
    return out


def ingest(conn, doc) -> None:
    doc = c.canonical(doc)
    document_id = c.content_id(doc)
    if c.already_stored(conn, TABLE, document_id):
        return
    c.insert(conn, TABLE, COLUMNS, rows(doc, document_id))
