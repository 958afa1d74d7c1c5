"""Calibration data: ``calibration.jsonl`` in a results directory, one canonical line per query.

Each line::

    {"corpus": str, "tier": "A"|"B"|"C", "query_id": str, "query_class": str|null,
     "stage": "retrieve"|"rerank",
     "scores": [float, ...],        # top candidate scores of the stage that selects context,
                                    # in the stage's order, at most K_MAX = 50
     "relevant": [bool, ...],       # same length: is each candidate relevant (grade > 0)
     "first_relevant_rank": int|null}  # 1-based rank among ALL candidates, null if none

``harness bench`` builds rows with :func:`calibration_row` and writes them with
:func:`calibration_text` (into ``write_results(extra_files=...)``) or
:func:`write_calibration_rows`.  :func:`read_calibration` is strict: a bad line raises
:class:`~harness.core.formats.FormatError` naming the file, line and field before anything is used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from harness.claims.calibration import (CALIBRATION_JSONL, K_MAX, CalibrationRow, validate_row)
from harness.core.canonical import canonical_lines
from harness.core.formats import FormatError, read_jsonl
from harness.core.atomic import write_files



def calibration_row(*, corpus: str, tier: str, query_id: str, query_class: str | None,
                    stage: str, scores: Sequence[float], relevant: Sequence[bool],
                    first_relevant_rank: int | None = None, k_max: int = K_MAX) -> dict:
    """One validated calibration line (a dict) from a stage's candidate list.

    ``scores`` and ``relevant`` may hold every candidate of the stage (in its order): the
    first relevant rank is taken over all of them, then both lists are cut to ``k_max``.
    Pass ``first_relevant_rank`` when it is known from a longer list than the one given.
    """
    if len(scores) != len(relevant):
        raise ValueError(f"query {query_id!r}: {len(scores)} scores but {len(relevant)} relevance flags")
    if not 1 <= k_max <= K_MAX:
        raise ValueError(f"k_max must be in 1..{K_MAX}, got {k_max}")
    flags = [bool(r) for r in relevant]
    if first_relevant_rank is None:
        first_relevant_rank = next((i + 1 for i, r in enumerate(flags) if r), None)
    row = {
        "corpus": corpus, "tier": tier, "query_id": query_id, "query_class": query_class,
        "stage": stage, "scores": [float(s) for s in scores[:k_max]], "relevant": flags[:k_max],
        "first_relevant_rank": first_relevant_rank,
    }
    validate_row(row, f"<calibration row for query {query_id!r}>")
    return row


def _sorted_checked(rows: Iterable[Mapping]) -> list[dict]:
    checked = [validate_row(r, "<calibration rows>", i + 1).to_dict() for i, r in enumerate(rows)]
    if not checked:
        raise ValueError("no calibration rows to write: a calibration file holds at least one query")
    checked.sort(key=lambda r: (r["corpus"], r["query_id"]))
    for a, b in zip(checked, checked[1:]):
        if (a["corpus"], a["query_id"]) == (b["corpus"], b["query_id"]):
            raise ValueError(f"duplicate calibration row for corpus {a['corpus']!r}, "
                             f"query {a['query_id']!r}")
    return checked


def calibration_text(rows: Iterable[Mapping]) -> str:
    """Canonical JSONL text of ``rows``, sorted by (corpus, query_id), each line validated."""
    return canonical_lines(_sorted_checked(rows))


def write_calibration_rows(path, rows: Iterable[Mapping]) -> Path:
    """Write ``rows`` as canonical ``calibration.jsonl`` atomically; returns the path."""
    path = Path(path)
    if path.is_dir():
        path = path / CALIBRATION_JSONL
    write_files([(path, calibration_text(rows))])
    return path


def read_calibration(path) -> list[CalibrationRow]:
    """Every row of a ``calibration.jsonl`` (a file or its results directory), strictly.

    Refuses: an unknown or missing field, a wrong type, more than K_MAX scores, lists of
    different lengths, a first relevant rank that contradicts ``relevant``, a duplicate
    ``(corpus, query_id)``, and rows from two stages in one file.
    """
    path = Path(path)
    if path.is_dir():
        path = path / CALIBRATION_JSONL
    rows: list[CalibrationRow] = []
    seen: dict[tuple[str, str], int] = {}
    for line, obj in read_jsonl(path):
        row = validate_row(obj, path, line)
        key = (row.corpus, row.query_id)
        if key in seen:
            raise FormatError(path, line, "query_id",
                              f"duplicate row for corpus {row.corpus!r}, query {row.query_id!r}; "
                              f"first seen on line {seen[key]}")
        seen[key] = line
        if rows and row.stage != rows[0].stage:
            raise FormatError(path, line, "stage",
                              f"stage {row.stage!r} differs from {rows[0].stage!r} on earlier lines: "
                              "a certificate is calibrated on one stage")
        rows.append(row)
    return rows


@dataclass(frozen=True)
class CalibrationRun:
    """The calibration rows of one results directory with the claim they belong to."""

    rows: tuple[CalibrationRow, ...]
    metrics: dict
    run_id: str
    calibration_sha256: str

    @property
    def stage(self) -> str:
        return self.rows[0].stage
