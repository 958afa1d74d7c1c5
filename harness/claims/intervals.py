"""The intervals claim (``intervals.json``, ``harness intervals``): one bootstrap or exact
interval per metric row x measure of one run (docs/statistics.md)."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, ClassVar, Mapping

from harness.claims import base as b
from harness.claims.metrics import INTERVALS_JSON
from harness.claims.metrics import run_id as metrics_run_id
from harness.core.measures import measure_range

#: an interval's estimate must reproduce metrics.json's row (both round to 10 decimals)
ESTIMATE_TOLERANCE = 1e-6

COLUMNS: b.Columns = (
    ("document_id", "string"), ("run_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("query_class", "string"), ("measure", "string"), ("estimate", "double"),
    ("lower", "double"), ("upper", "double"), ("method", "string"), ("n", "int64"),
    ("confidence", "double"), ("seed", "int64"), ("resamples", "int64"),
    ("degenerate", "bool"), ("ingested_at", "timestamp"))

ROW_FIELDS = ("corpus", "tier", "query_class", "measure", "estimate", "lower", "upper",
              "method", "confidence", "n", "seed", "resamples", "degenerate")


@dataclasses.dataclass(frozen=True)
class IntervalsClaim(b.Claim):
    KIND: ClassVar[str] = "intervals"
    RESULTS_FILE: ClassVar[str] = INTERVALS_JSON
    TABLES: ClassVar[Mapping[str, b.Columns]] = {"intervals": COLUMNS}

    run_id: str
    confidence: float
    rows: list[b.JSON]
    kind: str = "intervals"
    schema_version: int = 1
    control_name: Any = b.ABSENT
    method: Any = b.ABSENT
    binary_method: Any = b.ABSENT
    seed: Any = b.ABSENT
    resamples: Any = b.ABSENT
    stream: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        """Header, run id, and each row: its fields, bounds inside the measure's range and
        around its estimate; no (corpus, class, measure) twice."""
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        b.need(doc, ("run_id", "confidence", "rows"), source)
        b.run_id_value(doc["run_id"], source, "run_id")
        b.number(doc["confidence"], source, "confidence", lo=0, hi=1)
        rows = b.seq(doc["rows"], source, "rows")
        for i, row in enumerate(rows):
            w = f"rows[{i}]."
            b.mapping(row, source, f"rows[{i}]")
            b.need(row, ROW_FIELDS, source, w)
            for name in ("corpus", "query_class", "measure", "method"):
                b.text(row[name], source, w + name)
            b.tier(row["tier"], source, w + "tier")
            lo_range, hi_range = measure_range(row["measure"])
            est = b.number(row["estimate"], source, w + "estimate", lo=lo_range, hi=hi_range)
            lo = b.number(row["lower"], source, w + "lower", lo=lo_range, hi=hi_range)
            hi = b.number(row["upper"], source, w + "upper", lo=lo_range, hi=hi_range)
            if not b.within(est, lo, hi):
                b.fail(source, w + "estimate",
                       f"{est!r} lies outside its own interval [{lo!r}, {hi!r}]")
            b.number(row["confidence"], source, w + "confidence", lo=0, hi=1)
            b.integer(row["n"], source, w + "n", lo=1)
            b.integer(row["seed"], source, w + "seed", nullable=True)
            b.integer(row["resamples"], source, w + "resamples", nullable=True, lo=1)
            b.flag(row["degenerate"], source, w + "degenerate")
        b.unique([(r["corpus"], r["query_class"], r["measure"]) for r in rows], source,
                 "corpus, class, measure")

    def referenced_runs(self) -> tuple[str, ...]:
        return (self.run_id,)

    def claimed_tier(self) -> str | None:
        from harness.core.tiers import most_restrictive_tier

        return most_restrictive_tier(r["tier"] for r in self.rows) if self.rows else None

    def check_against_run(self, metrics: Mapping[str, Any], source: str) -> None:
        """The document belongs to this run and reproduces its rows."""
        rid = metrics_run_id(metrics)
        if self.run_id != rid:
            b.fail(source, "run_id", f"{self.run_id} is not this run's id ({rid}): the "
                                     "intervals were computed for another metrics.json")
        rows = {(r["corpus"], r["query_class"]): r for r in metrics["rows"]}
        for i, r in enumerate(self.rows):
            w = f"rows[{i}]."
            claim = rows.get((r["corpus"], r["query_class"]))
            if claim is None:
                b.fail(source, w + "corpus", f"metrics.json has no row ({r['corpus']}, "
                                             f"{r['query_class']})")
            if r["tier"] != claim["tier"]:
                b.fail(source, w + "tier", f"tier {r['tier']!r} disagrees with metrics.json's "
                                           f"{claim['tier']!r} for ({r['corpus']}, "
                                           f"{r['query_class']})")
            if r["n"] != claim["n"]:
                b.fail(source, w + "n", f"n = {r['n']} but metrics.json says {claim['n']}")
            if r["measure"] not in claim["metrics"]:
                b.fail(source, w + "measure", f"{r['measure']!r} is not reported in metrics.json")
            if abs(r["estimate"] - float(claim["metrics"][r["measure"]])) > ESTIMATE_TOLERANCE:
                b.fail(source, w + "estimate", f"{r['estimate']!r} differs from metrics.json's "
                                               f"{claim['metrics'][r['measure']]!r}")

    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> b.TableRows:
        return {"intervals": [{
            "document_id": document_id, "run_id": self.run_id, "corpus": r["corpus"],
            "tier": r["tier"], "query_class": r["query_class"], "measure": r["measure"],
            "estimate": r["estimate"], "lower": r["lower"], "upper": r["upper"],
            "method": r["method"], "n": r["n"], "confidence": r["confidence"],
            "seed": r["seed"], "resamples": r["resamples"], "degenerate": r["degenerate"],
            "ingested_at": stamp} for r in self.rows]}
