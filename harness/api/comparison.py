"""``harness.compare``: several runs on one set of qrels, with intervals and paired tests.

Each run is scored as ``harness score`` scores it (named after its key), and the statistics
are those of ``harness intervals ARM... --control CONTROL`` (:mod:`harness.evaluation.family`)
over the files those runs would write, so ``Comparison.write(dir)`` writes what the two
commands write and the numbers shown are the numbers in those files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping

from harness.api.evaluation import DEFAULT_CORPUS, Evaluation, measure_names
from harness.api.latex import export_of, latex_of
from harness.api.tables import html_table, tier_note
from harness.claims import IntervalsClaim, claim_from_dict, write_claim
from harness.core.tiers import UNKNOWN_LICENCE, most_restrictive_tier
from harness.evaluation.family import (StatsOptions, comparisons_document, intervals_document,
                                       resolution_rows, write_family)
from harness.evaluation.inputs import read_classes_input, read_qrels_input, read_run_input
from harness.evaluation.scored_run import KEEP_RANKINGS, score_run

#: the columns of :meth:`Comparison.to_dataframe` taken from a comparisons row
TEST_COLUMNS = ("delta", "delta_lower", "delta_upper", "delta_confidence", "unadjusted_lower",
                "unadjusted_upper", "p", "p_holm", "p_floor", "p_holm_floor", "family_size",
                "verdict", "discordant", "improved", "worsened", "method")
RESOLUTION_COLUMNS = ("sd_delta", "mde", "power_at_delta", "queries_needed")
INTEGER_COLUMNS = ("n", "family_size", "discordant", "improved", "worsened", "queries_needed")


def _as_written(doc: Mapping, source: str) -> dict:
    """A statistics document as its file holds it (validated, floats at 10 decimals)."""
    return json.loads(claim_from_dict(doc, source).canonical_json())


def _check_name(name) -> str:
    if not isinstance(name, str) or not name or name in (".", "..") or name.startswith(".") \
            or "/" in name or "\\" in name or name != name.strip():
        raise ValueError(f"runs: system name {name!r} must be a plain directory name (it "
                         "names the run and its results directory)")
    return name


class Comparison:
    """Systems x measures against a control: intervals, paired tests, Holm, floors, power.

    * :attr:`evaluations` (``{name: Evaluation}``), :attr:`intervals` (``{name:
      intervals.json}``), :attr:`comparisons` (comparisons.json), :attr:`resolution`;
    * :meth:`to_dataframe`, :meth:`to_latex`, :meth:`write`.
    """

    def __init__(self, evaluations: dict[str, Evaluation], control: str,
                 intervals: dict[str, dict], comparisons: dict | None,
                 resolution: list[dict], options: StatsOptions,
                 measures: tuple[str, ...] | None = None):
        self.evaluations = evaluations
        #: the measures asked for: a table's default columns (every run also reports
        #: Judged@10, which a table shows only when asked or when no measures were given)
        self.measures = measures
        self.control = control
        self.intervals = intervals
        self.comparisons = comparisons
        self.resolution = resolution
        self.options = options

    @property
    def arms(self) -> list[str]:
        return [n for n in self.evaluations if n != self.control]

    @property
    def tier(self) -> str:
        return most_restrictive_tier(e.tier for e in self.evaluations.values())

    def to_dataframe(self):
        """One row per system x corpus x class x measure: the mean and its interval, and
        for an arm the test against the control (delta and its paired interval, p, Holm p,
        floors, verdict) and what the gold set could resolve (sd of the differences, the
        minimum detectable effect, the power at the observed delta, the queries it needs).
        The control's test columns are empty."""
        import pandas as pd

        tests = {(r["arm"], r["corpus"], r["query_class"], r["measure"]): r
                 for r in (self.comparisons or {}).get("rows", [])}
        power = {(r["arm"], r["corpus"], r["query_class"], r["measure"]): r for r in self.resolution}
        records = []
        for name in self.evaluations:
            for iv in self.intervals[name]["rows"]:
                key = (name, iv["corpus"], iv["query_class"], iv["measure"])
                test, res = tests.get(key, {}), power.get(key, {})
                records.append({
                    "system": name, "control": name == self.control, "corpus": iv["corpus"],
                    "tier": test.get("tier", iv["tier"]), "query_class": iv["query_class"],
                    "measure": iv["measure"], "n": iv["n"], "mean": iv["estimate"],
                    "lower": iv["lower"], "upper": iv["upper"], "interval_method": iv["method"],
                    **{c: test.get(c) for c in TEST_COLUMNS},
                    **{c: res.get(c) for c in RESOLUTION_COLUMNS}})
        frame = pd.DataFrame(records)
        # counts stay integers beside the control's empty cells
        return frame.astype({c: "Int64" for c in INTEGER_COLUMNS})

    def _table(self, measures=None, query_class: str = "all"):
        measures = list(measures or self.measures or self.evaluations[self.control].measures)
        frame = self.to_dataframe()
        corpus = self.evaluations[self.control].headline_corpus
        head = ["system", *measures]
        rows = []
        for name in self.evaluations:
            cells = [name + (" (control)" if name == self.control else "")]
            for m in measures:
                hit = frame[(frame.system == name) & (frame.corpus == corpus)
                            & (frame.query_class == query_class) & (frame.measure == m)]
                if hit.empty:
                    cells.append(None)
                    continue
                r = hit.iloc[0]
                mark = ""
                if name != self.control and r["verdict"] == "significant":
                    mark = "*"
                cells.append(f"{r['mean']:.4f}{mark} [{r['lower']:.4f}, {r['upper']:.4f}]")
            rows.append(cells)
        return head, rows

    def export(self, *, measures=None, caption: str | None = None, label: str | None = None,
               columns: int = 1, query_class: str | None = None):
        """The comparison as the warehouse's export of the same runs
        (:func:`warehouse.exports.assemble`): what ``python -m warehouse export --control``
        (``--class`` for ``query_class``) and the dashboard render, built from these runs in
        memory."""
        return export_of(self.evaluations, self.control, self.intervals, self.comparisons,
                         measures=measures or self.measures, caption=caption, label=label,
                         columns=columns,
                         query_class=query_class)

    def to_latex(self, caption: str | None = None, label: str | None = None, *,
                 measures=None, columns: int = 1, query_class: str | None = None) -> str:
        """The paste-ready LaTeX of these runs against the control: the same renderer, and
        the same bytes, as ``python -m warehouse export --format latex --control`` and the
        dashboard's LaTeX download of the same runs (:mod:`warehouse.latex`).  Every query
        class by default; ``query_class`` keeps that one (``--class``)."""
        return latex_of(self.export(measures=measures, caption=caption, label=label,
                                    columns=columns, query_class=query_class))

    def _repr_html_(self) -> str:
        head, rows = self._table()
        family = self.comparisons["family_note"] if self.comparisons else "no arms"
        return html_table(head, rows, caption=f"against {self.control} · {family} · "
                                              f"{tier_note(self.tier)}")

    def __repr__(self) -> str:
        return (f"<Comparison control={self.control!r} arms={self.arms} tier={self.tier} "
                f"seed={self.options.seed}>")

    def write(self, out) -> Path:
        """Write ``out/NAME/`` for every system: the results directory ``harness score``
        writes, its ``intervals.json`` and, in every arm's, the family's
        ``comparisons.json``: what ``harness intervals ARM... --control CONTROL`` (and
        ``harness intervals CONTROL`` for the control's intervals) writes."""
        out = Path(out)
        for name, evaluation in self.evaluations.items():
            evaluation.write(out / name)
        write_claim(out / self.control / IntervalsClaim.RESULTS_FILE, self.intervals[self.control])
        write_family([out / a for a in self.arms], [self.intervals[a] for a in self.arms],
                     self.comparisons)
        return out


