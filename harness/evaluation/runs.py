"""Results directories read back for the statistics and the certificates, which never read
files themselves: a run's per-query values (:func:`load_run_values`, paired comparisons,
gate controls), its calibration rows (:func:`load_calibration_run`, certificate pools), and
a lazily scored query stream for a gate over a run file (:func:`scored_stream`)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping, Sequence

from harness.certificates.build import Pool, pool_runs
from harness.certificates.data import CALIBRATION_JSONL, CalibrationRun, read_calibration
from harness.claims.metrics import METRICS_JSON, PER_QUERY, effective_tiers, run_id
from harness.core.canonical import sha256_file
from harness.core.formats import FormatError
from harness.evaluation import scoring
from harness.evaluation.results import load_metrics, load_per_query
from harness.stats.perquery import PerQueryIndex, default_slice_corpus
from harness.stats.randomization import RunValues
from harness.stats.randomization import compare_runs as _compare
from harness.stats.sequential import QueryStream


def load_run_values(results_dir) -> RunValues:
    """A results directory's claim and per-query values, checked line by line."""
    path = Path(results_dir)
    metrics = load_metrics(path)
    index = PerQueryIndex(load_per_query(path), source=str(path / PER_QUERY))
    return RunValues(str(metrics["control_name"]), run_id(metrics), index, metrics,
                     claim_source=str(path / METRICS_JSON), values_source=str(path / PER_QUERY))


def compare_runs(control_dir, arm_dirs: Sequence, measures: Iterable[str] | None = None,
                 **options) -> dict:
    """:func:`harness.stats.randomization.compare_runs` over results directories."""
    return _compare(load_run_values(control_dir), [load_run_values(d) for d in arm_dirs],
                    measures, **options)


def recorded_values(results_dir, corpus: str | None, query_class: str,
                    measure: str) -> tuple[str, dict]:
    """``(corpus, {(corpus, query_id): value})`` of a recorded run's slice (a control)."""
    index = PerQueryIndex(load_per_query(results_dir), source=f"{results_dir}/{PER_QUERY}")
    corpus = corpus or default_slice_corpus(index.corpora)
    sel = index.select(corpus, query_class, measure)
    return corpus, dict(zip(sel.keys, sel.values.tolist()))


def load_calibration_run(results_dir) -> CalibrationRun:
    """Rows of ``results_dir/calibration.jsonl`` checked against its metrics.json.

    Every row's corpus must be listed in metrics.json, with the tier of the run's numbers on
    it (``harness.claims.metrics.effective_tiers``: its own, or the shared index's if more
    restrictive), and the rows' stage must match ``retrieval.stage`` when metrics.json
    states one.
    """
    results_dir = Path(results_dir)
    metrics = load_metrics(results_dir)
    path = results_dir / CALIBRATION_JSONL
    if not path.is_file():
        raise FormatError(path, None, None,
                          "no such file: the run recorded no calibration data (rerun the bench)")
    rows = read_calibration(path)
    tiers = effective_tiers(metrics)  # a bench run's rows: as restrictive as its shared index
    for row in rows:
        if row.corpus not in tiers:
            raise FormatError(path, row.line, "corpus",
                              f"corpus {row.corpus!r} is not listed in {METRICS_JSON} "
                              f"(listed: {sorted(tiers)})")
        if row.tier != tiers[row.corpus]:
            raise FormatError(path, row.line, "tier",
                              f"tier {row.tier!r} differs from {METRICS_JSON}'s tier "
                              f"{tiers[row.corpus]!r} for corpus {row.corpus!r}")
    stage = (metrics.get("retrieval") or {}).get("stage")
    if stage is not None and stage != rows[0].stage:
        raise FormatError(path, rows[0].line, "stage",
                          f"rows are from stage {rows[0].stage!r} but {METRICS_JSON} says "
                          f"retrieval.stage = {stage!r}")
    return CalibrationRun(tuple(rows), metrics, run_id(metrics), sha256_file(path))


def load_pool(results_dirs: Sequence) -> Pool:
    """Read and check the calibration data of every results directory, pooled."""
    if not results_dirs:
        raise ValueError("no --run given: a certificate needs at least one results directory")
    return pool_runs([load_calibration_run(d) for d in results_dirs],
                     [str(d) for d in results_dirs])


def scored_stream(qrels: Mapping[str, Mapping[str, int]], run: Mapping[str, list],
                  measure: str, *, binary: bool = False, preserve_order: bool = False,
                  seed: int | None = None, query_ids: Iterable[str] | None = None,
                  label: str = "qrels/run") -> QueryStream:
    """A stream that scores each query lazily: one-query qrels and run through
    :func:`harness.evaluation.scoring.score` per value, so an early stop scores fewer queries."""
    ids = list(qrels) if query_ids is None else list(query_ids)
    missing = sorted(set(ids) - set(qrels))
    if missing:
        raise ValueError(f"{label}: queries {missing[:5]} are not in the qrels")

    def value_of(query_id: str) -> float | None:
        one_run = {query_id: run[query_id]} if query_id in run else {}
        result = scoring.score({query_id: qrels[query_id]}, one_run, [measure],
                               binary=binary, preserve_order=preserve_order)
        values = result.per_query.get(query_id)
        return None if values is None else values[measure]

    return QueryStream(ids, value_of, seed=seed, label=label)
