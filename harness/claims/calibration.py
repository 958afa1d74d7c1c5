"""The calibration records (``calibration.jsonl`` beside a bench run's metrics.json): per
query, the candidate scores of the stage that selects context and whether each is relevant
(docs/certificates.md).  Each line::

    {"corpus": str, "tier": "A"|"B"|"C", "query_id": str, "query_class": str|null,
     "stage": "retrieve"|"rerank",
     "scores": [float, ...],        # top candidate scores, in the stage's order, <= K_MAX
     "relevant": [bool, ...],       # same length: is each candidate relevant (grade > 0)
     "first_relevant_rank": int|null}  # 1-based rank among ALL candidates, null if none
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar, Mapping, NoReturn, Self

from harness.claims import base as b
from harness.claims.metrics import CALIBRATION_JSONL, effective_tiers
from harness.core.formats import FormatError
from harness.core.tiers import TIERS

#: most candidates a record keeps (and a certificate's set can hold)
K_MAX = 50
STAGES: tuple[str, ...] = ("retrieve", "rerank")
FIELDS: tuple[str, ...] = ("corpus", "tier", "query_id", "query_class", "stage", "scores",
                           "relevant", "first_relevant_rank")

COLUMNS: b.Columns = (
    ("run_id", "string"), ("corpus", "string"), ("tier", "string"), ("query_id", "string"),
    ("query_class", "string"), ("stage", "string"), ("first_relevant_rank", "int32"),
    ("top_score", "double"), ("candidates", "int32"), ("scores", "double_list"),
    ("relevant", "bool_list"))


@dataclass(frozen=True)
class CalibrationRow:
    """One query's calibration record (validated)."""

    corpus: str
    tier: str
    query_id: str
    query_class: str | None
    stage: str
    scores: tuple[float, ...]
    relevant: tuple[bool, ...]
    first_relevant_rank: int | None
    #: line of the file the row was read from (0 when built in memory)
    line: int = field(default=0, compare=False)

    @property
    def rank_in_list(self) -> int | None:
        """1-based rank of the first relevant candidate within ``scores``, else None."""
        rank = self.first_relevant_rank
        return rank if rank is not None and rank <= len(self.scores) else None

    @property
    def top_score(self) -> float | None:
        return self.scores[0] if self.scores else None

    def to_dict(self) -> b.JSON:
        return {
            "corpus": self.corpus, "tier": self.tier, "query_id": self.query_id,
            "query_class": self.query_class, "stage": self.stage,
            "scores": list(self.scores), "relevant": list(self.relevant),
            "first_relevant_rank": self.first_relevant_rank,
        }


