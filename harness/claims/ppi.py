"""The PPI claim (``harness ppi --out``): a judge-corrected mean by prediction-powered
inference (Angelopoulos et al., Science 2023; PPI++, Angelopoulos, Duchi & Zrnic 2023) with
its interval, the labels-only and judge-only figures beside it (docs/certificates.md).

A PPI result names no run, so its tier rests on the licence it declares: never laxer than
that licence gives (a registered corpus name keeps its registry tier), and tier A needs the
corpus named.  ``document_id`` is checked against the content (:func:`with_id`).
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, ClassVar, Mapping

from harness.claims import base as b
from harness.claims.certificate import SCHEMA_VERSION, check_id
from harness.core.corpus_names import CorpusNameError
from harness.core.tiers import (PUBLISHABLE_LICENCES, UNKNOWN_LICENCE, licence_tier,
                                tier_for_licence)

FIELDS: tuple[str, ...] = ("method", "alpha", "estimate", "interval", "lambda", "judge_bias",
                           "effective_labels", "labelled", "unlabelled", "labels_only",
                           "judge_only", "inputs", "corpus", "tier")

COLUMNS: b.Columns = (
    ("document_id", "string"), ("ppi_id", "string"), ("method", "string"), ("alpha", "double"),
    ("estimate", "double"), ("lower", "double"), ("upper", "double"), ("lambda_value", "double"),
    ("judge_bias", "double"), ("effective_labels", "double"), ("labelled", "int64"),
    ("unlabelled", "int64"), ("labels_only_estimate", "double"),
    ("labels_only_lower", "double"), ("labels_only_upper", "double"),
    ("judge_only_estimate", "double"), ("judge_sha256", "string"), ("labels_sha256", "string"),
    ("corpus", "string"), ("tier", "string"), ("licence", "string"),
    ("ingested_at", "timestamp"))


def _pair(value: object) -> tuple[float | None, float | None]:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return value[0], value[1]
    return None, None


@dataclasses.dataclass(frozen=True)
class PpiClaim(b.Claim):
    KIND: ClassVar[str] = "ppi"
    TABLES: ClassVar[Mapping[str, b.Columns]] = {"ppi": COLUMNS}

    document_id: str
    method: str
    alpha: float
    estimate: float
    interval: list[float]
    lambda_: float = dataclasses.field(metadata={"key": "lambda"})
    judge_bias: Any = None
    effective_labels: Any = None
    labelled: int = 0
    unlabelled: int = 0
    labels_only: Any = None
    judge_only: Any = None
    inputs: Any = None
    corpus: Any = None
    tier: str = "B"
    kind: str = "ppi"
    schema_version: int = SCHEMA_VERSION
    licence: Any = b.ABSENT
    evidence: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        check_id(doc, source)
        b.need(doc, FIELDS, source)
        claimed = b.tier(doc["tier"], source)
        b.number(doc["alpha"], source, "alpha", lo=0, hi=1)
        est = b.number(doc["estimate"], source, "estimate")
        b.number(doc["lambda"], source, "lambda", lo=0, hi=1)
        lo, hi = _pair(doc["interval"])
        if lo is not None and hi is not None:
            lo = b.number(lo, source, "interval[0]")
            hi = b.number(hi, source, "interval[1]")
            if not b.within(est, lo, hi):
                b.fail(source, "estimate", f"{est!r} lies outside its own interval "
                                           f"[{lo!r}, {hi!r}]")
        licence = doc.get("licence")
        if licence is not None and (not isinstance(licence, str) or not licence):
            b.fail(source, "licence", f"must be a licence id (SPDX) or absent, got {licence!r}")
        corpus = doc.get("corpus")
        if claimed == "A" and tier_for_licence(licence or UNKNOWN_LICENCE) != "A":
            b.fail(source, "tier", f"tier A needs a publishable licence, but the document "
                                   f"declares licence {licence!r}; publishable: "
                                   f"{sorted(PUBLISHABLE_LICENCES)} (doubt fails closed: tier B)")
        try:
            floor = licence_tier(licence or UNKNOWN_LICENCE, corpus if isinstance(corpus, str) else None)
        except CorpusNameError as exc:  # an invisible or look-alike corpus name
            b.fail(source, "corpus", str(exc))
        b.not_laxer(claimed, floor, source, "tier", f"the document declares licence {licence!r}"
                    + (f" for corpus {corpus!r}" if corpus else ""))
        if claimed == "A" and not corpus:
            b.fail(source, "corpus", "tier A needs the corpus named")

    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> b.TableRows:
        lower, upper = _pair(self.interval)
        labels_only = self.labels_only or {}
        lo_lower, lo_upper = _pair(labels_only.get("interval"))
        inputs = self.inputs or {}
        return {"ppi": [{
            "document_id": document_id, "ppi_id": self.document_id, "method": str(self.method),
            "alpha": self.alpha, "estimate": self.estimate, "lower": lower, "upper": upper,
            "lambda_value": self.lambda_, "judge_bias": self.judge_bias,
            "effective_labels": self.effective_labels, "labelled": self.labelled,
            "unlabelled": self.unlabelled, "labels_only_estimate": labels_only.get("estimate"),
            "labels_only_lower": lo_lower, "labels_only_upper": lo_upper,
            "judge_only_estimate": (self.judge_only or {}).get("estimate"),
            "judge_sha256": inputs.get("judge_sha256"),
            "labels_sha256": inputs.get("labels_sha256"), "corpus": self.corpus,
            "tier": self.tier, "licence": None if self.licence is b.ABSENT else self.licence,
            "ingested_at": stamp}]}
