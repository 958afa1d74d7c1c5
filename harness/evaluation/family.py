"""Intervals and paired tests over a family of runs, as ``harness intervals [--control]``
writes them and ``harness.compare`` returns them: one computation for both.

A run reaches the statistics as a :class:`RecordedRun`: its metrics.json document and its
per-query rows exactly as the results directory holds them (values rounded to the stored
10 decimals), read from a directory (:func:`recorded_from_dir`) or from the rendered text
of one not yet written (:func:`recorded_from_files`), so a comparison computed in memory
and one computed from the written files are equal to the byte.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Mapping, Sequence

from harness.claims import ComparisonsClaim, IntervalsClaim, write_claim
from harness.claims.metrics import METRICS_JSON, PER_QUERY, check_per_query_row, run_id, validate_metrics
from harness.core.formats import FormatError
from harness.core.outputs import check_file, is_document
from harness.core.signing import extend_signature
from harness.evaluation.results import load_metrics, load_per_query
from harness.stats.intervals import row_intervals
from harness.stats.perquery import PerQueryIndex
from harness.stats.randomization import RunValues, compare_runs
from harness.stats.resolution import resolution


@dataclasses.dataclass(frozen=True)
class StatsOptions:
    """The knobs of ``harness intervals``, with its defaults."""

    seed: int = 0
    resamples: int = 10000
    permutations: int = 10000
    confidence: float = 0.95
    alpha: float = 0.05
    method: str = "bca"
    #: measures to report (None: every measure recorded)
    measures: tuple[str, ...] | None = None


@dataclasses.dataclass(frozen=True)
class RecordedRun:
    """A run's claim and per-query rows as its results directory holds them."""

    metrics: dict
    per_query: list[dict]
    claim_source: str
    values_source: str

    @property
    def name(self) -> str:
        return str(self.metrics["control_name"])

    def values(self) -> RunValues:
        index = PerQueryIndex(self.per_query, source=self.values_source)
        return RunValues(self.name, run_id(self.metrics), index, self.metrics,
                         claim_source=self.claim_source, values_source=self.values_source)


def recorded_from_dir(results_dir) -> RecordedRun:
    """Read and validate a results directory's metrics.json and per_query.jsonl."""
    path = Path(results_dir)
    return RecordedRun(load_metrics(path), load_per_query(path), str(path / METRICS_JSON),
                       str(path / PER_QUERY))


def recorded_from_files(files: Mapping[str, str], where: str) -> RecordedRun:
    """The same from the rendered files of a directory ``where`` (not yet written), parsed
    as the readers parse the written files."""
    claim_source, values_source = f"{where}/{METRICS_JSON}", f"{where}/{PER_QUERY}"
    doc = json.loads(files[METRICS_JSON])
    validate_metrics(doc, source=claim_source)
    rows = []
    for line, text in enumerate(files[PER_QUERY].splitlines(), start=1):
        if not text.strip():
            continue
        obj = json.loads(text)
        if not isinstance(obj, dict):
            raise FormatError(values_source, line, None, "expected a JSON object")
        rows.append(dict(check_per_query_row(obj, values_source, line)))
    return RecordedRun(doc, rows, claim_source, values_source)


def intervals_document(run: RecordedRun, options: StatsOptions) -> dict:
    """The ``intervals.json`` of one run."""
    return row_intervals(run.metrics, run.per_query, seed=options.seed,
                         resamples=options.resamples, confidence=options.confidence,
                         method=options.method, measures=options.measures,
                         source=run.values_source)


def comparisons_document(control: RecordedRun, arms: Sequence[RecordedRun],
                         options: StatsOptions) -> dict:
    """The ``comparisons.json`` of ``arms`` against ``control``: one Holm family."""
    return compare_runs(control.values(), [a.values() for a in arms], options.measures,
                        seed=options.seed, permutations=options.permutations,
                        alpha=options.alpha, confidence=options.confidence,
                        resamples=options.resamples, interval_method=options.method)


def resolution_rows(control: RecordedRun, arms: Sequence[RecordedRun], comparisons: Mapping,
                    alpha: float | None = None) -> list[dict]:
    """For each row of ``comparisons``: what its paired differences could resolve
    (:func:`harness.stats.resolution.resolution`), keyed like the row."""
    ctl = control.values().index
    by_name = {a.name: a.values().index for a in arms}
    alpha = comparisons["alpha"] if alpha is None else alpha
    out = []
    for row in comparisons["rows"]:
        keys = ctl.keys(row["corpus"], row["query_class"])
        d = by_name[row["arm"]].values(keys, row["measure"]) - ctl.values(keys, row["measure"])
        out.append({"corpus": row["corpus"], "query_class": row["query_class"],
                    "measure": row["measure"], "arm": row["arm"],
                    **resolution(d, alpha=alpha)})
    return out


def replaced_family(path: Path, comparisons: Mapping) -> str | None:
    """A note when ``path`` holds a comparisons document against the same control whose
    family differs from the new one (it is replaced; the warehouse keeps what it stored)."""
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(old, dict) or not isinstance(old.get("control"), dict) \
            or old["control"].get("run_id") != comparisons["control"]["run_id"]:
        return None
    before = sorted(a.get("name") for a in old.get("arms") or [] if isinstance(a, dict))
    after = sorted(a["name"] for a in comparisons["arms"])
    if before == after:
        return None
    return f"{path}: replaces a family of {len(before)} ({before}) with {len(after)} ({after})"


def write_family(dirs: Sequence[Path], intervals: Sequence[Mapping],
                 comparisons: Mapping | None) -> list[str]:
    """Write each directory's ``intervals.json`` and (with a control) the family's
    ``comparisons.json`` into every one of them; returns the notes on replaced families.
    Everything is computed before this is called, and every target is checked before any is
    written: a refusal or an interrupt leaves the old files."""
    for results in dirs:
        check_file(Path(results) / IntervalsClaim.RESULTS_FILE,
                   recognise=is_document(IntervalsClaim.KIND),
                   what="intervals document", flag="results directory")
        if comparisons is not None:
            check_file(Path(results) / ComparisonsClaim.RESULTS_FILE,
                       recognise=is_document(ComparisonsClaim.KIND),
                       what="comparisons document", flag="results directory")
    notes = []
    for results, doc in zip(dirs, intervals):
        write_claim(Path(results) / IntervalsClaim.RESULTS_FILE, doc)
        if comparisons is not None:
            note = replaced_family(Path(results) / ComparisonsClaim.RESULTS_FILE, comparisons)
            if note:
                notes.append(note)
            write_claim(Path(results) / ComparisonsClaim.RESULTS_FILE, comparisons)
        extend_signature(results)  # a signed directory stays signed (harness.core.signing)
    return notes
