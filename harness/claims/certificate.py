"""The certificate claim (``harness calibrate``): a coverage certificate (conformal context
size) or a risk certificate (abstention threshold), with the fingerprint of what it was
calibrated on and the runs it came from (docs/certificates.md).

``document_id`` is the sha256 of the canonical document without that field
(:func:`with_id`), so the same inputs and seed give the same id and the same bytes, and a
hand edit is caught.  The status stored is the one it was issued with; expiry and alarms
are judged against the run served now (``harness.certificates.status``).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, ClassVar, Mapping

from harness.claims import base as b
from harness.core.canonical import canonical_json, canonical_line, sha256_text

SCHEMA_VERSION = 1
STATUSES: tuple[str, ...] = ("valid", "degenerate")
#: required fields per certificate type (beyond kind, schema_version, document_id)
TYPE_FIELDS: dict[str, tuple[str, ...]] = {
    "coverage": ("type", "status", "reason", "method", "alpha", "k_max", "temperature",
                 "threshold", "tuning", "calibration", "fixed_k", "heldout", "seed", "splits",
                 "fingerprint", "tier", "sources"),
    "risk": ("type", "status", "reason", "method", "target", "delta", "lambda", "context_k",
             "calibration", "heldout", "seed", "splits", "fingerprint", "tier", "sources"),
}

COLUMNS: b.Columns = (
    ("document_id", "string"), ("certificate_id", "string"), ("type", "string"),
    ("status", "string"), ("alpha", "double"), ("target", "double"), ("delta", "double"),
    ("threshold", "double"), ("temperature", "double"), ("context_k", "int32"),
    ("k_max", "int32"), ("split_tune", "int32"), ("split_calibrate", "int32"),
    ("split_heldout", "int32"), ("seed", "int64"), ("heldout_n", "int32"),
    ("heldout_rate", "double"), ("heldout_lower", "double"), ("heldout_upper", "double"),
    ("mean_set_size", "double"), ("fixed_k", "int32"), ("answer_rate", "double"),
    ("queries_needed", "int64"), ("stage", "string"), ("fingerprint", "string"),
    ("source_runs", "string_list"), ("corpus", "string"), ("tier", "string"),
    ("reason", "string"), ("ingested_at", "timestamp"))


def with_id(doc: Mapping[str, Any]) -> b.JSON:
    """``doc`` with ``document_id`` = sha256 of its canonical form without the id."""
    body = {k: v for k, v in doc.items() if k != "document_id"}
    return {**body, "document_id": sha256_text(canonical_json(body))}


def check_id(doc: Mapping[str, Any], source: b.SourceName) -> None:
    b.need(doc, ("document_id",), source)
    if doc["document_id"] != with_id(doc)["document_id"]:
        b.fail(source, "document_id", "does not match the document's content (edited by hand?)")


def _pair(value: object) -> tuple[float | None, float | None]:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return value[0], value[1]
    return None, None


def certificate_row(doc: Mapping[str, Any]) -> b.JSON:
    held = doc.get("heldout") or {}
    splits = doc.get("splits") or {}
    coverage = doc["type"] == "coverage"
    rate = held.get("coverage") if coverage else held.get("risk")
    lower, upper = _pair(held.get("coverage_interval") if coverage else held.get("risk_interval"))
    names = [x["name"] for x in doc["fingerprint"]["corpora"]]
    return {
        "certificate_id": doc["document_id"], "type": doc["type"], "status": doc["status"],
        "alpha": doc.get("alpha"), "target": doc.get("target"), "delta": doc.get("delta"),
        "threshold": doc.get("threshold") if coverage else doc.get("lambda"),
        "temperature": doc.get("temperature"), "context_k": doc.get("context_k"),
        "k_max": doc.get("k_max"), "split_tune": splits.get("tune"),
        "split_calibrate": splits.get("calibrate"), "split_heldout": splits.get("heldout"),
        "seed": doc["seed"], "heldout_n": held.get("n"), "heldout_rate": rate,
        "heldout_lower": lower, "heldout_upper": upper,
        "mean_set_size": held.get("mean_set_size") if coverage else None,
        "fixed_k": (doc.get("fixed_k") or {}).get("k") if coverage else None,
        "answer_rate": None if coverage else held.get("answer_rate"),
        "queries_needed": (None if coverage
                           else (doc.get("calibration") or {}).get("queries_needed")),
        "stage": doc.get("stage") or doc["fingerprint"].get("stage"),
        "fingerprint": canonical_line(doc["fingerprint"]),
        "source_runs": sorted({s["run_id"] for s in doc["sources"]}),
        "corpus": b.pooled_corpus(names) if names else "-",
        "tier": doc["tier"], "reason": doc["reason"],
    }


@dataclasses.dataclass(frozen=True)
class CertificateClaim(b.Claim):
    KIND: ClassVar[str] = "certificate"
    TABLES: ClassVar[Mapping[str, b.Columns]] = {"certificates": COLUMNS}

    document_id: str
    type: str
    status: str
    reason: str
    method: str
    seed: int
    splits: Mapping[str, Any]
    fingerprint: Mapping[str, Any]
    tier: str
    sources: list[b.JSON]
    calibration: Any
    heldout: Any
    kind: str = "certificate"
    schema_version: int = SCHEMA_VERSION
    stage: Any = b.ABSENT
    alpha: Any = b.ABSENT
    k_max: Any = b.ABSENT
    temperature: Any = b.ABSENT
    threshold: Any = b.ABSENT
    sizing: Any = b.ABSENT
    tuning: Any = b.ABSENT
    fixed_k: Any = b.ABSENT
    target: Any = b.ABSENT
    delta: Any = b.ABSENT
    lambda_: Any = dataclasses.field(default=b.ABSENT, metadata={"key": "lambda"})
    context_k: Any = b.ABSENT
    loss: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        check_id(doc, source)
        kind = doc.get("type")
        if kind not in TYPE_FIELDS:
            b.fail(source, "type", f"unknown certificate type {kind!r}; expected one of "
                                   f"{sorted(TYPE_FIELDS)}")
        b.need(doc, TYPE_FIELDS[kind], source)
        b.choice(doc["status"], STATUSES, source, "status")
        b.tier(doc["tier"], source)
        if kind == "coverage":
            b.number(doc["alpha"], source, "alpha", lo=0, hi=1)
            b.number(doc["temperature"], source, "temperature", lo=1e-10)
            b.number(doc["threshold"], source, "threshold", nullable=True, lo=0)
            if doc["status"] == "valid" and doc["threshold"] is None:
                b.fail(source, "threshold", "a valid coverage certificate needs a threshold")
            # a degenerate one is sized at the maximum K (threshold >= 1 sends the whole
            # list); null in documents written before every draw issued a certificate
            if doc["status"] == "degenerate" and doc["threshold"] is not None \
                    and doc["threshold"] < 1:
                b.fail(source, "threshold", "a degenerate coverage certificate is sized at "
                                            "the maximum K (threshold >= 1, or null), got "
                                            f"{doc['threshold']!r}")
        else:
            b.number(doc["target"], source, "target", lo=0, hi=1)
            b.number(doc["delta"], source, "delta", lo=0, hi=1)
            b.number(doc["lambda"], source, "lambda", nullable=True)
            if (doc["status"] == "valid") != (doc["lambda"] is not None):
                b.fail(source, "lambda", "must be a number exactly when the status is valid")
        fingerprint = b.mapping(doc["fingerprint"], source, "fingerprint")
        corpora = b.seq(fingerprint.get("corpora"), source, "fingerprint.corpora")
        for i, corpus in enumerate(corpora):
            b.text(b.mapping(corpus, source, f"fingerprint.corpora[{i}]").get("name"), source,
                   f"fingerprint.corpora[{i}].name")
        for i, s in enumerate(b.seq(doc["sources"], source, "sources")):
            b.run_id_value(b.mapping(s, source, f"sources[{i}]").get("run_id"), source,
                           f"sources[{i}].run_id")

    def referenced_runs(self) -> tuple[str, ...]:
        return tuple(sorted({s["run_id"] for s in self.sources}))

    def corpus_label(self) -> str:
        names = [x["name"] for x in self.fingerprint["corpora"]]
        return b.pooled_corpus(names) if names else "-"

    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> b.TableRows:
        return {"certificates": [{"document_id": document_id, **certificate_row(self.to_dict()),
                                  "ingested_at": stamp}]}