def compare(runs: Mapping[str, object], qrels, measures=None, *, control: str | None = None,
            confidence: float = 0.95, resamples: int = 10000, seed: int = 0, query_classes=None,
            permutations: int = 10000, alpha: float = 0.05, method: str = "bca",
            binary_relevance: bool = False, preserve_order: bool = False,
            corpus: str | None = None, licence: str | None = None, tier: str | None = None,
            keep_rankings: int | None = KEEP_RANKINGS) -> Comparison:
    """Score every run of ``runs`` (``{name: run}``, any form :func:`harness.evaluate`
    takes) against ``qrels`` and compare the arms with ``control`` (default: the first
    run): intervals per system, a paired randomization test per arm, Holm over the arms.
    The defaults are ``harness intervals``'s; the same seed gives the same bytes."""
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs: expected a non-empty dict {name: run}")
    names = [_check_name(n) for n in runs]
    control = names[0] if control is None else control
    if control not in runs:
        raise ValueError(f"control {control!r} is not one of the runs {names}")
    options = StatsOptions(seed=seed, resamples=resamples, permutations=permutations,
                           confidence=confidence, alpha=alpha, method=method)
    q = read_qrels_input(qrels)
    classes, classes_label = ({}, "query_classes") if query_classes is None \
        else read_classes_input(query_classes)
    evaluations, recorded = {}, {}
    for name in names:
        r = read_run_input(runs[name], label=f"run {name!r}")
        scored = score_run(
            q.judgements, r.run, measure_names(measures), corpus=corpus or q.stem or DEFAULT_CORPUS,
            control_name=name, qrels_sha256=q.sha256, run_sha256=r.sha256, run_source=r.source,
            licence=UNKNOWN_LICENCE if licence is None else licence, tier=tier,
            query_classes=classes, classes_source=classes_label, binary=binary_relevance,
            preserve_order=preserve_order, keep_rankings=keep_rankings)
        evaluations[name] = Evaluation(scored, named=True, command="harness.compare")
        recorded[name] = evaluations[name].recorded()
    intervals = {n: _as_written(intervals_document(recorded[n], options), f"{n}/intervals.json")
                 for n in names}
    arms = [recorded[n] for n in names if n != control]
    comparisons, resolution = None, []
    if arms:
        doc = comparisons_document(recorded[control], arms, options)
        comparisons = _as_written(doc, "comparisons.json")
        resolution = resolution_rows(recorded[control], arms, comparisons)
    chosen = measure_names(measures)
    return Comparison(evaluations, control, intervals, comparisons, resolution, options,
                      measures=tuple(chosen) if chosen else None)
