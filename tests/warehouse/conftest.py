"""Fixtures: a warehouse holding a tier-A and a tier-B corpus, with hand-chosen values.

Two runs, ``control`` and ``candidate``, each over ``pub`` (tier A, MIT) and
``secretcorpus`` (tier B, CC-BY-NC-4.0), so each also has a pooled row
``pub+secretcorpus`` of tier B.  A run's corpora share one index, so nothing of these two
runs is publishable, not even pub's rows (migration 006).  Two more runs,
``pub-control`` and ``pub-candidate``, hold pub's queries alone (tier A throughout) with
the same values as pub in ``control`` and ``candidate``: they are what the publishable view
shows.  Query classes: p1 lookup, p2 summarize; s1, s2 lookup.
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


PUB_ONLY = {"pub": CORPORA["pub"]}


def pub_values(values: dict) -> dict:
    """The pub queries of a run's values (what a pub-only run measured)."""
    return {k: v for k, v in values.items() if k[0] == "pub"}


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """``(db_path, {name: run_id})`` of the mixed-tier warehouse: ``control`` and
    ``candidate`` (pub + secretcorpus, with latency), ``pub-control`` and ``pub-candidate``
    (pub alone, no latency)."""
    from warehouse import ingest_results

    root = tmp_path_factory.mktemp("mixed")
    db = root / "w.duckdb"
    ids = {}
    for name, values, samples in (("control", CONTROL, CONTROL_LATENCY),
                                  ("candidate", CANDIDATE, CANDIDATE_LATENCY)):
        out = build_results(root / name, values, corpora=CORPORA, classes=CLASSES,
                            control_name=name, latency=samples, concurrency=2)
        ids[name] = ingest_results(out, db).run_id
    for name, values in (("pub-control", CONTROL), ("pub-candidate", CANDIDATE)):
        out = build_results(root / name, pub_values(values), corpora=PUB_ONLY, classes=CLASSES,
                            control_name=name)
        ids[name] = ingest_results(out, db).run_id
    return db, ids


@pytest.fixture
def db(tmp_path):
    return tmp_path / "w.duckdb"


#: the means the mixed warehouse's ``all`` rows must show (worked out by hand)
PUB_ALL = {"control": {"nDCG@10": (0.5 + 0.3) / 2, "MRR": (1.0 + 0.5) / 2},
           "candidate": {"nDCG@10": (0.6 + 0.5) / 2, "MRR": (1.0 + 1.0) / 2}}
SECRET_ALL = {"control": {"nDCG@10": (0.777 + 0.555) / 2, "MRR": (0.1111 + 0.0707) / 2},
              "candidate": {"nDCG@10": (0.713 + 0.531) / 2, "MRR": (0.613 + 0.417) / 2}}
POOLED_ALL = {"control": {"nDCG@10": (0.5 + 0.3 + 0.777 + 0.555) / 4,
                          "MRR": (1.0 + 0.5 + 0.1111 + 0.0707) / 4},
              "candidate": {"nDCG@10": (0.6 + 0.5 + 0.713 + 0.531) / 4,
                            "MRR": (1.0 + 1.0 + 0.613 + 0.417) / 4}}


def tier_b_numbers() -> set[float]:
    """Every number a tier-B value could show up as: per-query values, means, deltas."""
    singles = [v for values in (CONTROL, CANDIDATE) for (c, _), ms in values.items()
               if c == "secretcorpus" for v in ms.values()]
    means = [v for table in (SECRET_ALL, POOLED_ALL) for run in table.values()
             for v in run.values()]
    deltas = [SECRET_ALL["candidate"][m] - SECRET_ALL["control"][m] for m in ("nDCG@10", "MRR")]
    deltas += [POOLED_ALL["candidate"][m] - POOLED_ALL["control"][m] for m in ("nDCG@10", "MRR")]
    deltas += [CANDIDATE[k][m] - CONTROL[k][m] for k in CONTROL if k[0] == "secretcorpus"
               for m in ("nDCG@10", "MRR")]
    return set(singles + means + deltas)
