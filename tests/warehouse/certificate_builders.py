"""Calibrated runs and certificates the warehouse tests build."""

from __future__ import annotations

from harness.certificates.build import build_coverage_certificate
from harness.certificates.data import calibration_row, calibration_text
from harness.evaluation.runs import load_pool
from tests.warehouse.builders import build_results

N_QUERIES = 60
SCORES = [1.0, 0.8, 0.6, 0.4, 0.3, 0.2, 0.1, 0.05]


def first_relevant(i: int) -> int | None:
    """Query i's first relevant rank: 1 for most, 2 or 3 for some, none for every 20th."""
    if i % 20 == 0:
        return None
    return 1 + (i % 3 == 0) + (i % 7 == 0)


def calibrated_run(out, *, corpus="pub", tier="A", name="arm", retrieval=None, calibration=None):
    licence = "MIT" if tier == "A" else "CC-BY-NC-4.0"
    values = {(corpus, f"q{i:02d}"): {"MRR": 0.0 if first_relevant(i) is None
                                      else 1 / first_relevant(i)} for i in range(N_QUERIES)}
    rows = calibration if calibration is not None else [
        calibration_row(corpus=corpus, tier=tier, query_id=f"q{i:02d}", query_class=None,
                        stage="retrieve", scores=SCORES,
                        relevant=[first_relevant(i) == k + 1 for k in range(len(SCORES))])
        for i in range(N_QUERIES)]
    return build_results(out, values, corpora={corpus: (tier, licence)}, control_name=name,
                         retrieval=retrieval or {"backend": "embedded", "mode": "bm25",
                                                 "stage": "retrieve"},
                         extra_files={"calibration.jsonl": calibration_text(rows)})


def certificate(run_dir):
    return build_coverage_certificate(load_pool([run_dir]), alpha=0.2, seed=0)
