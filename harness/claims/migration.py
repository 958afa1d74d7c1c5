"""The migration claim (``migration.json``, ``harness migrate``): an embedding-model
migration decision from adapted recall retention at T0 (text-level) and T1 (judged queries),
with intervals, against the real alternative (docs/migration.md).  One row per evaluation
tier (T0, T1) in ``migration_decisions``.

The decisions a report may reach and the thresholds it records are defined here; the study
that reaches them is :mod:`harness.studies.embedding_migration`.  The corpus's tier is
recomputed from its licence (:func:`harness.claims.metrics.check_corpus_licence`).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, ClassVar, Mapping

from harness.claims import base as b
from harness.claims.metrics import check_corpus_licence
from harness.core.tiers import most_restrictive_tier

KIND = "migration"
SCHEMA_VERSION = 1
#: evaluation tiers: T0 text-level retention, T1 judged queries (not licence tiers)
EVAL_TIERS: tuple[str, ...] = ("T0", "T1")
#: every decision, from "do nothing" to "re-index everything"
DECISIONS: tuple[str, ...] = ("equivalent_drop_in", "no_upgrade_needed", "bridge_sufficient",
                              "bridge_and_migrate", "caution", "full_reindex")
QUANTITIES = ("arr", "old_retention", "bridge_minus_old", "unadapted", "gain")
#: the drop-in comparison (top-k overlap, nDCG NEW - OLD): optional, absent in older reports
EQUIVALENCE = ("overlap", "ndcg_delta")

COLUMNS: b.Columns = (
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
    ("corpus", "string"), ("tier", "string"), ("ingested_at", "timestamp"))



def _interval(value: object, source: b.SourceName, where: str, *, nullable: bool = False) -> None:
    if value is None and nullable:
        return
    block = b.mapping(value, source, where)
    for key in ("estimate", "lower", "upper"):
        b.number(block.get(key), source, f"{where}.{key}")
    if not b.within(block["estimate"], block["lower"], block["upper"]):
        b.fail(source, where, f"the estimate {block['estimate']} lies outside its own "
                              f"interval [{block['lower']}, {block['upper']}]")


def _spread(name: str, block: Mapping[str, Any] | None) -> b.JSON:
    if block is None:
        return {name: None, f"{name}_lower": None, f"{name}_upper": None}
    return {name: block["estimate"], f"{name}_lower": block["lower"],
            f"{name}_upper": block["upper"]}


def decision_rows(doc: Mapping[str, Any], document_id: str, stamp: datetime) -> list[b.JSON]:
    """The table rows of one (canonical) report, T0 before T1."""
    old, new = doc["models"]["old"], doc["models"]["new"]
    settings, adapter = doc["settings"], doc["adapter"]
    out = []
    for eval_tier in sorted(doc["tiers"]):
        t = doc["tiers"][eval_tier]
        d = t["decision"]
        row: b.JSON = {"document_id": document_id, "eval_tier": eval_tier,
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
               "ingested_at": stamp}
        for name in QUANTITIES:
            row.update(_spread(name, t.get(name)))
        out.append(row)
    return out


def _check_drop_in(block: Mapping[str, Any], thresholds: Mapping[str, Any],
                   source: b.SourceName, where: str) -> None:
    """An ``equivalent_drop_in`` decision must be what its own numbers and thresholds give:
    mean overlap at least ``drop_in_overlap``, |nDCG difference| at most ``drop_in_ndcg``,
    the difference's interval containing 0."""
    for key in ("drop_in_overlap", "drop_in_ndcg"):
        if key not in thresholds:
            b.fail(source, f"thresholds.{key}", "an equivalent_drop_in decision needs it")
    for q in EQUIVALENCE:
        if block.get(q) is None:
            b.fail(source, f"{where}.{q}", "an equivalent_drop_in decision needs it measured")
    overlap, delta = block["overlap"], block["ndcg_delta"]
    if overlap["estimate"] < thresholds["drop_in_overlap"]:
        b.fail(source, f"{where}.overlap.estimate",
               f"{overlap['estimate']} is below drop_in_overlap "
               f"{thresholds['drop_in_overlap']}: not a drop-in")
    if abs(delta["estimate"]) > thresholds["drop_in_ndcg"]:
        b.fail(source, f"{where}.ndcg_delta.estimate",
               f"|{delta['estimate']}| exceeds drop_in_ndcg {thresholds['drop_in_ndcg']}: "
               "not a drop-in")
    if not delta["lower"] <= 0.0 <= delta["upper"]:
        b.fail(source, f"{where}.ndcg_delta",
               f"the interval [{delta['lower']}, {delta['upper']}] excludes 0: not a drop-in")


