"""Shared builders for the cache tests: one in-process arm run, its claim files and the
cache outcomes its runinfo.json records."""

from __future__ import annotations

import json
from pathlib import Path

CLAIM_FILES = ("metrics.json", "metrics.md", "per_query.jsonl", "rankings.jsonl",
               "qrels.jsonl", "calibration.jsonl")


def claims(out) -> dict[str, bytes]:
    return {name: (Path(out) / name).read_bytes() for name in CLAIM_FILES}


def runinfo(out) -> dict:
    return json.loads((Path(out) / "runinfo.json").read_text(encoding="utf-8"))


def outcomes(out) -> tuple:
    """``(source, prepared, bm25 index)`` outcomes of a one-corpus run."""
    block = runinfo(out)["prepared_cache"]
    (corpus,) = block["corpora"]
    return corpus["source"], corpus["prepared"], block["bm25_index"]["outcome"]


def run_one_arm(spec: str, out, cache, **options):
    """One BM25 arm (by default) through :func:`run_arm`, named ``arm`` whatever ``out``."""
    from harness.pipeline.config import ArmConfig
    from harness.pipeline.runner import run_arm

    params = {"mode": "bm25", "control_name": "arm", "progress": False, **options}
    cfg = ArmConfig(corpus_specs=(spec,), out=str(out), cache_dir=str(cache), **params)
    return run_arm(cfg)
