"""Gold turn ranges -> graded chunk judgements (DESIGN.md, "Gold turn ranges -> chunk
judgements"; the methodology's qrels rule).

For a meeting corpus, a chunk's *coverage* for a query is gold words in it / words in it.
Each source turn of the chunk's own speaker contributes ``word_count x share``, where the
share is the part of the turn inside the chunk: taken from the chunk's ``turn_fractions``
when the chunk records its turns, else from time overlap (seconds of the turn inside the
chunk's window / turn duration).  Turns of other speakers never count, even when they
overlap the chunk in time (overlapping speech, backchannels).  A query's spans in one file
are unioned before grading, so adjacent spans that each fall short can clear the threshold
together.  Grade 2 if coverage >= ``relevance_high``, 1 if coverage > ``relevance_low``,
else 0 (not written); ``binary`` collapses 2 and 1 to 1.  Under linear gain a 2 is worth
exactly twice a 1.

For a document corpus the judgements come straight from the corpus's ``gold_docs``
(``binary`` collapses positive grades to 1), restricted to documents that were chunked.

A rank-scored query whose gold maps to no judged chunk is dropped and counted, never scored
as zero.  Aggregation queries (``scored_on="answer"``) are not judged here, and neither are digest
documents (``doc_type="digest"``): judging them would need a second relevance rule.  A
whole-file document (``granularity="file"``) is graded by the same coverage rule over all of
its turns; :func:`file_qrels` gives the plain file-level gold instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.core.records import Chunk
from ingestion.corpus import DOCUMENTS, Corpus


@dataclass(frozen=True)
class RelevancePolicy:
    """Coverage thresholds and grading; written into every results file via :meth:`block`."""

    relevance_high: float = 0.5
    relevance_low: float = 0.0
    binary: bool = False

    def __post_init__(self):
        for name in ("relevance_high", "relevance_low"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number, got {value!r}")
        if not 0.0 <= self.relevance_low < self.relevance_high <= 1.0:
            raise ValueError("expected 0 <= relevance_low < relevance_high <= 1, got "
                             f"low={self.relevance_low!r}, high={self.relevance_high!r}")

    def grade(self, coverage: float) -> int:
        if coverage >= self.relevance_high:
            grade = 2
        elif coverage > self.relevance_low:
            grade = 1
        else:
            return 0
        return 1 if self.binary else grade

    def block(self) -> dict:
        """The ``relevance_policy`` block of metrics.json."""
        return {
            "graded_from": ("gold turn-range coverage (word-weighted, speaker-restricted, spans "
                            "unioned per file); document corpora: the corpus's own judgements"),
            "gain": "linear",
            "binary": self.binary,
            "relevance_high": float(self.relevance_high),
            "relevance_low": float(self.relevance_low),
            "negative_labels": "judged non-relevant (relevance 0)",
        }


@dataclass(frozen=True)
class Judgements:
    #: query_id -> doc_id -> grade (> 0 for meeting corpora; as given for document corpora)
    qrels: dict[str, dict[str, int]]
    #: rank-scored queries whose gold maps to no judged document, sorted
    dropped: tuple[str, ...]
    #: (query_id, doc_id) -> coverage, for every chunk with coverage > 0 (diagnostics)
    coverage: dict[tuple[str, str], float] = field(default_factory=dict)
    #: document-corpus judgements naming a document that was not chunked
    unmatched_judgements: int = 0


def _contributions(chunk: Chunk, turns_by_index: dict, file_turns: list) -> list[tuple[int, float]]:
    """``[(turn_index, words x share)]`` of the chunk's own speaker (module docstring)."""
    out = []
    if chunk.turn_indexes:
        if len(chunk.turn_fractions) != len(chunk.turn_indexes):
            raise ValueError(f"chunk {chunk.doc_id!r}: turn_fractions and turn_indexes differ in length")
        for index, share in zip(chunk.turn_indexes, chunk.turn_fractions):
            turn = turns_by_index.get(index)
            if turn is None:
                raise ValueError(f"chunk {chunk.doc_id!r}: turn {index} is not in file {chunk.file_id!r}")
            if chunk.speaker is not None and turn.speaker != chunk.speaker:
                continue
            out.append((index, turn.words * share))
        return out
    if chunk.start is None or chunk.end is None:
        raise ValueError(f"chunk {chunk.doc_id!r} records neither its turns nor a time window")
    for turn in file_turns:
        if chunk.speaker is not None and turn.speaker != chunk.speaker:
            continue
        duration = turn.end - turn.start
        if duration <= 0:
            share = 1.0 if chunk.start <= turn.start <= chunk.end else 0.0
        else:
            overlap = min(turn.end, chunk.end) - max(turn.start, chunk.start)
            share = max(0.0, overlap) / duration
        if share > 0:
            out.append((turn.index, turn.words * min(share, 1.0)))
    return out


