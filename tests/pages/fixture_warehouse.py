"""A small warehouse holding everything the dashboard shows, built from hand-chosen values.

Corpora: ``pub`` (tier A, MIT), ``alt`` (tier A, CC0-1.0), ``secretcorpus`` (tier B,
CC-BY-NC-4.0).  Runs (control names, oldest first):

* ``control``, ``arm-one``, ``arm-two`` over pub + alt (tier A), with intervals.json,
  latency samples, and one document testing both arms against the control (Holm over two
  arms);
* ``served`` and ``steady`` over pub + alt (tier A), with calibration data;
* later: ``control`` again over all three corpora with another request size (a tier-B run:
  internally the control's certificate has expired, and the why names the added
  secretcorpus; the publishable view judges it against the newest tier-A run of the arm,
  where it is valid) and ``served`` again whose queries now miss (its certificate's monitor
  alarms).

A run's corpora share one index, so nothing of the later ``control`` run is publishable.

Per-query values: query i (1-based) of a corpus has nDCG@10 ``i / 10`` and MRR ``1 / i`` in
the control; arm-one adds 0.1 to nDCG@10 on odd queries and 0.05 on even ones of pub and
alt, and subtracts 0.1 on secretcorpus; arm-two adds 0.1 to every nDCG@10 of pub only.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from harness.certificates.build import build_coverage_certificate
from harness.evaluation.runs import load_pool
from harness.certificates.data import calibration_row, calibration_text
from harness.claims import write_claim as write_certificate
from harness.claims.certificate import with_id
from harness.certificates.ppi import ppi_document, ppi_mean
from harness.evaluation.manifests import arms_from_manifest
from harness.stats.agreement import agreement
from harness.claims import write_claim as write_document
from harness.claims.intervals import IntervalsClaim
from harness.stats.intervals import row_intervals
from harness.evaluation.results import load_metrics, load_per_query
from harness.evaluation.runs import compare_runs
from tests.warehouse.builders import build_results


INTERVALS_JSON = IntervalsClaim.RESULTS_FILE

CORPORA = {"pub": ("A", "MIT"), "alt": ("A", "CC0-1.0"), "secretcorpus": ("B", "CC-BY-NC-4.0")}
QUERIES = {"pub": 6, "alt": 6, "secretcorpus": 4}
START = datetime(2026, 1, 5, 9, 0, 0)
CALIBRATION_QUERIES = 60
SCORES = [1.0, 0.8, 0.6, 0.4, 0.3, 0.2, 0.1, 0.05]
RESAMPLES = 200


def query_class(corpus: str, i: int) -> str:
    return "lookup" if corpus == "secretcorpus" or i % 2 else "summarize"


def control_values(corpora) -> dict:
    return {(c, f"{c[0]}{i}"): {"nDCG@10": i / 10, "MRR": 1 / i}
            for c in corpora for i in range(1, QUERIES[c] + 1)}


def arm_one(corpora) -> dict:
    values = control_values(corpora)
    for (c, q), v in values.items():
        i = int(q[1:])
        v["nDCG@10"] = round(v["nDCG@10"] + (-0.1 if c == "secretcorpus" else
                                             0.1 if i % 2 else 0.05), 10)
    return values


def arm_two(corpora) -> dict:
    values = control_values(corpora)
    for (c, _), v in values.items():
        if c == "pub":
            v["nDCG@10"] = round(v["nDCG@10"] + 0.1, 10)
    return values


def first_relevant(i: int, missing: bool) -> int | None:
    if missing:
        return None if i % 4 else 1
    return None if i % 20 == 0 else 1 + (i % 3 == 0) + (i % 7 == 0)


def calibration(corpora, *, missing: bool = False) -> str:
    names = sorted(corpora)
    rows = []
    for i in range(CALIBRATION_QUERIES):
        corpus = names[i % len(names)]
        rank = first_relevant(i, missing)
        rows.append(calibration_row(
            corpus=corpus, tier=CORPORA[corpus][0], query_id=f"c{i:02d}", query_class="lookup",
            stage="retrieve", scores=SCORES,
            relevant=[rank == k + 1 for k in range(len(SCORES))]))
    return calibration_text(rows)


def write_run(out: Path, name: str, values: dict, *, minutes: int, retrieval: dict,
              latency: list[float] | None = None, calibrated: bool = False,
              missing: bool = False) -> Path:
    """A results directory whose rows are the plain means of ``values`` (computed by
    :func:`tests.warehouse.builders.build_results`)."""
    corpora = sorted({c for c, _ in values})
    extra = {"calibration.jsonl": calibration(corpora, missing=missing)} if calibrated else {}
    # every query's text, "<corpus> question <id>" (tier as the corpus's: the warehouse
    # re-derives it from metrics.json)
    extra["queries.jsonl"] = "".join(
        json.dumps({"corpus": c, "tier": CORPORA[c][0], "query_id": q,
                    "text": f"{c} question {q}"}, sort_keys=True) + "\n"
        for c, q in sorted(values))
    return build_results(
        out, values, corpora={c: CORPORA[c] for c in corpora},
        classes={q: query_class(c, int(q[1:])) for c, q in values},
        control_name=name, latency=latency, retrieval=retrieval, extra_files=extra,
        index={"embedding_models": ["fixture-model"], "embedding_verdict": "uniform",
               "embedding_dimension": 8, "configured_embedding_model": "fixture-model"},
        corpus_fields={c: {"sha256": f"{i + 1}" * 64, "files": 3, "chunks": 12,
                           "evidence": f"licence {CORPORA[c][1]} declared for {c} (test fixture)"}
                       for i, c in enumerate(corpora)},
        runinfo_fields={"command": "fixture",
                        "created_at": (START + timedelta(minutes=minutes)).isoformat()})


def retrieval(size: int = 48) -> dict:
    return {"backend": "embedded", "mode": "hybrid", "stage": "retrieve", "scope": "corpus",
            "size": size, "fusion": {"strategy": "rrf", "rank_constant": 60,
                                     "selected_explicitly": False}}


def build(root) -> dict:
    """Build the warehouse under ``root``; returns ``{"db", "dirs", "ids", "documents"}``."""
    from warehouse import ingest_document, ingest_results

    root = Path(root)
    db = root / "fixture.duckdb"
    three, two = sorted(CORPORA), ["alt", "pub"]
    dirs = {
        "control": write_run(root / "control", "control", control_values(two), minutes=0,
                             retrieval=retrieval(), latency=[10.0, 20.0, 30.0, 40.0],
                             calibrated=True),
        "arm-one": write_run(root / "arm-one", "arm-one", arm_one(two), minutes=1,
                             retrieval={**retrieval(), "fusion": {"strategy": "rrf",
                                                                  "rank_constant": 30}},
                             latency=[5.0, 1.0, 3.0]),
        "arm-two": write_run(root / "arm-two", "arm-two", arm_two(two), minutes=2,
                             retrieval={**retrieval(), "mode": "bm25"}, latency=[7.0, 8.0, 9.0]),
        "served": write_run(root / "served", "served", control_values(two), minutes=3,
                            retrieval=retrieval(), calibrated=True, latency=[2.0, 2.5]),
        "steady": write_run(root / "steady", "steady", arm_two(two), minutes=4,
                            retrieval=retrieval(), calibrated=True),
    }
    for name in ("control", "arm-one", "arm-two"):
        out = dirs[name]
        write_document(out / INTERVALS_JSON, row_intervals(
            load_metrics(out), load_per_query(out), seed=0, resamples=RESAMPLES))
    docs = root / "documents"
    docs.mkdir(parents=True, exist_ok=True)
    documents = [write_document(docs / "comparisons.json", compare_runs(
        dirs["control"], [dirs["arm-one"], dirs["arm-two"]], seed=0, permutations=200,
        resamples=RESAMPLES, progress=False))]
    manifest = {"kind": "agreement-manifest", "measure": "nDCG@10", "corpora": ["pub", "alt"],
                "families": [{"name": "fusion", "control": "../control",
                              "arms": [{"name": "arm-one", "run": "../arm-one", "axis": "k"}]},
                             {"name": "legs", "control": "../control",
                              "arms": [{"name": "arm-two", "run": "../arm-two",
                                        "axis": "legs"}]}]}
    for cls in ("all", "lookup"):
        arms, pair, measure = arms_from_manifest(manifest, docs, query_class=cls)
        documents.append(write_document(docs / f"agreement-{cls}.json",
                                        agreement(arms, pair, measure=measure, query_class=cls)))
    for name, alpha in (("control", 0.2), ("served", 0.2), ("steady", 0.2), ("steady", 0.01)):
        doc = build_coverage_certificate(load_pool([dirs[name]]), alpha=alpha, seed=0)
        documents.append(write_certificate(docs / f"certificate-{name}-{alpha}.json", doc))
    result = ppi_mean([1, 0, 1, 1, 0, 1], [0.9, 0.2, 0.8, 0.7, 0.4, 0.9],
                      [0.8, 0.3, 0.6, 0.9, 0.7, 0.5, 0.6, 0.8])
    inputs = {"judge_sha256": "0" * 64, "labels_sha256": "1" * 64, "judge_file": "judge.jsonl",
              "labels_file": "labels.jsonl"}
    for tier, corpus, licence in (("A", "pub", "MIT"), ("B", None, None)):
        doc = ppi_document(result, inputs, corpus=corpus, tier=tier)
        if licence:  # as `harness ppi --licence` records it
            doc = with_id({**doc, "licence": licence})
        documents.append(write_certificate(docs / f"ppi-{tier}.json", doc))

    # later runs of two arms: control over all three corpora with another request size
    # (its certificate expires, internally), served again with queries that now miss (its
    # certificate's monitor alarms)
    dirs["control-2"] = write_run(root / "control-2", "control", control_values(three),
                                  minutes=10, retrieval=retrieval(size=12),
                                  latency=[11.0, 19.0, 33.0, 44.0], calibrated=True)
    dirs["served-2"] = write_run(root / "served-2", "served", arm_one(two), minutes=11,
                                 retrieval=retrieval(), calibrated=True, missing=True,
                                 latency=[2.2, 2.4])
    ids = {name: ingest_results(out, db).run_id for name, out in dirs.items()}
    for path in documents:
        ingest_document(path, db)
    from tests.warehouse.answers_builders import none_document, reference_document

    for doc in (reference_document(), none_document()):
        ingest_document(doc, db)
    # a tier-A judging task and the tier-B corpus's (the Judge page), with one label each
    from harness.claims.labels import Label
    from tests.pages.judge_fixture import PUBLIC, SECRET, write_labels, write_task
    from warehouse.judging import ingest_labels, ingest_task

    for name, record in (("judge-pub", PUBLIC), ("judge-secret", SECRET)):
        task_id = write_task(root / name, record, f"{record['name']} pool")
        ingest_task(root / name, db)
        ingest_labels(write_labels(root / f"{name}-labels", task_id, Label(
            "q1", "d1", "ana", "2026-12-07T09:00:00Z", 2)), db)
    return {"db": db, "dirs": dirs, "ids": ids,
            "documents": {Path(p).name: json.loads(Path(p).read_text()) for p in documents}}
