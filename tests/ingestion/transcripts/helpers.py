"""Hand-built corpora for the transcript-store and answer tests."""

from __future__ import annotations

from ingestion.corpus import DOCUMENTS, MEETING, Corpus, Document, FileRecord, SourceInfo, Turn


def source(name: str = "tiny", sha: str = "0" * 64, tier: str = "A") -> SourceInfo:
    return SourceInfo(name=name, version="test", licence="CC0-1.0", tier=tier,
                      evidence="built by the test", sha256=sha)


def meeting_corpus(files, turns, *, name: str = "tiny", sha: str = "0" * 64, queries=(),
                   tier: str = "A") -> Corpus:
    return Corpus(source=source(name, sha, tier), kind=MEETING, files=tuple(files),
                  turns=tuple(turns), queries=tuple(queries))


def file(file_id: str, *, title=None, team=None, kind=None, recorded_date=None,
         roster=()) -> FileRecord:
    return FileRecord(file_id=file_id, title=title, series=None if team is None else
                      f"{team} — {kind}", team=team, kind=kind, recorded_date=recorded_date,
                      date_source=None if recorded_date is None else "corpus-record",
                      duration=10.0, roster=tuple(roster))


def turn(file_id: str, index: int, speaker: str, start: float, end: float, text: str) -> Turn:
    return Turn(file_id, index, speaker, start, end, text)


def document_corpus(name: str = "docs") -> Corpus:
    docs = (Document("d2", "Second", "Text two."), Document("d1", "", "Text one."))
    return Corpus(source=source(name, "1" * 64), kind=DOCUMENTS, documents=docs)
