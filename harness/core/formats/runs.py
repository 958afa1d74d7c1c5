"""A run's lists assembled from its columns: the line-by-line reader's duplicate check,
and the block reader's grouping, duplicate check and rank counting (:class:`_RunBlocks`)."""

from __future__ import annotations

from itertools import chain, compress, count, islice, repeat
from operator import add, eq, lt, ne, sub

from harness.core.formats.base import FilePath, FormatError
from harness.core.formats.columns import _ranks
from harness.core.records import RankedDocs, RunColumns, ScoredDoc

def _add_scored(run: dict[str, list[ScoredDoc]], seen: dict[tuple[str, str], int], path: FilePath,
                line: int, query_id: str, doc_id: str, score: float) -> None:
    if (query_id, doc_id) in seen:
        raise FormatError(
            path, line, "doc_id",
            f"duplicate (query_id={query_id!r}, doc_id={doc_id!r}) in run; "
            f"first seen on line {seen[(query_id, doc_id)]}",
        )
    seen[(query_id, doc_id)] = line
    run.setdefault(query_id, []).append(ScoredDoc(query_id, doc_id, score))


#: "0", "1", "2", ...: the rank texts of a list numbered in file order (grown on demand)
_COUNTING = [str(i) for i in range(1024)]


def _run_firsts(rank_texts: list[str], starts: list[int], first: int | None = None) -> list[int]:
    """Where the numbering of each run of lines beginning at ``starts`` starts: 0 where
    its first rank text is "0", else 1; ``first`` for the first run, when it was begun in
    an earlier block (the number its next line needs)."""
    firsts = list(map(int, map(ne, map(rank_texts.__getitem__, starts), repeat("0"))))
    if first is not None:
        firsts[0] = first
    return firsts


def _counting(rank_texts: list[str], starts: list[int], firsts: list[int] | None = None) -> bool:
    """Whether each run of lines beginning at ``starts`` is numbered ``1, 2, 3, ...`` (or
    from 0; from ``firsts``, :func:`_run_firsts`, when given) in file order, as rank texts
    a line-by-line read would accept."""
    if firsts is None:
        firsts = _run_firsts(rank_texts, starts)
    ends = [*starts[1:], len(rank_texts)]
    stops = list(map(add, firsts, map(sub, ends, starts)))
    if max(stops) > len(_COUNTING):
        _COUNTING.extend(map(str, range(len(_COUNTING), max(stops))))
    return all(map(eq, map(rank_texts.__getitem__, map(slice, starts, ends)),
                   map(_COUNTING.__getitem__, map(slice, firsts, stops))))


