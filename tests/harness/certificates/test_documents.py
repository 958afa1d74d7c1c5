"""Certificate and PPI documents: ids, validation naming the field, exact intervals."""

from __future__ import annotations

import pytest

from harness.claims import certificate as documents
from harness.certificates.build import exact_interval
from harness.claims import claim_from_dict, write_claim as write_document
from harness.claims.certificate import with_id
from harness.core.formats import FormatError



def validate_document(doc, source="<document>"):
    return claim_from_dict(doc, source).to_dict()


def coverage_doc(**overrides):
    doc = {"kind": "certificate", "schema_version": 1, "type": "coverage", "status": "valid",
           "reason": "r", "method": "m", "alpha": 0.1, "k_max": 50, "temperature": 0.5,
           "threshold": 0.9, "tuning": {}, "calibration": {}, "fixed_k": {}, "heldout": {},
           "seed": 0, "splits": {}, "fingerprint": {"corpora": []}, "tier": "A", "sources": []}
    doc.update(overrides)
    return with_id(doc)


def test_certificate_intervals_are_the_stats_clopper_pearson_by_hand():
    # k = n: the lower bound solves p^n = alpha/2, so 10/10 -> 0.025^(1/10) = 0.6915
    lo, hi = exact_interval(10, 10)
    assert lo == pytest.approx(0.025 ** 0.1) and hi == 1.0
    lo, hi = exact_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** 0.1)
    # k = 1 of n = 2: the lower bound solves 1 - (1 - p)^2 = 0.025 -> 1 - sqrt(0.975)
    lo, hi = exact_interval(1, 2)
    assert lo == pytest.approx(1 - 0.975 ** 0.5) and hi == pytest.approx(0.975 ** 0.5)
    assert exact_interval(0, 0) is None  # an empty held-out set has no interval
    assert not hasattr(documents, "clopper_pearson")  # one implementation, in harness.stats


def test_document_id_is_content_derived():
    a, b = coverage_doc(), coverage_doc()
    assert a["document_id"] == b["document_id"]
    assert coverage_doc(seed=1)["document_id"] != a["document_id"]
    assert with_id(a) == a                                  # idempotent


@pytest.mark.parametrize("doc,field", [
    (coverage_doc(kind="thing"), "kind"),
    (coverage_doc(type="recall"), "type"),
    (coverage_doc(status="maybe"), "status"),
    (coverage_doc(tier="Z"), "tier"),
    (coverage_doc(threshold=None), "threshold"),            # valid needs a threshold
    (coverage_doc(status="degenerate"), "threshold"),       # degenerate: the maximum K only
    (coverage_doc(alpha=1.5), "alpha"),
    (coverage_doc(schema_version=2), "schema_version"),
    (with_id({k: v for k, v in coverage_doc().items() if k not in ("heldout", "document_id")}),
     "heldout"),
])
def test_validation_names_the_field(doc, field):
    with pytest.raises(FormatError) as err:
        validate_document(doc, "cert.json")
    assert err.value.field == field


def test_write_refuses_an_invalid_document_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "cert.json"
    write_document(path, coverage_doc())
    before = path.read_bytes()
    with pytest.raises(FormatError):
        write_document(path, coverage_doc(tier="Z"))
    assert path.read_bytes() == before


def test_a_degenerate_coverage_certificate_is_sized_at_the_maximum_k():
    validate_document(coverage_doc(status="degenerate", threshold=1.0))
    validate_document(coverage_doc(status="degenerate", threshold=None))  # written before
