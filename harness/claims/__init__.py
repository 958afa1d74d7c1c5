"""Claims: one definition per kind of document the product writes and the warehouse ingests.

Each kind is one frozen dataclass (:class:`harness.claims.base.Claim`) that knows its
fields, validates a document naming the file and the field, derives its tier from licences
through :mod:`harness.core.tiers` (never trusting a tier written in a file), declares the
warehouse columns it fills, and says what makes two documents comparable.  A new kind is one
class here and one SQL migration.

=============  =======================  ==========================================
kind           file                     written by
=============  =======================  ==========================================
metrics        metrics.json             harness score, harness bench
intervals      intervals.json           harness intervals
comparisons    comparisons.json         harness intervals --control
agreement      (--out FILE)             harness agreement
gate           (--out FILE)             harness gate, bench --gate
power          (--json)                 harness power
certificate    (--out FILE)             harness calibrate
ppi            (--out FILE)             harness ppi
calibration    calibration.jsonl        harness bench
answers        answers.json             harness answer
migration      migration.json           harness migrate
=============  =======================  ==========================================
"""

from __future__ import annotations

import importlib
import os
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from harness.claims.base import Claim, ClaimError, check_columns, fail
from harness.core.formats import FormatError, read_json_object
from harness.core.outputs import Inputs, is_document, write_file

if TYPE_CHECKING:
    from harness.claims.agreement import AgreementClaim
    from harness.claims.answers import AnswersClaim
    from harness.claims.calibration import CalibrationClaim
    from harness.claims.certificate import CertificateClaim
    from harness.claims.comparisons import ComparisonsClaim
    from harness.claims.gate import GateClaim
    from harness.claims.intervals import IntervalsClaim
    from harness.claims.metrics import MetricsClaim
    from harness.claims.migration import MigrationClaim
    from harness.claims.power import PowerClaim
    from harness.claims.ppi import PpiClaim

#: every kind's class -> its module, in the order of the table above.  A kind's module is
#: imported when the kind is first asked for (``harness score`` needs one of eleven);
#: tests/test_registries.py resolves each entry and holds it to the import contracts.
_CLASSES = {
    "MetricsClaim": "harness.claims.metrics",
    "IntervalsClaim": "harness.claims.intervals",
    "ComparisonsClaim": "harness.claims.comparisons",
    "AgreementClaim": "harness.claims.agreement",
    "GateClaim": "harness.claims.gate",
    "PowerClaim": "harness.claims.power",
    "CertificateClaim": "harness.claims.certificate",
    "PpiClaim": "harness.claims.ppi",
    "CalibrationClaim": "harness.claims.calibration",
    "AnswersClaim": "harness.claims.answers",
    "MigrationClaim": "harness.claims.migration",
}


@lru_cache(maxsize=None)
def _registry() -> dict[str, Any]:
    """``ALL_KINDS``, ``KINDS``, ``DOCUMENT_KINDS`` and ``RESULTS_FILES``, every kind's
    warehouse columns checked once."""
    all_kinds: tuple[type[Claim], ...] = tuple(
        getattr(importlib.import_module(module), name)
        for name, module in _CLASSES.items())
    metrics, calibration = all_kinds[0], all_kinds[8]
    for kind in all_kinds:
        check_columns(kind)
    return {
        "ALL_KINDS": all_kinds,
        "KINDS": {kind.KIND: kind for kind in all_kinds},
        # kinds the warehouse takes as standalone documents (a ``kind`` field, tables to fill)
        "DOCUMENT_KINDS": {kind.KIND: kind for kind in all_kinds
                           if kind.TABLES and kind not in (metrics, calibration)},
        # file name -> the kind that file holds inside a results directory (besides metrics.json)
        "RESULTS_FILES": {kind.RESULTS_FILE: kind for kind in all_kinds
                          if kind.RESULTS_FILE is not None and kind is not metrics},
    }


def __getattr__(name: str) -> Any:
    """The kinds' classes and tables, imported when first used (PEP 562)."""
    if name in _CLASSES:
        return getattr(importlib.import_module(_CLASSES[name]), name)
    if name in ("ALL_KINDS", "KINDS", "DOCUMENT_KINDS", "RESULTS_FILES"):
        return _registry()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if TYPE_CHECKING:
    ALL_KINDS: tuple[type[Claim], ...]
    KINDS: dict[str, type[Claim]]
    DOCUMENT_KINDS: dict[str, type[Claim]]
    RESULTS_FILES: dict[str, type[Claim]]


def kind_of(doc: Any, source: str) -> type[Claim]:
    """The claim class of a standalone document, by its ``kind`` field."""
    kind = doc.get("kind") if isinstance(doc, Mapping) else None
    if not isinstance(kind, str) or not kind:
        fail(source, "kind", "missing: a document names its kind")
    kinds: dict[str, type[Claim]] = _registry()["KINDS"]
    if kind not in kinds:
        fail(source, "kind", f"unknown document kind {kind!r}; known kinds: {sorted(kinds)}")
    return kinds[kind]


def claim_from_dict(doc: Any, source: str) -> Claim:
    """A checked claim of whatever kind ``doc`` names."""
    return kind_of(doc, source).from_dict(doc, source)


def read_claim(path: str | os.PathLike[str], kind: type[Claim] | None = None) -> Claim:
    """Read and check a claim document (of ``kind`` when given)."""
    doc = read_json_object(path)
    found = kind_of(doc, str(path))
    if kind is not None and found is not kind:
        raise FormatError(path, None, "kind", f"expected a {kind.KIND} document, got kind "
                                              f"{found.KIND!r}")
    return found.from_dict(doc, str(path))


def write_claim(path: str | os.PathLike[str], doc: Claim | Mapping[str, Any], *, flag: str = "--out",
                inputs: Inputs = ()) -> Path:
    """Check ``doc`` as the kind it names and write it as canonical JSON, atomically (a
    reader sees the old file or the new one, never half of one).  An existing file is
    replaced only when it is empty or a document of the same kind, and never when it is one
    of ``inputs`` (``(label, path)`` pairs named in the refusal; :mod:`harness.core.outputs`)."""
    claim = doc if isinstance(doc, Claim) else claim_from_dict(doc, str(path))
    kind = type(claim).KIND
    return write_file(path, claim.canonical_json(), recognise=is_document(kind),
                      what=f"{kind} document", flag=flag, inputs=inputs)


__all__ = ["ALL_KINDS", "DOCUMENT_KINDS", "KINDS", "RESULTS_FILES", "Claim", "ClaimError",
           "claim_from_dict", "kind_of", "read_claim", "write_claim", "AgreementClaim", "AnswersClaim",
           "CalibrationClaim",
           "CertificateClaim", "ComparisonsClaim", "GateClaim", "IntervalsClaim",
           "MetricsClaim", "MigrationClaim", "PowerClaim", "PpiClaim"]