class _RunBlocks:
    """A run's columns, gathered a block of lines at a time; what its lists need is
    checked on each block while the block is fresh in memory: where each run of one
    query's lines begins, that no such run holds a document twice, and (TREC) whether
    the ranks count ``1, 2, 3, ...`` (or from 0) in file order, which then orders nothing
    and is not converted.

    The lines of a run share one query id object (equal to each line's own), so that what
    a block leaves behind is little.  ``records``: a :class:`ScoredDoc` per line, as the
    lists hold them."""

    def __init__(self, records: bool) -> None:
        self.query_ids: list[str] = []
        self.doc_ids: list[str] = []
        self.scores: list[float] = []
        self.docs: list[ScoredDoc] | None = [] if records else None
        self.starts: list[int] = []  # where each run of one query's lines begins
        self.ranks: list[int] | None = None  # once some run's ranks do not count
        self.refused = False  # a run holds a document twice, or a rank is not read
        self._firsts: list[int] = []  # each run's first rank, while the ranks count
        self._last: str | None = None  # the query of the last run so far, its documents,
        self._docs: dict[str, float] = {}  # and the rank its next line needs (if counting)
        self._next = 0
        self.mappings: list[dict[str, float]] = []  # each run's {doc_id: score}, by start

    def add(self, query_ids: list[str], doc_ids: list[str], scores: list[float],
            rank_texts: list[str] | None = None) -> None:
        n = len(query_ids)
        starts = [0, *compress(count(1), map(ne, islice(query_ids, 1, None), query_ids))]
        ends = [*starts[1:], n]
        sizes = list(map(sub, ends, starts))
        last = self._last
        goes_on = query_ids[0] == last  # the last run of the block before goes on
        slices = list(map(slice, starts, ends))
        # each run's {doc_id: score}: a repeated document makes it shorter than the run (and
        # it is the dict the scorer hands trec_eval, RunColumns.mapping)
        runs = list(map(dict, map(zip, map(doc_ids.__getitem__, slices),
                                  map(scores.__getitem__, slices))))
        heads = list(map(query_ids.__getitem__, starts))
        carried = len(self._docs) if goes_on else 0
        if goes_on and last is not None:
            runs[0] = self._docs | runs[0]
            heads[0] = last
            self.mappings.pop()
        self.mappings += runs
        if list(map(len, runs)) != [sizes[0] + carried, *islice(sizes, 1, None)]:
            self.refused = True
        if rank_texts is not None:
            self._add_ranks(rank_texts, starts, goes_on)
        self.starts += map(len(self.query_ids).__add__, starts[goes_on:])
        self._last, self._docs = heads[-1], runs[-1]
        shared = list(chain.from_iterable(map(repeat, heads, sizes)))
        if self.docs is not None:
            self.docs += map(tuple.__new__, repeat(ScoredDoc), zip(shared, doc_ids, scores))
        self.query_ids += shared
        self.doc_ids += doc_ids
        self.scores += scores

    def _add_ranks(self, rank_texts: list[str], starts: list[int], goes_on: bool) -> None:
        """Check a block's ranks (before its runs are added); converted once they do not
        count, and those before them made from the count."""
        if self.ranks is None:
            firsts = _run_firsts(rank_texts, starts, self._next if goes_on else None)
            if _counting(rank_texts, starts, firsts):
                self._firsts += firsts[goes_on:]
                self._next = firsts[-1] + len(rank_texts) - starts[-1]
                return
            self.ranks = self._counted()
        ranks = _ranks(rank_texts)
        if ranks is None:
            self.refused = True
        else:
            self.ranks += ranks

    def _counted(self) -> list[int]:
        """The ranks of the lines so far, all in runs that count (from ``_firsts``)."""
        ends = [*self.starts[1:], len(self.query_ids)]
        return list(chain.from_iterable(map(range, self._firsts, map(
            add, self._firsts, map(sub, ends, self.starts)))))

    def lists(self) -> dict[str, list[ScoredDoc]] | dict[str, RankedDocs] | None:
        """``{query: [ScoredDoc]}`` (or :class:`RankedDocs` without ``records``) in file
        order of first appearance, each list in rank order (stable; file order without
        ranks); None where a pair repeats, a rank needs the line-by-line reader, or (no
        ``records``) the lists are not runs of lines already in order."""
        query_ids, docs, ranks = self.query_ids, self.docs, self.ranks
        starts: list[int] | None = self.starts
        if self.refused or not query_ids:
            return None
        if len(self.starts) != len(set(map(query_ids.__getitem__, self.starts))):
            starts = None  # some query's lines are not contiguous
        if starts is not None and (ranks is None or set(
                compress(count(1), map(lt, islice(ranks, 1, None), ranks))) <= set(starts)):
            bounds = list(zip(starts, [*starts[1:], len(query_ids)]))
            if docs is None:
                lists = {query_ids[a]: RankedDocs(self.doc_ids[a:b], self.scores[a:b])
                         for a, b in bounds}
                return RunColumns(lists, dict(zip(lists, self.mappings)))
            return {query_ids[a]: docs[a:b] for a, b in bounds}
        if docs is None or len(set(zip(query_ids, self.doc_ids))) != len(query_ids):
            return None
        if ranks is None and self._firsts:  # runs that count, of queries met again
            ranks = self._counted()
        positions: dict[str, list[int]] = {}
        for i, query_id in enumerate(query_ids):
            positions.setdefault(query_id, []).append(i)
        if ranks is not None:
            for kept in positions.values():
                kept.sort(key=ranks.__getitem__)
        return {q: list(map(docs.__getitem__, kept)) for q, kept in positions.items()}
