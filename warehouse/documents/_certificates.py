"""Checking and storing certificates, PPI results and calibration records
(docs/certificates.md).  Certificates and PPI documents are validated by the harness's own
``harness.certificates.documents.validate_document`` (which also checks the document's id
against its content); the columns here are what the dashboard lists."""

from __future__ import annotations

from typing import Mapping

from harness.core.canonical import canonical_line
from warehouse.documents import _common as c

CERTIFICATE_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("certificate_id", "string"), ("type", "string"),
    ("status", "string"), ("alpha", "double"), ("target", "double"), ("delta", "double"),
    ("threshold", "double"), ("temperature", "double"), ("context_k", "int32"),
    ("k_max", "int32"), ("split_tune", "int32"), ("split_calibrate", "int32"),
    ("split_heldout", "int32"), ("seed", "int64"), ("heldout_n", "int32"),
    ("heldout_rate", "double"), ("heldout_lower", "double"), ("heldout_upper", "double"),
    ("mean_set_size", "double"), ("fixed_k", "int32"), ("answer_rate", "double"),
    ("queries_needed", "int64"), ("stage", "string"), ("fingerprint", "string"),
    ("source_runs", "string_list"), ("corpus", "string"), ("tier", "string"),
    ("reason", "string"), ("ingested_at", "timestamp")])

PPI_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("ppi_id", "string"), ("method", "string"), ("alpha", "double"),
    ("estimate", "double"), ("lower", "double"), ("upper", "double"), ("lambda_value", "double"),
    ("judge_bias", "double"), ("effective_labels", "double"), ("labelled", "int64"),
    ("unlabelled", "int64"), ("labels_only_estimate", "double"),
    ("labels_only_lower", "double"), ("labels_only_upper", "double"),
    ("judge_only_estimate", "double"), ("judge_sha256", "string"), ("labels_sha256", "string"),
    ("corpus", "string"), ("tier", "string"), ("licence", "string"),
    ("ingested_at", "timestamp")])

CALIBRATION_COLUMNS = c.arrow_schema([
    ("run_id", "string"), ("corpus", "string"), ("tier", "string"), ("query_id", "string"),
    ("query_class", "string"), ("stage", "string"), ("first_relevant_rank", "int32"),
    ("top_score", "double"), ("candidates", "int32"), ("scores", "double_list"),
    ("relevant", "bool_list")])


def validate_certificate_or_ppi(doc, source, kind: str) -> None:
    from harness.certificates.documents import validate_document

    validate_document(doc, source)  # FormatError is a ValueError naming source and field
    if doc["kind"] != kind:
        c.fail(source, "kind", f"expected {kind!r}, got {doc['kind']!r}")
    if kind == "ppi":
        _check_ppi_licence(doc, source)
    if kind == "certificate":
        fingerprint = c.mapping(doc["fingerprint"], source, "fingerprint")
        corpora = c.seq(fingerprint.get("corpora"), source, "fingerprint.corpora")
        for i, corpus in enumerate(corpora):
            c.text(c.mapping(corpus, source, f"fingerprint.corpora[{i}]").get("name"), source,
                   f"fingerprint.corpora[{i}].name")
        for i, s in enumerate(c.seq(doc["sources"], source, "sources")):
            c.text(c.mapping(s, source, f"sources[{i}]").get("run_id"), source,
                   f"sources[{i}].run_id")


def _check_ppi_licence(doc, source) -> None:
    """A PPI result names no run, so its tier rests on the licence it declares: tier A
    needs a publishable ``licence`` (``harness ppi --licence``) and a named corpus."""
    from harness.core.tiers import PUBLISHABLE_LICENCES

    licence = doc.get("licence")
    if licence is not None and not isinstance(licence, str):
        c.fail(source, "licence", f"must be a licence id (SPDX) or absent, got {licence!r}")
    if doc["tier"] != "A":
        return
    if licence not in PUBLISHABLE_LICENCES:
        c.fail(source, "tier", f"tier A needs a publishable licence, but the document declares "
                               f"licence {licence!r}; publishable: {sorted(PUBLISHABLE_LICENCES)} "
                               "(doubt fails closed: tier B)")
    if not doc.get("corpus"):
        c.fail(source, "corpus", "tier A needs the corpus named")


def _pair(value) -> tuple[float | None, float | None]:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return value[0], value[1]
    return None, None


