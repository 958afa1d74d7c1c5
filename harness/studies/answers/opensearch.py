"""The ``opensearch`` answerer: the reference's question frames, answered from an index.

A second mechanism beside SQL (reference 000, R3/R4): "how many / which meetings mention X"
is a ``match_phrase`` on ``text.exact`` with a ``terms`` aggregation on ``file_id``
(:func:`harness.retrieval.backends.opensearch.aggregations.files_with_phrase`), read from
each corpus's index of speaker-turn chunks, loaded, settled and sealed by the OpenSearch
backend.  The parser is the reference's (:func:`harness.studies.answers.reference.parse`),
so any difference between the two answerers is a difference of mechanism.

========================  ==================================================================
rule                      mechanism
========================  ==================================================================
R3-count-files            the phrase aggregation: distinct files counted
R4-list-files             the phrase aggregation: distinct files listed
R7-temporal-count         the phrase aggregation intersected with the store's files recorded
                          in that month (SQL); undated files excluded and reported
R5-count-events           the store (SQL), as the reference: chunks overlap, occurrence counts
                          come from turns
R6-speaker-top            the store (SQL), as the reference
========================  ==================================================================

A bucket list that reaches the row limit raises
:class:`~harness.studies.answers.answer.TruncatedResult`; no aggregation is ever sent
with a hybrid query.  :meth:`OpenSearchAnswerer.finish` refuses the answers when an index
was written to while they were read.  Not a production path.
"""

from __future__ import annotations

import logging

from harness.studies.answers.answer import ROW_LIMIT, Answer, TruncatedResult, declined
from harness.studies.answers.reference import ReferenceAnswerer, parse

log = logging.getLogger(__name__)

MECHANISMS = {
    "R3-count-files": ("opensearch: match_phrase on the chunk text (text.exact), terms "
                       "aggregation on file_id, distinct files counted"),
    "R4-list-files": ("opensearch: match_phrase on the chunk text (text.exact), terms "
                      "aggregation on file_id, distinct files listed"),
    "R7-temporal-count": ("opensearch: the phrase aggregation on file_id intersected with the "
                          "store's files recorded in the month (sql); undated files excluded "
                          "and reported"),
}
#: the reference's chunking, so the answer index is the bench's default text index
MAX_WORDS = 200


def corpus_docs(corpus) -> list:
    """The corpus's speaker-turn chunks as the OpenSearch backend indexes them."""
    from harness.retrieval.backends.base import IndexDoc
    from ingestion.chunking import chunk_corpus

    return [IndexDoc(c.doc_id, c.file_id, c.text, c.text, chunk_index=c.chunk_index,
                     doc_type=c.doc_type, speaker=c.speaker, start=c.start, end=c.end)
            for c in chunk_corpus(corpus, max_words=MAX_WORDS)]


class OpenSearchAnswerer:
    """Phrase aggregations from OpenSearch; the rest from the transcript store."""

    name = "opensearch"
    is_production_path = False
    needs_store = True
    description = ("the reference's parser over the generator's five frames; R3/R4 (and R7 "
                   "within the store's month) from OpenSearch: match_phrase + terms "
                   "aggregation on file_id over each corpus's settled chunk index; R5/R6 from "
                   "the store (sql); the instrument's second mechanism, not the product's "
                   "answer")

    def __init__(self, row_limit: int = ROW_LIMIT, url: str | None = None,
                 index_prefix: str | None = None, progress: bool = True):
        from harness.core import settings
        from harness.retrieval.backends.opensearch.client import check_url

        self.row_limit = row_limit
        self.url = check_url(url or settings.opensearch_url())
        self.index_prefix = index_prefix
        self.progress = progress
        self._sql = ReferenceAnswerer(row_limit)
        self._indexes: dict[str, object] = {}

    # ------------------------------------------------------------------ lifecycle

    def prepare(self, corpora) -> None:
        """Load (or reuse), settle and seal one text index per corpus."""
        from harness.retrieval.backends.opensearch.backend import OpenSearchBackend

        for corpus in corpora:
            options = {} if self.index_prefix is None else {"index_prefix": self.index_prefix}
            backend = OpenSearchBackend(url=self.url, progress=self.progress, **options)
            self._indexes[corpus.name] = backend
            backend.index(corpus_docs(corpus), ["bm25"])

    def finish(self) -> None:
        """Refuse (BackendError) when an index changed while it was being read."""
        for backend in self._indexes.values():
            backend.end_measurement()

    def close(self) -> None:
        for backend in self._indexes.values():
            backend.close()

    def index_of(self, corpus: str) -> str:
        if corpus not in self._indexes:
            raise ValueError(f"the opensearch answerer has no index of corpus {corpus!r} "
                             "(prepare() was not given it)")
        return self._indexes[corpus].index_name

    # ------------------------------------------------------------------ answers

    def _files(self, corpus: str, phrase: str) -> list[str]:
        from harness.retrieval.backends.opensearch.aggregations import (
            BucketLimit,
            files_with_phrase,
        )

        backend = self._indexes.get(corpus)
        name = self.index_of(corpus)
        try:
            return files_with_phrase(backend.node, name, phrase, self.row_limit)
        except BucketLimit as exc:
            raise TruncatedResult(f"corpus {corpus!r}: {exc}") from None

    def answer(self, question: str, store, corpus: str) -> Answer:
        parsed = parse(question)
        if parsed is None:
            return declined("the question matches none of the five generator frames")
        rule, slots = parsed
        if rule not in MECHANISMS:
            return self._sql.answer(question, store, corpus)
        files = self._files(corpus, slots["phrase"])
        notes = {"index": self.index_of(corpus)}
        if rule == "R3-count-files":
            return Answer(len(files), MECHANISMS[rule], notes)
        if rule == "R4-list-files":
            return Answer(files, MECHANISMS[rule], notes)
        from ingestion.synthetic import spec

        month = (int(slots["year"]), spec.MONTH_NAMES.index(slots["month_name"]) + 1)
        inside, undated = _dated(store, corpus, month)
        notes.update(month=f"{month[0]:04d}-{month[1]:02d}",
                     undated_files_excluded=len(set(files) & undated))
        return Answer(len(set(files) & inside), MECHANISMS[rule], notes)


def _dated(store, corpus: str, month: tuple[int, int]) -> tuple[set[str], set[str]]:
    """``(files recorded in month, undated files)`` of ``corpus`` in the store (SQL)."""
    from sqlalchemy import extract, select

    from ingestion.transcripts.schema import files

    year, number = month
    with store.engine.connect() as conn:
        inside = {r[0] for r in conn.execute(
            select(files.c.id).where(files.c.corpus == corpus,
                                     extract("year", files.c.recorded_date) == year,
                                     extract("month", files.c.recorded_date) == number))}
        undated = {r[0] for r in conn.execute(
            select(files.c.id).where(files.c.corpus == corpus,
                                     files.c.recorded_date.is_(None)))}
    return inside, undated
