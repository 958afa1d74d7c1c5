"""One query's list put in the order trec_eval will see it.

Every list is sorted by ``(-score, doc_type, file_id, chunk_index)``
(:func:`harness.core.doc_ids.rank_key`) and its scores replaced by rank-derived values
(:func:`rank_scores`), so no tie reaches the engine; ids and scores are checked on the way,
naming the query and document.
"""

from __future__ import annotations

import math
import numbers
from itertools import compress, count, islice
from operator import eq, itemgetter
from typing import Mapping, Sequence

from harness.core.doc_ids import parse_doc_id
from harness.core.records import RankedDocs, ScoredDoc

_DOC = itemgetter(0)
_SCORE = itemgetter(1)
_QUERY_OF = itemgetter(0)
_DOC_SCORE = itemgetter(1, 2)
_DOC_ID = itemgetter(1)
_SCORE_OF = itemgetter(2)


def _where(query_id) -> str:
    return "ranking" if query_id is None else f"ranking of query {query_id!r}"


def _pair_list(docs) -> bool:
    """Whether ``docs`` is a non-empty list of ``(doc_id, score)`` tuples (what the bench's
    backends return)."""
    return (type(docs) is list and bool(docs) and set(map(type, docs)) == {tuple}
            and set(map(len, docs)) == {2})


def _as_pairs(docs, query_id=None) -> list[tuple[str, float]]:
    """``[(doc_id, score)]`` from ScoredDocs, ``(doc_id, score)`` pairs, a dict or
    :class:`RankedDocs`."""
    if isinstance(docs, Mapping):
        return list(docs.items())
    if type(docs) is RankedDocs:
        if len(docs.doc_ids) != len(docs.scores):
            raise ValueError(f"{_where(query_id)}: {len(docs.doc_ids)} doc ids but "
                             f"{len(docs.scores)} scores")
        return list(zip(docs.doc_ids, docs.scores))
    docs = docs if isinstance(docs, list) else list(docs)
    if _pair_list(docs):
        return list(docs)
    if docs and set(map(type, docs)) == {ScoredDoc}:
        if query_id is not None:
            others = set(map(_QUERY_OF, docs)) - {query_id}
            if others:
                raise ValueError(f"{_where(query_id)}: holds documents of other queries "
                                 f"{sorted(map(str, others))[:5]}")
        return list(map(_DOC_SCORE, docs))
    out = []
    for doc in docs:
        if isinstance(doc, ScoredDoc):
            out.append((doc.doc_id, doc.score))
            continue
        try:
            doc_id, score = doc
        except (TypeError, ValueError):
            raise ValueError(f"{_where(query_id)}: expected (doc_id, score), got {doc!r}") from None
        out.append((doc_id, score))
    return out


def _check_ids(ids: list, query_id=None, unique: bool = False) -> None:
    """Refuse non-string doc ids and (unless ``unique``) duplicate ones."""
    if set(map(type, ids)) - {str}:
        bad = next(d for d in ids if not isinstance(d, str))
        raise ValueError(f"{_where(query_id)}: doc_id must be a string, got {bad!r}")
    if not unique and len(set(ids)) != len(ids):
        seen = set()
        for doc_id in ids:
            if doc_id in seen:
                raise ValueError(f"{_where(query_id)}: duplicate doc_id {doc_id!r} "
                                 "(a document cannot hold two ranks)")
            seen.add(doc_id)


def _all_floats(values) -> bool:
    """True when every value is a finite ``float`` (the common case, checked in C)."""
    if set(map(type, values)) != {float}:
        return False
    return math.isfinite(sum(values))


def _check_scores(pairs: list[tuple[str, float]], query_id=None) -> None:
    """Refuse non-numbers, NaN and infinities, naming the document."""
    for doc_id, value in pairs:
        if not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"{_where(query_id)}: field 'score' of doc_id {doc_id!r} "
                             f"must be a finite number, got {value!r}")


def check_pairs(pairs: list[tuple[str, float]], query_id=None, unique: bool = False) -> None:
    """Refuse non-string or duplicate doc ids and non-finite or non-numeric scores."""
    _check_ids(list(map(_DOC, pairs)), query_id, unique)
    if not _all_floats(list(map(_SCORE, pairs))):
        _check_scores(pairs, query_id)


