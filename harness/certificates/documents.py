"""Certificate and PPI documents: their schema, validation, and canonical reading and writing.

Every document is canonical JSON with a ``kind`` field (``certificate`` or ``ppi``) so the
warehouse can ingest it; ``document_id`` is the sha256 of the canonical document without
that field, so the same inputs and seed give the same id and the same bytes.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Iterable, Mapping

from harness.core.canonical import canonical_json, sha256_text
from harness.core.formats import FormatError, read_json_object
from harness.core.tiers import TIERS

SCHEMA_VERSION = 1
KINDS: tuple[str, ...] = ("certificate", "ppi")
CERTIFICATE_STATUSES: tuple[str, ...] = ("valid", "degenerate")

_COMMON = ("kind", "schema_version", "document_id")
#: required fields per certificate type (beyond the common ones)
CERTIFICATE_FIELDS: dict[str, tuple[str, ...]] = {
    "coverage": ("type", "status", "reason", "method", "alpha", "k_max", "temperature",
                 "threshold", "tuning", "calibration", "fixed_k", "heldout", "seed", "splits",
                 "fingerprint", "tier", "sources"),
    "risk": ("type", "status", "reason", "method", "target", "delta", "lambda", "context_k",
             "calibration", "heldout", "seed", "splits", "fingerprint", "tier", "sources"),
}
PPI_FIELDS: tuple[str, ...] = ("method", "alpha", "estimate", "interval", "lambda", "judge_bias",
                               "effective_labels", "labelled", "unlabelled", "labels_only",
                               "judge_only", "inputs", "corpus", "tier")


def with_id(doc: Mapping) -> dict:
    """``doc`` with ``document_id`` = sha256 of its canonical form without the id."""
    body = {k: v for k, v in doc.items() if k != "document_id"}
    return {**body, "document_id": sha256_text(canonical_json(body))}


def _fail(source, field, message):
    raise FormatError(source, None, field, message)


def _number(doc, name, source, *, nullable=False, lo=-math.inf, hi=math.inf):
    value = doc.get(name)
    if value is None and nullable:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not lo <= value <= hi:
        _fail(source, name, f"must be a finite number in [{lo}, {hi}]"
                            f"{' or null' if nullable else ''}, got {value!r}")


def validate_document(doc: Mapping, source: str = "<document>") -> dict:
    """Refuse a certificate or PPI document that is incomplete or inconsistent, naming the field."""
    if not isinstance(doc, Mapping):
        _fail(source, None, "a document must be a JSON object")
    for name in _COMMON:
        if name not in doc:
            _fail(source, name, "missing")
    if doc["kind"] not in KINDS:
        _fail(source, "kind", f"unknown kind {doc['kind']!r}; expected one of {sorted(KINDS)}")
    if doc["schema_version"] != SCHEMA_VERSION:
        _fail(source, "schema_version",
              f"unsupported schema version {doc['schema_version']!r}; expected {SCHEMA_VERSION}")
    if doc["document_id"] != with_id(doc)["document_id"]:
        _fail(source, "document_id", "does not match the document's content (edited by hand?)")
    if doc["kind"] == "ppi":
        for name in PPI_FIELDS:
            if name not in doc:
                _fail(source, name, "missing")
        if doc["tier"] not in TIERS:
            _fail(source, "tier", f"unknown tier {doc['tier']!r}; expected one of {sorted(TIERS)}")
        _number(doc, "estimate", source)
        _number(doc, "lambda", source, lo=0, hi=1)
        return dict(doc)
    kind = doc.get("type")
    if kind not in CERTIFICATE_FIELDS:
        _fail(source, "type", f"unknown certificate type {kind!r}; expected one of "
                              f"{sorted(CERTIFICATE_FIELDS)}")
    for name in CERTIFICATE_FIELDS[kind]:
        if name not in doc:
            _fail(source, name, "missing")
    if doc["status"] not in CERTIFICATE_STATUSES:
        _fail(source, "status", f"unknown status {doc['status']!r}; expected one of "
                                f"{sorted(CERTIFICATE_STATUSES)}")
    if doc["tier"] not in TIERS:
        _fail(source, "tier", f"unknown tier {doc['tier']!r}; expected one of {sorted(TIERS)}")
    if kind == "coverage":
        _number(doc, "alpha", source, lo=0, hi=1)
        _number(doc, "temperature", source, lo=1e-10)
        _number(doc, "threshold", source, nullable=True, lo=0)
        if doc["status"] == "valid" and doc["threshold"] is None:
            _fail(source, "threshold", "a valid coverage certificate needs a threshold")
        # a degenerate one is sized at the maximum K (threshold >= 1 sends the whole list);
        # null in documents written before every draw issued a servable certificate
        if doc["status"] == "degenerate" and doc["threshold"] is not None and doc["threshold"] < 1:
            _fail(source, "threshold", "a degenerate coverage certificate is sized at the maximum "
                                       f"K (threshold >= 1, or null), got {doc['threshold']!r}")
    else:
        _number(doc, "target", source, lo=0, hi=1)
        _number(doc, "delta", source, lo=0, hi=1)
        _number(doc, "lambda", source, nullable=True)
        if (doc["status"] == "valid") != (doc["lambda"] is not None):
            _fail(source, "lambda", "must be a number exactly when the status is valid")
    return dict(doc)


def load_document(path) -> dict:
    """Read and validate a certificate or PPI document."""
    return validate_document(read_json_object(path), str(path))


def load_certificate(path) -> dict:
    doc = load_document(path)
    if doc["kind"] != "certificate":
        raise FormatError(path, None, "kind", f"expected a certificate, got kind {doc['kind']!r}")
    return doc


def write_document(path, doc: Mapping, *, flag: str = "--out",
                   inputs: Iterable[tuple[str, object]] = ()) -> Path:
    """Validate ``doc`` and write it as canonical JSON, atomically, replacing only an empty
    file or a document of the same kind (:mod:`harness.core.outputs`); ``path`` must not be
    one of ``inputs``."""
    from harness.core.outputs import is_document, write_file

    validate_document(doc, str(path))
    kind = str(doc["kind"])
    return write_file(path, canonical_json(dict(doc)), recognise=is_document(kind),
                      what=f"{kind} document", flag=flag, inputs=inputs)