def _gold_by_file(query) -> dict[str, set[int]]:
    gold: dict[str, set[int]] = {}
    for file_id, first, last in query.gold_spans:
        gold.setdefault(file_id, set()).update(range(first, last + 1))
    return gold


def _judge_meetings(corpus: Corpus, chunks, policy: RelevancePolicy) -> Judgements:
    turns_by_file = corpus.turns_by_file()
    index_by_file = {f: {t.index: t for t in turns} for f, turns in turns_by_file.items()}
    per_file: dict[str, list[tuple[Chunk, list[tuple[int, float]]]]] = {}
    for chunk in chunks:
        if chunk.doc_type == "digest":  # digests are unjudged (no second relevance rule)
            continue
        turns = turns_by_file.get(chunk.file_id)
        if turns is None:
            raise ValueError(f"chunk {chunk.doc_id!r}: file {chunk.file_id!r} is not in corpus "
                             f"{corpus.name!r}")
        per_file.setdefault(chunk.file_id, []).append(
            (chunk, _contributions(chunk, index_by_file[chunk.file_id], turns)))
    qrels: dict[str, dict[str, int]] = {}
    coverage: dict[tuple[str, str], float] = {}
    dropped = []
    for query in sorted(corpus.rank_queries(), key=lambda q: q.query_id):
        judged: dict[str, int] = {}
        for file_id, gold in sorted(_gold_by_file(query).items()):
            for chunk, parts in per_file.get(file_id, ()):
                total = sum(w for _, w in parts)
                if total <= 0:
                    continue
                value = sum(w for index, w in parts if index in gold) / total
                if value <= 0:
                    continue
                coverage[(query.query_id, chunk.doc_id)] = value
                grade = policy.grade(value)
                if grade > 0:
                    judged[chunk.doc_id] = grade
        if judged:
            qrels[query.query_id] = judged
        else:
            dropped.append(query.query_id)
    return Judgements(qrels=qrels, dropped=tuple(dropped), coverage=coverage)


def _judge_documents(corpus: Corpus, chunks, policy: RelevancePolicy) -> Judgements:
    present = {c.doc_id for c in chunks}
    qrels: dict[str, dict[str, int]] = {}
    dropped, unmatched = [], 0
    for query in sorted(corpus.rank_queries(), key=lambda q: q.query_id):
        judged = {}
        for doc_id, rel in query.gold_docs:
            if doc_id not in present:
                unmatched += 1
                continue
            judged[doc_id] = 1 if (policy.binary and rel > 0) else rel
        if any(r > 0 for r in judged.values()):
            qrels[query.query_id] = judged
        else:
            dropped.append(query.query_id)
    return Judgements(qrels=qrels, dropped=tuple(dropped), unmatched_judgements=unmatched)


def judge(corpus: Corpus, chunks, policy: RelevancePolicy | None = None) -> Judgements:
    """Judgements of ``chunks`` for every rank-scored query of ``corpus`` (module docstring)."""
    policy = policy or RelevancePolicy()
    if corpus.kind == DOCUMENTS:
        return _judge_documents(corpus, chunks, policy)
    return _judge_meetings(corpus, chunks, policy)


def file_qrels(corpus: Corpus) -> dict[str, dict[str, int]]:
    """A rank-scored query's gold files at relevance 1 (``granularity: file``, file-level
    metrics).  Queries with no gold file are left out."""
    return {q.query_id: {f: 1 for f in q.gold_files}
            for q in sorted(corpus.rank_queries(), key=lambda q: q.query_id) if q.gold_files}
