"""Speaker-turn chunking, whole-file documents, and document-corpus passthrough.

``granularity="chunk"`` (meeting corpora): one chunk per speaker turn.  A turn longer than
``max_words`` is cut at sentence boundaries found by :data:`SENTENCE_END` (a fixed regex, so
the cut never depends on which NLP models a machine has); sentences are packed greedily into
segments of at most ``max_words`` words, and a single sentence longer than that is cut every
``max_words`` words.  A segment's time window is its share of the turn by word offset.  All
segments of a file are ordered by the total order ``(start, end, turn index, segment)`` and
numbered in that order: chunk ids are ``{file_id}_{chunk_index}``.  Each chunk records the
turn it came from (``turn_indexes``) and the share of that turn's words inside it
(``turn_fractions``).  Turns with no words produce no chunk.

``granularity="file"``: one document per file (``doc_type="doc"``, ``doc_id=file_id``), its text
the turns in order as ``speaker: text`` lines.

A document corpus (BEIR, TREC) gives one chunk per document whatever the granularity
(``doc_type="doc"``, ``doc_id`` and ``file_id`` = the document id).
"""

from __future__ import annotations

import re

from harness.core.doc_ids import chunk_id
from harness.core.records import Chunk
from ingestion.corpus import DOCUMENTS, Corpus

GRANULARITIES = ("chunk", "file")

#: a sentence ends after . ! or ? (optionally followed by closing quotes/brackets) and
#: whitespace; QMSum's tokenised " . " endings match too
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+")


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` by :data:`SENTENCE_END`; whitespace-only pieces are dropped."""
    pieces, last = [], 0
    for match in SENTENCE_END.finditer(text):
        pieces.append(text[last:match.end()])
        last = match.end()
    pieces.append(text[last:])
    return [p.strip() for p in pieces if p.strip()]


def split_turn_text(text: str, max_words: int) -> list[list[str]]:
    """The words of each segment of one turn (see module docstring)."""
    words = text.split()
    if len(words) <= max_words:
        return [words] if words else []
    segments: list[list[str]] = []
    current: list[str] = []
    for sentence in split_sentences(text):
        sentence_words = sentence.split()
        while len(sentence_words) > max_words:  # one sentence longer than the limit
            if current:
                segments.append(current)
                current = []
            segments.append(sentence_words[:max_words])
            sentence_words = sentence_words[max_words:]
        if current and len(current) + len(sentence_words) > max_words:
            segments.append(current)
            current = []
        current = current + sentence_words
    if current:
        segments.append(current)
    return segments


def _meeting_chunks(corpus: Corpus, max_words: int) -> list[Chunk]:
    titles = {f.file_id: f.title for f in corpus.files}
    out: list[Chunk] = []
    for file_id, turns in sorted(corpus.turns_by_file().items()):
        segments = []
        for turn in turns:
            parts = split_turn_text(turn.text, max_words)
            total = sum(len(p) for p in parts)
            offset = 0
            for part_index, part in enumerate(parts):
                duration = turn.end - turn.start
                start = turn.start + duration * offset / total
                end = turn.start + duration * (offset + len(part)) / total
                offset += len(part)
                segments.append(((start, end, turn.index, part_index), turn, part, len(part) / total))
        segments.sort(key=lambda s: s[0])
        for chunk_index, ((start, end, _, _), turn, part, fraction) in enumerate(segments):
            out.append(Chunk(
                doc_id=chunk_id(file_id, chunk_index), file_id=file_id, chunk_index=chunk_index,
                doc_type="chunk", speaker=turn.speaker, start=start, end=end,
                text=" ".join(part), turn_indexes=(turn.index,), turn_fractions=(fraction,),
                title=titles.get(file_id),
            ))
    return out


def _file_documents(corpus: Corpus) -> list[Chunk]:
    by_file = corpus.turns_by_file()
    out = []
    for record in sorted(corpus.files, key=lambda f: f.file_id):
        turns = by_file.get(record.file_id, [])
        if not turns:
            continue
        out.append(Chunk(
            doc_id=record.file_id, file_id=record.file_id, chunk_index=0, doc_type="doc",
            speaker=None, start=min(t.start for t in turns), end=max(t.end for t in turns),
            text="\n".join(f"{t.speaker}: {t.text}" for t in turns),
            turn_indexes=tuple(t.index for t in turns), turn_fractions=tuple(1.0 for _ in turns),
            title=record.title,
        ))
    return out


def _document_chunks(corpus: Corpus) -> list[Chunk]:
    return [Chunk(doc_id=d.doc_id, file_id=d.doc_id, chunk_index=0, doc_type="doc", speaker=None,
                  start=None, end=None, text=d.text, title=d.title or None)
            for d in sorted(corpus.documents, key=lambda d: d.doc_id)]


def chunk_corpus(corpus: Corpus, *, granularity: str = "chunk", max_words: int = 200) -> list[Chunk]:
    """The indexable units of ``corpus`` (module docstring), sorted by (file_id, chunk_index)."""
    if granularity not in GRANULARITIES:
        raise ValueError(f"unknown granularity {granularity!r}; expected one of {sorted(GRANULARITIES)}")
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words < 1:
        raise ValueError(f"max_words must be a positive integer, got {max_words!r}")
    if corpus.kind == DOCUMENTS:
        return _document_chunks(corpus)
    if granularity == "file":
        return _file_documents(corpus)
    return _meeting_chunks(corpus, max_words)
