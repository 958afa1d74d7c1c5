"""Every claim kind survives a round trip: ``from_dict(to_dict(x)) == x`` and the canonical
bytes of what comes back are the bytes that went in.  Each document is made by the product
code that writes that kind (or, for migration, a report built by hand), not typed in here."""

from __future__ import annotations

import json

import pytest

from harness import claims
from harness.certificates.build import build_coverage_certificate, build_risk_certificate
from harness.certificates.ppi import ppi_document, ppi_mean
from harness.claims.calibration import CalibrationClaim
from harness.claims.certificate import with_id
from harness.core.canonical import canonical_json
from harness.evaluation.results import load_metrics, load_per_query
from harness.evaluation.runs import compare_runs, load_pool
from harness.stats.agreement import Arm, agreement
from harness.stats.gate import GateSpec, run_gate
from harness.stats.intervals import row_intervals
from harness.stats.power import audit, power_report
from harness.stats.sequential import QueryStream
from tests.harness.certificates.synth import make_run
from tests.harness.stats.builders import make_results
from tests.warehouse.answers_builders import reference_document
from tests.warehouse.migration_builders import migration_document

QUERIES = {"alpha": {f"q{i}": ("lookup" if i % 2 else "summary", {"nDCG@10": i / 10, "MRR": 1 / i})
                     for i in range(1, 9)}}
OTHER = {"alpha": {f"q{i}": ("lookup" if i % 2 else "summary",
                             {"nDCG@10": min(1.0, i / 9), "MRR": 1 / (i + 1)})
                   for i in range(1, 9)}}


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("claims")
    control = make_results(root / "control", "control", QUERIES)
    arm = make_results(root / "arm", "arm", OTHER)
    cert_run = make_run(root / "cert", n=80)
    pool = load_pool([cert_run])
    values = {q: v["nDCG@10"] for q, (_, v) in QUERIES["alpha"].items()}
    gate = run_gate("point", GateSpec(measure="nDCG@10", threshold=0.3, corpus="alpha",
                                      query_class="all",
                                      stream=QueryStream.from_values(values)))
    ppi = ppi_mean([1, 0, 1, 1, 0, 1], [0.9, 0.2, 0.8, 0.7, 0.4, 0.9], [0.6, 0.5, 0.8],
                   alpha=0.05)
    return {
        "metrics": load_metrics(control),
        "intervals": row_intervals(load_metrics(control), load_per_query(control), seed=0,
                                   resamples=200),
        "comparisons": compare_runs(control, [arm], seed=0, permutations=200, resamples=200,
                                    progress=False),
        "agreement": agreement([Arm("f", "x", "axis", (0.1, 0.2), "given"),
                                Arm("f", "y", "axis", (-0.1, 0.05), "given"),
                                Arm("f", "z", "axis", (0.0, 0.3), "given")], ["a", "b"]),
        "gate": gate.to_dict(),
        "power": power_report(20, sd=0.3, effect=0.05, measure="nDCG@10"),
        "power-audit": audit(60, ["0.70", "0.65"], baseline="0.60"),
        "certificate": build_coverage_certificate(pool, alpha=0.2, seed=0),
        "certificate-risk": build_risk_certificate(pool, target=0.3, delta=0.1, seed=0,
                                                   context_k=5),
        "ppi": ppi_document(ppi[0] if isinstance(ppi, tuple) else ppi,
                            {"judge_sha256": "0" * 64, "labels_sha256": "1" * 64}),
        "calibration": [json.loads(line) for line in
                        (cert_run / "calibration.jsonl").read_text().splitlines()],
        "answers": reference_document(),
        "migration": migration_document(),
    }


KINDS = ["metrics", "intervals", "comparisons", "agreement", "gate", "power", "power-audit",
         "certificate", "certificate-risk", "ppi", "calibration", "answers", "migration"]
#: kinds written as JSONL (one object a line): no top-level fields of their own
JSONL_KINDS = {"calibration"}


def kind_class(name: str):
    base = name.split("-")[0]
    return {"metrics": claims.MetricsClaim, "calibration": CalibrationClaim}.get(
        base, claims.KINDS.get(base))


@pytest.mark.parametrize("name", KINDS)
def test_round_trip(documents, name):
    doc = documents[name]
    cls = kind_class(name)
    claim = cls.from_dict(doc, f"<{name}>")
    again = cls.from_dict(claim.to_dict(), f"<{name} again>")
    assert again == claim
    assert claim.canonical_json() == canonical_json(doc)  # bytes as the writer wrote them
    assert again.identity() == claim.identity()


def test_every_kind_is_covered():
    covered = {kind_class(n) for n in KINDS}
    assert covered == set(claims.ALL_KINDS)


@pytest.mark.parametrize("name", [k for k in KINDS if k not in JSONL_KINDS])
def test_an_unknown_top_level_field_is_refused_naming_it(documents, name):
    doc = documents[name]
    assert isinstance(doc, dict), f"{name} is JSONL: list it in JSONL_KINDS"
    cls = kind_class(name)
    smuggled = {**doc, "smuggled": 1}
    if "document_id" in doc:  # a content-derived id would catch the edit first
        smuggled = with_id(smuggled)
    with pytest.raises(claims.ClaimError, match="field 'smuggled'"):
        cls.from_dict(smuggled, "<x>")
