"""The one corpus model every loader produces and every backend consumes.

A meeting corpus (QMSum, synthetic) has files with speaker turns; a document corpus (BEIR,
TREC) has documents.  Queries carry their class and whatever gold the corpus provides (turn
spans, document judgements, gold files, an answer).  Provenance (licence, tier, evidence,
checksum) travels with the corpus into every result row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator

from harness.core.records import Query
from harness.core.tiers import TIERS

MEETING = "meeting"
DOCUMENTS = "documents"


@dataclass(frozen=True)
class SourceInfo:
    """Provenance of a loaded corpus, as written into metrics.json ``corpora[]``."""

    name: str
    version: str | None
    licence: str
    tier: str
    evidence: str
    #: deterministic digest of the content that was loaded
    sha256: str
    citation: str | None = None
    #: registry source this corpus was matched to (None: unregistered, tier fails closed)
    registry_source: str | None = None

    def __post_init__(self):
        if self.tier not in TIERS:
            raise ValueError(f"corpus {self.name!r}: unknown tier {self.tier!r}")


@dataclass(frozen=True)
class FileRecord:
    """One meeting (or one document treated as a file)."""

    file_id: str
    title: str | None = None
    series: str | None = None
    team: str | None = None
    kind: str | None = None
    #: ISO date (YYYY-MM-DD) the meeting was recorded, when known
    recorded_date: str | None = None
    #: where ``recorded_date`` came from (e.g. "corpus-record"); None when undated
    date_source: str | None = None
    duration: float | None = None
    domain: str | None = None
    split: str | None = None
    #: "real" (measured timestamps), "synthetic" (synthesised from word counts) or "none"
    timing: str = "none"
    roster: tuple[str, ...] = ()


@dataclass(frozen=True)
class Turn:
    """One speaker turn; ``index`` is the turn's position in its file (gold spans use it)."""

    file_id: str
    index: int
    speaker: str
    start: float
    end: float
    text: str

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True)
class Document:
    """One document of a document corpus (BEIR / TREC)."""

    doc_id: str
    title: str
    text: str


@dataclass(frozen=True)
class Corpus:
    source: SourceInfo
    kind: str
    files: tuple[FileRecord, ...] = ()
    #: all turns, ordered by (file_id, start, end, index)
    turns: tuple[Turn, ...] = ()
    documents: tuple[Document, ...] = ()
    queries: tuple[Query, ...] = ()
    #: loader-specific facts reported by ``ingestion stats`` (dedup counts, splits ...)
    notes: tuple[tuple[str, object], ...] = field(default=())

    @property
    def name(self) -> str:
        return self.source.name

    def turns_by_file(self) -> dict[str, list[Turn]]:
        out: dict[str, list[Turn]] = {}
        for turn in self.turns:
            out.setdefault(turn.file_id, []).append(turn)
        return out

    def file(self, file_id: str) -> FileRecord:
        for f in self.files:
            if f.file_id == file_id:
                return f
        raise KeyError(file_id)

    def rank_queries(self) -> Iterator[Query]:
        """Queries scored on a ranking (not aggregation queries scored on their answer)."""
        return (q for q in self.queries if q.scored_on == "rank")