def _order(pairs: list[tuple[str, float]], cache: dict) -> list[tuple[str, float]]:
    """Sort by :func:`harness.core.doc_ids.rank_key`: score descending, then structure.

    Equal to ``sorted(pairs, key=lambda p: rank_key(p[0], p[1]))``, but only documents
    that share a score pay for parsing their id: one C-level sort by score, then each run
    of equal scores is ordered by ``(doc_type, file_id, chunk_index, doc_id)``.
    """
    ranking = sorted(pairs, key=_SCORE, reverse=True)
    scores = list(map(_SCORE, ranking))
    # positions p with scores[p] == scores[p + 1]
    tied = list(compress(count(), map(eq, scores, islice(scores, 1, None))))
    if not tied:
        return ranking

    def structure(pair):
        key = cache.get(pair[0])
        if key is None:
            key = cache[pair[0]] = (*parse_doc_id(pair[0]), pair[0])
        return key

    def settle(first: int, last: int) -> None:  # ranking[first..last] share one score
        if last == first + 1:
            a, b = ranking[first], ranking[last]
            if structure(b) < structure(a):
                ranking[first], ranking[last] = b, a
        else:
            ranking[first:last + 1] = sorted(ranking[first:last + 1], key=structure)

    start = end = tied[0]
    for p in islice(tied, 1, None):
        if p != end + 1:  # a new run of equal scores begins
            settle(start, end + 1)
            start = p
        end = p
    settle(start, end + 1)
    return ranking


def normalise_ranking(docs, preserve_order: bool = False, *,
                      query_id: str | None = None) -> list[tuple[str, float]]:
    """One query's list in the order trec_eval will see it, with the original scores.

    Sorted by :func:`harness.core.doc_ids.rank_key` (or kept as given with ``preserve_order``).
    Duplicate or non-string doc ids and non-finite scores are refused, naming the query
    when ``query_id`` is given.
    """
    return normalise(docs, preserve_order, query_id, {})


def normalise(docs, preserve_order, query_id, cache) -> list[tuple[str, float]]:
    pairs = _as_pairs(docs, query_id)
    check_pairs(pairs, query_id, unique=isinstance(docs, Mapping))
    if preserve_order:
        return pairs
    return _order(pairs, cache)


def as_dict(docs, query_id, read: dict | None = None) -> dict | None:
    """``docs`` as ``{doc_id: score}`` where that changes nothing: a non-empty dict, or a
    list of this query's ScoredDocs with distinct ids (what the run readers return); else
    None, and the list takes the checked path.  ``read``: the mapping the run reader built
    for this very list (:meth:`~harness.core.records.RunColumns.take_mappings`), used as it is."""
    if type(docs) is dict:
        return docs or None
    if read:
        return read
    if type(docs) is RankedDocs:
        pairs = dict(zip(docs.doc_ids, docs.scores))
        return pairs if pairs and len(pairs) == len(docs.doc_ids) == len(docs.scores) else None
    if type(docs) is not list or not docs or set(map(type, docs)) != {ScoredDoc}:
        return None
    if set(map(_QUERY_OF, docs)) != {query_id}:
        return None
    pairs = dict(zip(map(_DOC_ID, docs), map(_SCORE_OF, docs)))
    return pairs if len(pairs) == len(docs) else None


_DESCENDING: tuple[float, ...] = ()  # (m, m-1, ..., 1.0), grown on demand


def rank_scores(ranking: Sequence[tuple[str, float]], cutoff: int | None = None) -> dict[str, float]:
    """Rank-derived scores (n, n-1, ..., 1): distinct, so trec_eval sees no tie."""
    global _DESCENDING
    if cutoff is not None:
        ranking = ranking[:cutoff]
    n = len(ranking)
    if n > len(_DESCENDING):
        _DESCENDING = tuple(map(float, range(max(n, 1000), 0, -1)))
    return dict(zip(map(_DOC, ranking), _DESCENDING[len(_DESCENDING) - n:]))
