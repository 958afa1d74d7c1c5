"""Documents to index held as columns: a :class:`~harness.retrieval.backends.base.IndexDoc`
sequence that builds no per-document object unless one is asked for.

Full QMSum is about 130k chunks; a Python object per chunk costs about 3 us to build (0.4 s
per corpus, twice: as a chunk and as an index document), which is most of what a second arm
over a cached corpus spends before retrieving.  :class:`IndexDocs` keeps each field as one
list, so a backend that reads columns (the embedded backend: ids, files, texts) never builds
them, and one that iterates (OpenSearch, a system under test) gets the same
``IndexDoc`` values it always did.  ``order`` may carry the structural order
(:func:`harness.core.doc_ids.rank_key`) when it is already known, e.g. from the prepared
corpus cache, so indexing need not sort again.
"""

from __future__ import annotations

from typing import Iterator, Sequence

from harness.retrieval.backends.base import IndexDoc

COLUMNS = ("doc_id", "file_id", "text", "embedded_text", "chunk_index", "doc_type", "speaker",
           "start", "end")


class IndexDocs(Sequence):
    """Columns of equal length, one per :class:`IndexDoc` field (``embedded_text`` None:
    the same as ``text``)."""

    def __init__(self, doc_id: list, file_id: list, text: list, embedded_text: list | None,
                 chunk_index: list, doc_type: list, speaker: list, start: list, end: list,
                 order: Sequence[int] | None = None):
        self.doc_id, self.file_id, self.text = doc_id, file_id, text
        self.embedded_text = text if embedded_text is None else embedded_text
        self.chunk_index, self.doc_type, self.speaker = chunk_index, doc_type, speaker
        self.start, self.end = start, end
        n = len(doc_id)
        for name in COLUMNS:
            if len(getattr(self, name)) != n:
                raise ValueError(f"index documents: column {name} has "
                                 f"{len(getattr(self, name))} values for {n} documents")
        #: positions in structural order, when known (else None: sort to find it)
        self.order = None if order is None else list(order)
        if self.order is not None and len(self.order) != n:
            raise ValueError(f"index documents: an order of {len(self.order)} for {n}")

    @classmethod
    def from_docs(cls, docs: Sequence[IndexDoc]) -> "IndexDocs":
        return cls(*([getattr(d, name) for d in docs] for name in COLUMNS))

    def __len__(self) -> int:
        return len(self.doc_id)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return IndexDoc(self.doc_id[i], self.file_id[i], self.text[i], self.embedded_text[i],
                        chunk_index=self.chunk_index[i], doc_type=self.doc_type[i],
                        speaker=self.speaker[i], start=self.start[i], end=self.end[i])

    def __iter__(self) -> Iterator[IndexDoc]:
        for i in range(len(self)):
            yield self[i]

    def take(self, positions: Sequence[int]) -> "IndexDocs":
        """The documents at ``positions``, in that order."""
        def pick(column):
            return [column[p] for p in positions]

        same = self.embedded_text is self.text
        return IndexDocs(pick(self.doc_id), pick(self.file_id), pick(self.text),
                         None if same else pick(self.embedded_text), pick(self.chunk_index),
                         pick(self.doc_type), pick(self.speaker), pick(self.start),
                         pick(self.end), order=range(len(positions)))


def column(docs: Sequence[IndexDoc], name: str) -> list:
    """One field of every document: the column itself for :class:`IndexDocs`."""
    if isinstance(docs, IndexDocs):
        return getattr(docs, name)
    return [getattr(d, name) for d in docs]
