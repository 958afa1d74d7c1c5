"""A corpus's chunks as columns: a :class:`~harness.core.records.Chunk` sequence that builds
a chunk object only when one is asked for.

An arm run reads chunks a field at a time (ids, files, texts for the index; file counts
for the claim), so the prepared-corpus cache hands them over as columns
(:mod:`harness.retrieval.prepared.columns_format`) and skips building about 130k frozen
objects on full QMSum.  Indexing, iteration and equality give the same ``Chunk`` values
the chunker made.  ``order``, when known, is the chunks' structural order
(:func:`harness.core.doc_ids.rank_key`), kept so indexing need not sort again.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterator, Mapping, Sequence

from harness.core.doc_ids import rank_key
from harness.core.records import Chunk

FIELDS = tuple(f.name for f in dataclasses.fields(Chunk))
#: fields whose values are tuples (stored as lists)
_TUPLES = ("turn_indexes", "turn_fractions")


class ChunkTable(Sequence):
    """Columns by :data:`FIELDS`; a column may be given as a function giving it (read when
    first needed)."""

    def __init__(self, columns: Mapping[str, list | Callable[[], list]], rows: int,
                 order: Sequence[int] | None = None):
        missing = sorted(set(FIELDS) - set(columns))
        if missing:
            raise ValueError(f"chunk columns missing: {', '.join(missing)}")
        self._columns = dict(columns)
        self._rows = rows
        for name, col in self._columns.items():
            if not callable(col) and len(col) != rows:
                raise ValueError(f"chunk column {name} has {len(col)} values for {rows} chunks")
        self.order = None if order is None else list(order)
        if self.order is not None and sorted(self.order) != list(range(rows)):
            raise ValueError("the chunks' order is not a permutation of them")

    @classmethod
    def from_chunks(cls, chunks: Sequence[Chunk], with_order: bool = False) -> "ChunkTable":
        columns = {name: [getattr(c, name) for c in chunks] for name in FIELDS}
        table = cls(columns, len(chunks))
        if with_order:
            table.order = structural_order(columns["doc_id"])
        return table

    def column(self, name: str) -> list:
        col = self._columns[name]
        if callable(col):
            col = col()
            if len(col) != self._rows:
                raise ValueError(f"chunk column {name} has {len(col)} values for "
                                 f"{self._rows} chunks")
            if name in _TUPLES:
                col = [tuple(v) for v in col]
            self._columns[name] = col
        return col

    def file_ids(self) -> set[str]:
        return set(self.column("file_id"))

    def __len__(self) -> int:
        return self._rows

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._rows)))
        return Chunk(*(self.column(name)[i] for name in FIELDS))

    def __iter__(self) -> Iterator[Chunk]:
        for i in range(self._rows):
            yield self[i]

    def __eq__(self, other) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None


def structural_order(doc_ids: Sequence[str]) -> list[int]:
    """Positions of ``doc_ids`` sorted by :func:`harness.core.doc_ids.rank_key`."""
    return sorted(range(len(doc_ids)), key=lambda i: rank_key(doc_ids[i], 0.0))
