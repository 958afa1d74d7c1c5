"""From loaded corpora to what an arm run indexes, asks and judges.

Per corpus: chunks (speaker-turn chunks, or whole files at ``--granularity file``), the
rank-scored queries (aggregation queries are scored on their answer elsewhere), their
judgements (chunk grades from gold spans, or file qrels), the queries dropped as
unjudgeable, and each query's gold files (for the gold-files oracle scope).  All corpora
of one run share one index, so file and query ids must not collide across them.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

from harness.retrieval.backends.base import SearchQuery
from harness.retrieval.backends.documents import IndexDocs
from harness.retrieval.prepared.chunk_table import ChunkTable
from harness.core.records import Chunk, Query

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PreparedCorpus:
    corpus: object  # ingestion.corpus.Corpus
    #: a tuple of chunks, or the same chunks as columns (:class:`ChunkTable`, from the cache)
    chunks: Sequence[Chunk]
    #: rank-scored queries, by id
    queries: dict[str, Query]
    #: query_id -> doc_id -> grade, for the queries that can be scored at this granularity
    qrels: dict[str, dict[str, int]]
    #: queries whose gold maps to no judged document
    dropped: tuple[str, ...]
    #: query_id -> file_id -> 1 (files holding gold)
    file_qrels: dict[str, dict[str, int]]
    #: queries scored on an answer, not a rank (counted, not retrieved)
    answer_queries: int

    @property
    def name(self) -> str:
        return self.corpus.source.name

    @property
    def tier(self) -> str:
        return self.corpus.source.tier

    def chunk_column(self, name: str) -> list:
        """One field of every chunk, in chunk order."""
        if isinstance(self.chunks, ChunkTable):
            return self.chunks.column(name)
        return [getattr(c, name) for c in self.chunks]

    def file_ids(self) -> set[str]:
        return set(self.chunk_column("file_id"))

    def gold_files(self, query_id: str) -> tuple[str, ...]:
        return tuple(sorted(f for f, r in self.file_qrels.get(query_id, {}).items() if r > 0))

    def source_block(self) -> dict:
        """This corpus's entry in metrics.json ``corpora[]``."""
        src = self.corpus.source
        return {
            "name": src.name,
            "version": src.version,
            "licence": src.licence,
            "tier": src.tier,
            "evidence": src.evidence,
            "sha256": src.sha256,
            "citation": src.citation,
            "registry_source": src.registry_source,
            "files": len(self.file_ids()),
            "chunks": len(self.chunks),
            "queries_rank_scored": len(self.queries),
            "queries_answer_scored": self.answer_queries,
        }


def prepare_corpus(corpus, granularity: str, policy, max_words: int) -> PreparedCorpus:
    """Chunk and judge one corpus with the ingestion package's public functions."""
    from ingestion.chunking import chunk_corpus
    from ingestion.judgements import file_qrels, judge

    chunks = tuple(chunk_corpus(corpus, granularity=granularity, max_words=max_words))
    queries = {q.query_id: q for q in corpus.rank_queries()}
    answer = sum(1 for q in corpus.queries if q.scored_on != "rank")
    files = {q: dict(d) for q, d in file_qrels(corpus).items() if q in queries}
    if granularity == "file":
        qrels = {q: d for q, d in files.items() if any(r > 0 for r in d.values())}
        dropped = tuple(sorted(set(queries) - set(qrels)))
    else:
        judged = judge(corpus, list(chunks), policy)
        qrels = {q: dict(d) for q, d in judged.qrels.items() if q in queries}
        dropped = tuple(sorted(set(judged.dropped) & set(queries)))
    return PreparedCorpus(corpus, chunks, queries, qrels, dropped, files, answer)


def check_disjoint(prepared: Sequence[PreparedCorpus]) -> None:
    """Refuse corpora whose names, file ids, doc ids or query ids collide in one index."""
    names, files, queries = {}, {}, {}
    for p in prepared:
        if p.name in names:
            raise ValueError(f"corpus name {p.name!r} given twice")
        names[p.name] = p
        for file_id in sorted(p.file_ids()):
            if file_id in files:
                raise ValueError(f"file id {file_id!r} occurs in corpora {files[file_id]!r} and "
                                 f"{p.name!r}; one index cannot hold both")
            files[file_id] = p.name
        for query_id in p.queries:
            if query_id in queries:
                raise ValueError(f"query id {query_id!r} occurs in corpora "
                                 f"{queries[query_id]!r} and {p.name!r}")
            queries[query_id] = p.name


def header(chunk: Chunk, files: dict) -> str:
    """``{title} | {date} | participants: {roster}`` for a chunk's file.

    A file without a title uses the chunk's title, else its id; an undated file says
    ``undated``; an empty roster says ``unknown``.
    """
    return _header(chunk.file_id, chunk.title, files)


def _header(file_id: str, chunk_title: str | None, files: dict) -> str:
    record = files.get(file_id)
    title = (record.title if record is not None else None) or chunk_title or file_id
    date = (record.recorded_date if record is not None else None) or "undated"
    roster = ", ".join(record.roster) if record is not None and record.roster else "unknown"
    return f"{title} | {date} | participants: {roster}"


def index_docs(prepared: Sequence[PreparedCorpus], embed_header: bool) -> IndexDocs:
    """Every chunk of every corpus as an :class:`IndexDoc` (header on the embedded text
    only: BM25 indexes the chunk text as it is), held as columns
    (:class:`harness.retrieval.backends.documents.IndexDocs`); one corpus whose chunks know
    their structural order passes it on."""
    names = ("doc_id", "file_id", "text", "chunk_index", "doc_type", "speaker", "start", "end")
    cols: dict[str, list] = {name: [] for name in names}
    embedded: list[str] = []
    for p in prepared:
        for name in names:
            cols[name].extend(p.chunk_column(name))
        if embed_header:
            files = {f.file_id: f for f in p.corpus.files}
            embedded.extend(f"{_header(file_id, title, files)}\n\n{text}" for file_id, title, text
                            in zip(p.chunk_column("file_id"), p.chunk_column("title"),
                                   p.chunk_column("text")))
    order = None
    if len(prepared) == 1 and isinstance(prepared[0].chunks, ChunkTable):
        order = prepared[0].chunks.order
    return IndexDocs(cols["doc_id"], cols["file_id"], cols["text"],
                     embedded if embed_header else None, cols["chunk_index"], cols["doc_type"],
                     cols["speaker"], cols["start"], cols["end"], order=order)


def search_queries(prepared: Sequence[PreparedCorpus], gold_scope: bool) -> list[SearchQuery]:
    """The judgeable queries of every corpus, sorted by id (the order batches are cut in)."""
    out = []
    for p in prepared:
        for query_id in sorted(p.qrels):
            query = p.queries[query_id]
            files = p.gold_files(query_id) if gold_scope else None
            out.append(SearchQuery(query_id, query.text, files))
    return sorted(out, key=lambda q: q.query_id)
