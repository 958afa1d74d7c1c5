"""A certificate calibrated on the real QMSum validation split, through the real bench."""

from __future__ import annotations

import importlib.util

import pytest

from harness.evaluation.runs import load_pool
from harness.claims import CertificateClaim, read_claim
from harness.cli import main
from harness.evaluation.results import load_metrics

pytestmark = pytest.mark.skipif(importlib.util.find_spec("harness.cli.bench") is None,
                                reason="the bench command is not in this tree")


def test_file_level_bm25_certificate_on_qmsum(qmsum_val, tmp_path, capsys):
    run = tmp_path / "bm25_file"
    assert main(["bench", "--corpus", f"qmsum:{qmsum_val}", "--mode", "bm25",
                 "--stage", "retrieve", "--granularity", "file", "--out", str(run),
                 "--no-warehouse", "--no-progress"]) == 0
    pool = load_pool([run])                      # the bench's file passes the strict reader
    metrics = load_metrics(run)
    assert pool.fingerprint["corpora"][0]["sha256"] == metrics["corpora"][0]["sha256"]
    outs = []
    for name in ("a.json", "b.json"):
        assert main(["calibrate", "--run", str(run), "--alpha", "0.1", "--out",
                     str(tmp_path / name)]) == 0
        outs.append((tmp_path / name).read_bytes())
    assert outs[0] == outs[1]
    cert = read_claim(tmp_path / "a.json", CertificateClaim).to_dict()
    assert cert["splits"]["tune"] + cert["splits"]["calibrate"] + cert["splits"]["heldout"] \
        == len(pool.rows)
    # file-level BM25 finds a relevant meeting in its list for over 90% of queries, so a
    # threshold exists (chunk level it does not: too many queries miss in the top 48)
    assert cert["status"] == "valid", cert["reason"]
    held = cert["heldout"]
    lo, hi = held["coverage_interval"]
    assert lo <= held["coverage"] <= hi
    assert hi >= 0.9                             # consistent with the promise
    assert held["mean_set_size"] <= cert["fixed_k"]["k"]
    capsys.readouterr()
    assert main(["certificate", "status", str(tmp_path / "a.json"), "--run", str(run)]) == 0
    assert "VALID" in capsys.readouterr().out