def certificate_row(doc: Mapping) -> dict:
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
        "corpus": c.pooled_corpus(names) if names else "-",
        "tier": doc["tier"], "reason": doc["reason"],
    }


def store_certificate(conn, doc) -> int:
    doc = c.canonical(doc)
    doc_id = c.content_id(doc)
    if c.already_stored(conn, "certificates", doc_id):
        return 0
    return c.insert(conn, "certificates", CERTIFICATE_COLUMNS,
                    [{"document_id": doc_id, **certificate_row(doc), "ingested_at": c.now()}])


def store_ppi(conn, doc) -> int:
    doc = c.canonical(doc)
    doc_id = c.content_id(doc)
    if c.already_stored(conn, "ppi", doc_id):
        return 0
    lower, upper = _pair(doc.get("interval"))
    labels_only = doc.get("labels_only") or {}
    lo_lower, lo_upper = _pair(labels_only.get("interval"))
    inputs = doc.get("inputs") or {}
    return c.insert(conn, "ppi", PPI_COLUMNS, [{
        "document_id": doc_id, "ppi_id": doc["document_id"], "method": str(doc["method"]),
        "alpha": doc["alpha"], "estimate": doc["estimate"], "lower": lower, "upper": upper,
        "lambda_value": doc["lambda"], "judge_bias": doc.get("judge_bias"),
        "effective_labels": doc.get("effective_labels"), "labelled": doc["labelled"],
        "unlabelled": doc["unlabelled"], "labels_only_estimate": labels_only.get("estimate"),
        "labels_only_lower": lo_lower, "labels_only_upper": lo_upper,
        "judge_only_estimate": (doc.get("judge_only") or {}).get("estimate"),
        "judge_sha256": inputs.get("judge_sha256"), "labels_sha256": inputs.get("labels_sha256"),
        "corpus": doc.get("corpus"), "tier": doc["tier"], "licence": doc.get("licence"),
        "ingested_at": c.now()}])


def validate_calibration(content, source, metrics: Mapping) -> None:
    """Each line as ``harness.certificates.data`` reads it, its corpus and tier as
    metrics.json declares them, one stage (the run's), no query twice."""
    from harness.certificates.data import validate_row

    rows = c.seq(content, source, None)
    if not rows:
        c.fail(source, None, "holds no calibration row")
    from harness.claims.metrics import effective_tiers

    tiers = effective_tiers(metrics)  # a bench run's rows: as restrictive as its shared index
    stage = (metrics.get("retrieval") or {}).get("stage")
    seen: dict[tuple[str, str], int] = {}
    first_stage = None
    for i, obj in enumerate(rows, start=1):
        row = validate_row(obj, source, i)
        if row.corpus not in tiers:
            c.fail(f"{source}:{i}", "corpus", f"{row.corpus!r} is not listed in metrics.json "
                                              f"corpora {sorted(tiers)}")
        if row.tier != tiers[row.corpus]:
            c.fail(f"{source}:{i}", "tier", f"tier {row.tier!r} disagrees with metrics.json, "
                                            f"where corpus {row.corpus!r} is tier "
                                            f"{tiers[row.corpus]}")
        key = (row.corpus, row.query_id)
        if key in seen:
            c.fail(f"{source}:{i}", "query_id", f"query {row.query_id!r} of corpus "
                                                f"{row.corpus!r} repeats line {seen[key]}")
        seen[key] = i
        first_stage = first_stage or row.stage
        if row.stage != first_stage or (stage is not None and row.stage != stage):
            c.fail(f"{source}:{i}", "stage", f"stage {row.stage!r} differs from the run's "
                                             f"{stage or first_stage!r}")


def store_calibration(conn, run_id: str, content) -> int:
    content = c.canonical(content)
    if conn.query_one("SELECT 1 FROM calibration WHERE run_id = ? LIMIT 1", [run_id]):
        return 0
    return c.insert(conn, "calibration", CALIBRATION_COLUMNS, [{
        "run_id": run_id, "corpus": r["corpus"], "tier": r["tier"], "query_id": r["query_id"],
        "query_class": r["query_class"], "stage": r["stage"],
        "first_relevant_rank": r["first_relevant_rank"],
        "top_score": float(r["scores"][0]) if r["scores"] else None,
        "candidates": len(r["scores"]), "scores": [float(x) for x in r["scores"]],
        "relevant": [bool(x) for x in r["relevant"]]} for r in content])