@dataclasses.dataclass(frozen=True)
class MigrationClaim(b.Claim):
    KIND: ClassVar[str] = KIND
    TABLES: ClassVar[Mapping[str, b.Columns]] = {"migration_decisions": COLUMNS}

    corpus: str
    tier: str
    corpora: list[b.JSON]
    models: Mapping[str, Any]
    tiers: Mapping[str, Any]
    decision: Mapping[str, Any]
    thresholds: Mapping[str, Any]
    kind: str = KIND
    schema_version: int = SCHEMA_VERSION
    pair: Any = b.ABSENT
    settings: Any = b.ABSENT
    split: Any = b.ABSENT
    adapter: Any = b.ABSENT
    caveats: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        """Kind, schema, corpus and licence tier (never laxer than the licence gives), both
        models, every evaluation tier's quantities (each estimate inside its interval) and
        decision, the headline, the thresholds."""
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        b.text(doc.get("corpus"), source, "corpus")
        claimed = b.tier(doc.get("tier"), source)
        corpora = b.seq(doc.get("corpora"), source, "corpora")
        if not corpora:
            b.fail(source, "corpora", "must list the corpus with its provenance")
        seen = [check_corpus_licence(b.mapping(c, source, f"corpora[{i}]"), source,
                                     f"corpora[{i}]") for i, c in enumerate(corpora)]
        if most_restrictive_tier(seen) != claimed:
            b.fail(source, "tier", f"{claimed!r} is not the most restrictive tier of its "
                                   f"corpora {sorted(seen)}")
        models = b.mapping(doc.get("models"), source, "models")
        for side in ("old", "new"):
            model = b.mapping(models.get(side), source, f"models.{side}")
            for key in ("model_id", "weights_sha256", "label"):
                b.text(model.get(key), source, f"models.{side}.{key}")
            b.integer(model.get("dimension"), source, f"models.{side}.dimension", lo=1)
        tiers = b.mapping(doc.get("tiers"), source, "tiers")
        if not tiers or set(tiers) - set(EVAL_TIERS):
            b.fail(source, "tiers", f"must hold some of {list(EVAL_TIERS)}, got {sorted(tiers)}")
        for name, block in sorted(tiers.items()):
            where = f"tiers.{name}"
            block = b.mapping(block, source, where)
            b.integer(block.get("n"), source, f"{where}.n", lo=1)
            for q in QUANTITIES:
                _interval(block.get(q), source, f"{where}.{q}",
                          nullable=q == "unadapted" or (q == "gain" and name == "T0"))
            if name == "T1" and block.get("gain") is None:
                b.fail(source, f"{where}.gain", "T1 measures the upgrade gain")
            for q in EQUIVALENCE:
                _interval(block.get(q), source, f"{where}.{q}", nullable=True)
            decision = b.mapping(block.get("decision"), source, f"{where}.decision")
            b.choice(decision.get("decision"), DECISIONS, source, f"{where}.decision.decision")
            for key in ("flags", "straddles"):
                if not isinstance(decision.get(key), list) or decision[key] != sorted(decision[key]):
                    b.fail(source, f"{where}.decision.{key}", "must be a sorted list")
        headline = b.mapping(doc.get("decision"), source, "decision")
        if headline.get("tier") not in tiers:
            b.fail(source, "decision.tier", f"{headline.get('tier')!r} is not a measured tier")
        if headline.get("decision") != tiers[headline["tier"]]["decision"]["decision"]:
            b.fail(source, "decision.decision", "differs from its tier's decision")
        thresholds = b.mapping(doc.get("thresholds"), source, "thresholds")
        if not thresholds:
            b.fail(source, "thresholds", "must record the thresholds the decision used")
        for key, value in thresholds.items():
            b.number(value, source, f"thresholds.{key}")
        for name, block in sorted(tiers.items()):
            if block["decision"]["decision"] == "equivalent_drop_in":
                _check_drop_in(block, thresholds, source, f"tiers.{name}")


    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> b.TableRows:
        return {"migration_decisions": decision_rows(self.to_dict(), document_id, stamp)}