def _finite(value: float) -> bool:
    """Whether ``value`` is a finite double (an integer too large for one is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _finite_sum(values: list[float]) -> bool:
    try:
        return math.isfinite(sum(values))
    except OverflowError:
        return False


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def validate_row(obj: object, path: b.SourceName = "<calibration row>",
                 line: int | None = None) -> CalibrationRow:
    """A :class:`CalibrationRow` from a decoded line, or FormatError naming the field."""
    def fail(name: str | None, message: str) -> NoReturn:
        raise FormatError(path, line, name, message)

    if not isinstance(obj, Mapping):
        fail(None, f"expected a JSON object, got {type(obj).__name__}")
    unknown = sorted(set(obj) - set(FIELDS))
    if unknown:
        fail(unknown[0], f"unknown field; expected only {sorted(FIELDS)}")
    for name in FIELDS:
        if name not in obj:
            fail(name, "missing")
    for name in ("corpus", "query_id"):
        if not isinstance(obj[name], str) or not obj[name]:
            fail(name, f"must be a non-empty string, got {obj[name]!r}")
    if obj["tier"] not in TIERS:
        fail("tier", f"unknown tier {obj['tier']!r}; expected one of {sorted(TIERS)}")
    cls = obj["query_class"]
    if cls is not None and (not isinstance(cls, str) or not cls):
        fail("query_class", f"must be a non-empty string or null, got {cls!r}")
    if obj["stage"] not in STAGES:
        fail("stage", f"unknown stage {obj['stage']!r}; expected one of {sorted(STAGES)}")
    scores = obj["scores"]
    if not isinstance(scores, list):
        fail("scores", f"must be a list of numbers, got {type(scores).__name__}")
    if len(scores) > K_MAX:
        fail("scores", f"holds {len(scores)} candidates; at most K_MAX = {K_MAX}")
    # every element at once (a finite sum: no value is infinite or NaN); one by one only to
    # name the first bad one
    if not (set(map(type, scores)) <= {float, int} and _finite_sum(scores)):
        for i, value in enumerate(scores):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value):
                fail(f"scores[{i}]", f"must be a finite number, got {_short(value)}")
    relevant = obj["relevant"]
    if not isinstance(relevant, list) or len(relevant) != len(scores):
        fail("relevant", f"must be a list of {len(scores)} booleans (one per score)")
    if not set(map(type, relevant)) <= {bool}:
        for i, value in enumerate(relevant):
            if not isinstance(value, bool):
                fail(f"relevant[{i}]", f"must be true or false, got {value!r}")
    rank = obj["first_relevant_rank"]
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 1):
        fail("first_relevant_rank", f"must be a positive integer or null, got {rank!r}")
    first_in_list = relevant.index(True) + 1 if True in relevant else None
    if first_in_list is not None and rank != first_in_list:
        fail("first_relevant_rank",
             f"is {rank!r} but the first relevant candidate in 'relevant' is at rank {first_in_list}")
    if first_in_list is None and rank is not None and rank <= len(scores):
        fail("first_relevant_rank",
             f"is {rank} but 'relevant' marks no relevant candidate among the first {len(scores)}")
    return CalibrationRow(obj["corpus"], obj["tier"], obj["query_id"], cls, obj["stage"],
                          tuple(map(float, scores)), tuple(relevant), rank, line or 0)


@dataclasses.dataclass(frozen=True)
class CalibrationClaim(b.Claim):
    """The records of one run (a JSONL file, so its document is the list of lines)."""

    KIND: ClassVar[str] = "calibration"
    RESULTS_FILE: ClassVar[str] = CALIBRATION_JSONL
    TABLES: ClassVar[Mapping[str, b.Columns]] = {"calibration": COLUMNS}

    rows: list[b.JSON]

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        rows = b.seq(doc, source, None)
        if not rows:
            b.fail(source, None, "holds no calibration row")
        for i, obj in enumerate(rows, start=1):
            validate_row(obj, source, i)

    @classmethod
    def from_dict(cls, doc: Any, source: str | None = None) -> Self:
        source = source or CALIBRATION_JSONL
        cls.validate(doc, source)
        return cls(rows=b.canonical(list(doc)))

    # A JSONL file: its document is the list of its lines, not one object, so this returns a
    # list where Claim.to_dict returns an object (an incompatible override, kept on purpose:
    # what Claim does with to_dict(), encode and hash it, holds for a list too).
    def to_dict(self) -> list[b.JSON]:  # type: ignore[override]
        return [dict(r) for r in self.rows]

    def check_against_run(self, metrics: Mapping[str, Any], source: str) -> None:
        """Each line's corpus and tier as metrics.json declares them, one stage (the
        run's), no query twice."""
        tiers = effective_tiers(metrics)
        stage = (metrics.get("retrieval") or {}).get("stage")
        seen: dict[tuple[str, str], int] = {}
        first_stage = None
        for i, row in enumerate(self.rows, start=1):
            if row["corpus"] not in tiers:
                b.fail(source, "corpus", f"{row['corpus']!r} is not listed in metrics.json "
                                         f"corpora {sorted(tiers)}", i)
            if row["tier"] != tiers[row["corpus"]]:
                b.fail(source, "tier", f"tier {row['tier']!r} disagrees with metrics.json, "
                                       f"where corpus {row['corpus']!r} is tier "
                                       f"{tiers[row['corpus']]}", i)
            key = (row["corpus"], row["query_id"])
            if key in seen:
                b.fail(source, "query_id", f"query {row['query_id']!r} of corpus "
                                           f"{row['corpus']!r} repeats line {seen[key]}", i)
            seen[key] = i
            first_stage = first_stage or row["stage"]
            if row["stage"] != first_stage or (stage is not None and row["stage"] != stage):
                b.fail(source, "stage", f"stage {row['stage']!r} differs from the run's "
                                        f"{stage or first_stage!r}", i)

    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> b.TableRows:
        return {"calibration": [{
            "run_id": run_id, "corpus": r["corpus"], "tier": r["tier"],
            "query_id": r["query_id"], "query_class": r["query_class"], "stage": r["stage"],
            "first_relevant_rank": r["first_relevant_rank"],
            "top_score": float(r["scores"][0]) if r["scores"] else None,
            "candidates": len(r["scores"]), "scores": [float(x) for x in r["scores"]],
            "relevant": [bool(x) for x in r["relevant"]]} for r in self.rows]}
