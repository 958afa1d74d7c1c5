"""Fixtures: a warehouse holding a tier-A and a tier-B corpus, with hand-chosen values.

Two runs, ``control`` and ``candidate``, each over ``pub`` (tier A, MIT) and
``secretcorpus`` (tier B, CC-BY-NC-4.0), so each also has a pooled row
``pub+secretcorpus`` of tier B.  Query classes: p1 lookup, p2 summarize; s1, s2 lookup.
"""

from __future__ import annotations

import pytest

from tests.warehouse.builders import build_results

CORPORA = {"pub": ("A", "MIT"), "secretcorpus": ("B", "CC-BY-NC-4.0")}
CLASSES = {"p1": "lookup", "p2": "summarize", "s1": "lookup", "s2": "lookup"}

CONTROL = {
    ("pub", "p1"): {"nDCG@10": 0.5, "MRR": 1.0},
    ("pub", "p2"): {"nDCG@10": 0.3, "MRR": 0.5},
    ("secretcorpus", "s1"): {"nDCG@10": 0.777, "MRR": 0.1111},
    ("secretcorpus", "s2"): {"nDCG@10": 0.555, "MRR": 0.0707},
}
CANDIDATE = {
    ("pub", "p1"): {"nDCG@10": 0.6, "MRR": 1.0},
    ("pub", "p2"): {"nDCG@10": 0.5, "MRR": 1.0},
    ("secretcorpus", "s1"): {"nDCG@10": 0.713, "MRR": 0.613},
    ("secretcorpus", "s2"): {"nDCG@10": 0.531, "MRR": 0.417},
}
CONTROL_LATENCY = [10.0, 20.0, 30.0, 40.0]
CANDIDATE_LATENCY = [5.0, 1.0, 3.0]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """``(db_path, {"control": run_id, "candidate": run_id})`` of the mixed-tier warehouse."""
    from warehouse import ingest_results

    root = tmp_path_factory.mktemp("mixed")
    db = root / "w.duckdb"
    ids = {}
    for name, values, samples in (("control", CONTROL, CONTROL_LATENCY),
                                  ("candidate", CANDIDATE, CANDIDATE_LATENCY)):
        out = build_results(root / name, values, corpora=CORPORA, classes=CLASSES,
                            control_name=name, latency=samples, concurrency=2)
        ids[name] = ingest_results(out, db).run_id
    return db, ids


@pytest.fixture
def db(tmp_path):
    return tmp_path / "w.duckdb"
