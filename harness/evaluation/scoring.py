"""Scoring with trec_eval semantics made explicit.

Engine: ``pytrec_eval_terrier`` (NIST trec_eval).  What the harness adds, and why:

* **trec_eval ``-c``**: every query in the qrels is scored.  A query the run did not answer
  scores 0 on every measure and is counted (``queries_unanswered``); means are over the
  qrels' queries.  A mean over the answered queries only flatters exactly the regressions
  worth catching.
* **No ties reach trec_eval**: each list is sorted by
  ``(-score, doc_type, file_id, chunk_index)`` (:mod:`harness.core.doc_ids`) and its scores are
  replaced by rank-derived values.  A dict whose scores hold no tie is handed over as it
  is: trec_eval orders it by score, which is already that order, so rank-derived values
  would change nothing (and skipping them keeps the harness within 1.5x of calling
  pytrec_eval directly, ``benchmarks/bench_scoring.py``).  "No tie" is judged as the engine
  reads scores: pytrec_eval_terrier keeps them as C floats (single precision), so
  0.50000000001 and 0.5 tie there, and 1e300 and 1e39 are both infinite; such a list
  takes rank-derived scores, ordered by the full-precision scores (as the official
  trec_eval, which reads doubles, orders it).  ``preserve_order=True`` instead
  keeps the list order given (stages whose order is the product's own, e.g. after rerank
  and diversity sampling).
* **Unjudgeable queries are dropped, not zeroed**: a qrels query with no relevant document
  would score 0 for every system; it is counted in ``queries_dropped_unjudgeable``.
* **Negative labels** are judged non-relevant (relevance 0) and counted.  (trec_eval
  itself reads a negative label as "not in the pool", which moves bpref only: no measure
  the harness reports changes.)
* **Graded relevance, linear gain**; ``binary=True`` collapses every positive grade to 1.
"""

from __future__ import annotations

import functools
import math
import numbers
from array import array
from dataclasses import dataclass, field
from itertools import chain, compress, count, islice
from operator import eq, gt, itemgetter
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from harness.core.doc_ids import parse_doc_id
from harness.core.formats import RELEVANCE_MAX, RELEVANCE_MIN
from harness.core.measures import JUDGED, Measure, resolve
from harness.core.records import RankedDocs, ScoredDoc
from harness.evaluation.judged import DEPTH as JUDGED_DEPTH
from harness.evaluation.judged import judged_values, top_ids

#: how the metric engine block names Judged@10, which trec_eval does not compute
JUDGED_ENGINE = "harness.evaluation.judged"

ENGINE_NAME = "pytrec_eval_terrier"
#: queries trec_eval scores per call (bounds the engine's per-query output held at once)
EVAL_BATCH = 1 << 14
SEMANTICS = (
    "trec_eval -c: every qrels query is scored; an unanswered query scores 0 and is counted; "
    "queries without a relevant document are dropped and counted"
)
TIE_BREAK = (
    "sorted by (-score, doc_type, file_id, chunk_index) with ids {file}_{n} -> "
    "(chunk, file, n), {file}_digest -> (digest, file, -1), other -> (doc, id, 0); "
    "scores replaced by rank-derived values (a list without a tie is already in that order)"
)
PRESERVE_ORDER_TIE_BREAK = "list order as given (preserve_order); scores replaced by rank-derived values"


@functools.lru_cache(maxsize=None)
def engine_version() -> str:
    """The installed engine's version: the name of its ``NAME-VERSION.dist-info`` folder
    beside the compiled engine (the installed-package layout; reading it costs nothing
    next to importing ``importlib.metadata``), else the package metadata."""
    try:
        import pytrec_eval_ext

        folders = list(Path(pytrec_eval_ext.__file__).parent.glob(f"{ENGINE_NAME}-*.dist-info"))
        if len(folders) == 1:
            return folders[0].name[len(ENGINE_NAME) + 1:-len(".dist-info")]
    except (ImportError, OSError, TypeError):  # another layout: ask the metadata
        pass
    import importlib.metadata

    try:
        return importlib.metadata.version(ENGINE_NAME)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - install problem
        return "unknown"


def metric_engine_block(measures: Sequence[Measure], preserve_order: bool = False) -> dict:
    """The ``metric_engine`` block of metrics.json."""
    return {
        "name": ENGINE_NAME,
        "version": engine_version(),
        "semantics": SEMANTICS,
        "tie_break": PRESERVE_ORDER_TIE_BREAK if preserve_order else TIE_BREAK,
        "gain": "linear",
        "measures": {
            m.name: (m.trec_measure + (f" (run cut at {m.run_cutoff})" if m.run_cutoff else "")
                     if m.by_trec_eval else f"{JUDGED_ENGINE} (top {m.run_cutoff})")
            for m in measures
        },
    }


# --------------------------------------------------------------------------- normalisation

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


def _check_pairs(pairs: list[tuple[str, float]], query_id=None, unique: bool = False) -> None:
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
    return _normalise(docs, preserve_order, query_id, {})


def _normalise(docs, preserve_order, query_id, cache) -> list[tuple[str, float]]:
    pairs = _as_pairs(docs, query_id)
    _check_pairs(pairs, query_id, unique=isinstance(docs, Mapping))
    if preserve_order:
        return pairs
    return _order(pairs, cache)


def _single(values) -> list[float]:
    """``values`` as the engine keeps them: C floats (IEEE single precision, the C cast's
    round-to-nearest; a value beyond its range becomes infinite), read back as doubles.
    Rounding is monotone, so values strictly ordered as singles are so as doubles."""
    return array("f", values).tolist()


def _ascending_if_untied(values, n: int, np):
    """The values (as doubles) sorted ascending when they are finite numbers, pairwise
    distinct and finite as the single-precision floats the engine keeps (so ``2**53`` and
    ``2**53 + 1``, 0.50000000001 and 0.5, or 1e300 and 1e39 count as a tie); else None,
    and the list goes to the checked path.  ``np`` is numpy (sorts long lists faster)."""
    try:
        if n < 32:
            ascending = sorted(map(float, values))
            single = _single(ascending)
            if not all(map(math.isfinite, single)):  # (a NaN need not sort to an end)
                return None
            return None if any(map(eq, single, islice(single, 1, None))) else ascending
        ascending = np.fromiter(values, float, n)
    except (TypeError, ValueError, OverflowError):
        return None
    ascending.sort()  # NaN sorts last
    with np.errstate(over="ignore"):  # beyond single range: infinite, refused below
        single = ascending.astype(np.float32)  # monotone: still ascending
    if not (math.isfinite(single[0]) and math.isfinite(single[-1])):
        return None
    return None if (single[1:] == single[:-1]).any() else ascending


_BATCH_VALUES = 1 << 20  # values per numpy batch (8 MiB)


def _untied_floats(values: list) -> list[float] | None:
    """``values`` (exact floats) when all are finite and pairwise distinct as single-precision
    floats (:func:`_single`); else None.  (-0.0 and 0.0 are one set member: a tie.)"""
    single = _single(values)
    if not math.isfinite(sum(single)) or len(set(single)) != len(single):
        return None
    return values


def _strictly_descending(values: list) -> bool:
    """Whether ``values`` fall strictly as single-precision floats (so no two tie in the
    engine; NaN compares false) and are finite there."""
    single = _single(values)
    return (all(map(gt, single, islice(single, 1, None)))
            and math.isfinite(single[0]) and math.isfinite(single[-1]))


def _untied_lists(lists: dict[str, dict],
                  descending: set[str] | None = None) -> dict[str, Sequence[float]]:
    """The scores of each dict whose scores hold no tie in single precision
    (:func:`_ascending_if_untied`):
    in their own order for exact floats, ascending otherwise.  Exact floats (what the run
    readers return) are checked in plain Python; other values (numpy scalars, integers ...)
    as the rows of numpy arrays of one length, so numpy's per-call cost is paid per batch,
    and numpy is imported only for them.  Exact-float dicts whose scores fall strictly in
    their own order are added to ``descending``."""
    out: dict[str, Sequence[float]] = {}
    by_length: dict[int, list[str]] = {}
    for query_id, docs in lists.items():
        values = list(docs.values())
        if set(map(type, values)) == {float}:
            if _strictly_descending(values):
                out[query_id] = values
                if descending is not None:
                    descending.add(query_id)
                continue
            ascending = _untied_floats(values)
            if ascending is not None:
                out[query_id] = ascending
        else:
            by_length.setdefault(len(docs), []).append(query_id)
    if not by_length:
        return out
    import numpy as np

    for n, ids in by_length.items():
        rows = max(1, _BATCH_VALUES // n)
        if n < 32 or len(ids) < 8:
            for query_id in ids:
                ascending = _ascending_if_untied(lists[query_id].values(), n, np)
                if ascending is not None:
                    out[query_id] = ascending
            continue
        for start in range(0, len(ids), rows):
            batch = ids[start:start + rows]
            try:
                values = np.fromiter(chain.from_iterable(lists[q].values() for q in batch),
                                     float, n * len(batch)).reshape(len(batch), n)
            except (TypeError, ValueError, OverflowError):  # one bad list: check one by one
                for query_id in batch:
                    ascending = _ascending_if_untied(lists[query_id].values(), n, np)
                    if ascending is not None:
                        out[query_id] = ascending
                continue
            values.sort(axis=1)  # NaN sorts last
            with np.errstate(over="ignore"):  # beyond single range: infinite, refused
                single = values.astype(np.float32)  # monotone: rows still ascending
            good = (np.isfinite(single[:, 0]) & np.isfinite(single[:, -1])
                    & ~(single[:, 1:] == single[:, :-1]).any(axis=1))
            for query_id, row, ok in zip(batch, values, good.tolist()):
                if ok:
                    out[query_id] = row
    return out


def _as_dict(docs, query_id) -> dict | None:
    """``docs`` as ``{doc_id: score}`` where that changes nothing: a non-empty dict, or a
    list of this query's ScoredDocs with distinct ids (what the run readers return); else
    None, and the list takes the checked path."""
    if type(docs) is dict:
        return docs or None
    if type(docs) is RankedDocs:
        pairs = dict(zip(docs.doc_ids, docs.scores))
        return pairs if pairs and len(pairs) == len(docs.doc_ids) == len(docs.scores) else None
    if type(docs) is not list or not docs or set(map(type, docs)) != {ScoredDoc}:
        return None
    if set(map(_QUERY_OF, docs)) != {query_id}:
        return None
    pairs = dict(zip(map(_DOC_ID, docs), map(_SCORE_OF, docs)))
    return pairs if len(pairs) == len(docs) else None


def _diagnose(qrels: Mapping, run: Mapping) -> None:
    """Name the id or value trec_eval refused (the fast path leaves these checks to it)."""
    for query_id in sorted(run):
        for doc_id in qrels.get(query_id, {}):
            if not isinstance(doc_id, str):
                raise ValueError(f"qrels: doc_id for query_id={query_id!r} must be a string, "
                                 f"got {doc_id!r}")
        _check_pairs(list(run[query_id].items()), query_id, unique=True)


def _has_tie(ranking: list[tuple[str, float]]) -> bool:
    """Whether two scores of a list are one single-precision float (a tie for the engine)."""
    try:
        single = _single(map(float, map(_SCORE, ranking)))
    except (TypeError, ValueError, OverflowError):
        return False
    return len(set(single)) != len(single)


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


# --------------------------------------------------------------------------- results


class Rankings(Mapping[str, list]):
    """query_id -> the kept top of its scored list, as ``(doc_id, score)`` pairs.

    A run reader's list that trec_eval scored as it was is kept as it was read (its
    ScoredDocs, or :class:`RankedDocs`), and made into pairs only when a query's ranking
    is asked for: :meth:`doc_scores`, which rankings.jsonl is written from, reads the list
    itself, so a 160,000-line run does not build 160,000 pairs only to take them apart."""

    __slots__ = ("_lists", "_scored_docs")

    def __init__(self, lists: dict[str, list], scored_docs: set[str] = frozenset()):
        self._lists = lists
        self._scored_docs = set(scored_docs)  # queries whose list still holds ScoredDocs

    def __getitem__(self, query_id: str) -> list[tuple[str, float]]:
        if query_id in self._scored_docs:
            docs = self._lists[query_id]
            self._lists[query_id] = (list(zip(*docs)) if type(docs) is RankedDocs
                                     else list(map(_DOC_SCORE, docs)))
            self._scored_docs.discard(query_id)
        return self._lists[query_id]

    def __iter__(self):
        return iter(self._lists)

    def __len__(self) -> int:
        return len(self._lists)

    def __repr__(self) -> str:
        return f"Rankings({len(self)} queries)"

    def doc_scores(self, query_id: str) -> tuple[list[str], list]:
        """``(doc ids, scores)`` of one query's kept ranking."""
        docs = self._lists[query_id]
        if query_id in self._scored_docs:
            if type(docs) is RankedDocs:
                return docs.doc_ids, docs.scores
            return list(map(_DOC_ID, docs)), list(map(_SCORE_OF, docs))
        return list(map(itemgetter(0), docs)), list(map(itemgetter(1), docs))


@dataclass(frozen=True)
class ScoreResult:
    """Per-query values and the counts that make a mean honest."""

    measures: tuple[str, ...]
    #: query_id -> measure -> value, for every scored (judgeable) qrels query
    per_query: dict[str, dict[str, float]]
    queries_unanswered: tuple[str, ...]
    queries_dropped_unjudgeable: tuple[str, ...]
    #: run queries that are not in the qrels (ignored, reported)
    queries_not_in_qrels: tuple[str, ...]
    negative_labels: int
    judged_documents: int
    relevant_documents: int
    binary: bool
    preserve_order: bool
    #: query_id -> normalised ranking [(doc_id, original score)] that was scored
    rankings: Mapping[str, list[tuple[str, float]]] = field(default_factory=dict, repr=False)
    #: scored queries whose list held two equal scores (as the engine reads them: single
    #: precision): trec_eval alone would order each such tie by document id
    queries_tied: tuple[str, ...] = ()

    @property
    def n(self) -> int:
        return len(self.per_query)

    def values(self, measure: str, query_ids: Iterable[str] | None = None) -> list[float]:
        ids = sorted(self.per_query) if query_ids is None else list(query_ids)
        return [self.per_query[q][measure] for q in ids]

    def mean(self, measure: str, query_ids: Iterable[str] | None = None) -> float:
        """Mean over the qrels' scored queries (or the given subset of them)."""
        vals = self.values(measure, query_ids)
        if not vals:
            raise ValueError(f"no scored queries to average for {measure}")
        return sum(vals) / len(vals)

    def means(self, query_ids: Iterable[str] | None = None) -> dict[str, float]:
        ids = sorted(self.per_query) if query_ids is None else sorted(query_ids)
        return {m: self.mean(m, ids) for m in self.measures}


def _relevance(query_id, doc_id, rel) -> int:
    if isinstance(rel, bool) or not isinstance(rel, numbers.Integral):
        raise ValueError(
            f"qrels: field 'relevance' for (query_id={query_id!r}, doc_id={doc_id!r}) "
            f"must be an integer, got {rel!r}"
        )
    return int(rel)


def prepare_qrels(qrels: Mapping[str, Mapping[str, int]], binary: bool = False):
    """Qrels as trec_eval will see them: negatives -> 0, optional binary collapse.

    Returns ``(judgeable, dropped, negative_labels)`` where ``dropped`` lists (sorted) the
    queries with no relevant document.  Query and doc ids must be strings and labels
    integers in ``RELEVANCE_MIN .. RELEVANCE_MAX`` (trec_eval keeps a label in a C int:
    a larger one silently zeroes every measure, or crashes the engine; doc ids are checked
    when trec_eval is handed the qrels, see :func:`_diagnose`); a query's mapping is passed
    through uncopied when nothing needs rewriting.
    """
    judgeable: dict[str, dict[str, int]] = {}
    dropped: list[str] = []
    negative = 0
    for query_id, docs in qrels.items():
        if not isinstance(query_id, str):
            raise ValueError(f"qrels: query_id must be a string, got {query_id!r}")
        values = docs.values()
        if set(map(type, values)) != {int}:
            if not docs:
                dropped.append(query_id)
                continue
            docs = {d: _relevance(query_id, d, r) for d, r in docs.items()}
            values = docs.values()
        if max(values) > RELEVANCE_MAX or min(values) < RELEVANCE_MIN:
            doc_id, rel = next((d, r) for d, r in docs.items()
                               if not RELEVANCE_MIN <= r <= RELEVANCE_MAX)
            raise ValueError(f"qrels: field 'relevance' for (query_id={query_id!r}, "
                             f"doc_id={doc_id!r}): {rel} is outside the supported range "
                             f"{RELEVANCE_MIN} .. {RELEVANCE_MAX}")
        if max(values) <= 0:
            dropped.append(query_id)
            negative += sum(1 for r in values if r < 0)
            continue
        if min(values) < 0 or (binary and max(values) > 1):
            negative += sum(1 for r in values if r < 0)
            docs = {d: (0 if r < 0 else (1 if binary and r > 0 else r)) for d, r in docs.items()}
        judgeable[query_id] = docs
    return judgeable, sorted(dropped), negative


def _combined_specs(specs: Iterable[str]) -> set[str]:
    """trec_eval measure specs with one entry per measure: ``ndcg_cut.5`` and
    ``ndcg_cut.10`` become ``ndcg_cut.10,5`` (what pytrec_eval's own wrapper passes on;
    the engine keeps one parameter list per measure)."""
    params: dict[str, set[str]] = {}
    for spec in specs:
        name, _, values = spec.partition(".")
        params.setdefault(name, set()).update(filter(None, values.split(",")))
    return {f"{name}.{','.join(sorted(values))}" if values else name
            for name, values in params.items()}


def relevance_evaluator(qrels: Mapping[str, Mapping[str, int]], specs: Iterable[str]):
    """The engine's evaluator over ``qrels`` for trec_eval measure ``specs``.

    The compiled engine is called directly: pytrec_eval's Python wrapper only combines
    measure specs (:func:`_combined_specs`) and drops queries without judgements, and it
    imports numpy, which costs a short ``harness score`` a tenth of its time."""
    try:
        from pytrec_eval_ext import RelevanceEvaluator
    except ImportError:  # a packaging without the bare extension: the wrapper does the same
        from pytrec_eval import RelevanceEvaluator
    return RelevanceEvaluator({q: d for q, d in qrels.items() if d}, _combined_specs(specs))


def score(
    qrels: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Sequence],
    measures: Iterable[str] | None = None,
    *,
    binary: bool = False,
    preserve_order: bool = False,
    keep_rankings: int | None = None,
) -> ScoreResult:
    """Score ``run`` against ``qrels`` with trec_eval ``-c`` semantics (module docstring).

    ``run`` maps query_id to ScoredDocs, ``(doc_id, score)`` pairs, ``{doc_id: score}`` or
    :class:`~harness.core.records.RankedDocs`.
    ``keep_rankings`` keeps the top-k of each normalised list in the result.  Measures
    with a run cut-off (MRR@10) get a second trec_eval pass over the cut lists.
    """
    resolved = resolve(measures)
    judgeable, dropped, negative = prepare_qrels(qrels, binary=binary)

    cache: dict[str, tuple] = {}
    full: dict[str, dict[str, float]] = {}  # what trec_eval sees for the whole list
    ordered: dict[str, list[tuple[str, float]]] = {}  # normalised lists
    # Lists passed to trec_eval unchanged (query -> their scores): a dict whose
    # scores hold no tie is already in rank_key order, so rank-derived scores would change
    # nothing.  Its ids and value types are checked when trec_eval reads them (_diagnose).
    # A reader's list of ScoredDocs goes the same way, as a dict (_as_dict).
    untied: dict[str, Sequence[float]] = {}
    descending: set[str] = set()  # untied reader lists already in rank order (as given)
    as_dicts: dict[str, dict] = {}
    unanswered: list[str] = []
    if not preserve_order:
        as_dicts = {q: d for q in judgeable if (d := _as_dict(run.get(q), q)) is not None}
        untied = _untied_lists(as_dicts, descending)
    for query_id in judgeable:
        docs = run.get(query_id)
        if not docs:
            unanswered.append(query_id)
            continue
        if query_id in untied:
            full[query_id] = as_dicts[query_id]
            continue
        ranking = _normalise(docs, preserve_order, query_id, cache)
        if not ranking:  # an empty iterable
            unanswered.append(query_id)
            continue
        full[query_id] = rank_scores(ranking)
        ordered[query_id] = ranking

    scored_docs: set[str] = set()  # rankings kept as a reader's ScoredDocs (Rankings)

    def ranking_of(query_id: str, k: int) -> list:
        """The top ``k`` of the list as scored (pairs, or a reader's ScoredDocs)."""
        ranking = ordered.get(query_id)
        if ranking is not None:
            return ranking[:k]
        docs = run[query_id]
        if query_id in descending and type(docs) in (list, RankedDocs):
            scored_docs.add(query_id)  # a reader's list already in rank order
            if type(docs) is RankedDocs:
                return RankedDocs(docs.doc_ids[:k], docs.scores[:k])
            return docs[:k]
        return sorted(full[query_id].items(), key=_SCORE, reverse=True)[:k]

    def cut(query_id: str, k: int) -> dict[str, float]:
        if query_id in ordered:
            return rank_scores(ordered[query_id], k)
        docs = full[query_id]
        if len(docs) <= k:
            return docs
        threshold = float(sorted(untied[query_id])[-k])  # the k-th highest score, a double
        return {d: s for d, s in docs.items() if float(s) >= threshold}

    def evaluate(trec_run, specs):
        trec_qrels = judgeable if len(trec_run) == len(judgeable) else {
            q: judgeable[q] for q in trec_run
        }
        values = relevance_evaluator(trec_qrels, specs).evaluate(trec_run)
        if len(values) != len(trec_run):
            lost = sorted(set(trec_run) - set(values))
            raise RuntimeError(f"{ENGINE_NAME} returned no values for queries {lost[:5]}")
        return values

    def run_at(cutoff, batch):
        docs = {q: full[q] for q in batch if q in full}
        return docs if cutoff is None else {q: cut(q, cutoff) for q in docs}

    def evaluated_batch(batch: list[str]) -> dict[int | None, dict]:
        """trec_eval's values for the queries of ``batch``, per run cut-off."""
        evaluated: dict[int | None, dict] = {}
        for cutoff, specs in trec_measures.items():
            trec_run = run_at(cutoff, batch)
            if not trec_run:
                evaluated[cutoff] = {}
                continue
            try:
                evaluated[cutoff] = evaluate(trec_run, specs)
            except TypeError:  # an id or a value trec_eval cannot read
                _diagnose(judgeable, full)
                # valid numbers of a type trec_eval does not take (numpy float32 ...): re-rank
                for query_id in sorted(untied):
                    ordered[query_id] = _normalise(run[query_id], False, query_id, cache)
                    full[query_id] = rank_scores(ordered[query_id])
                untied.clear()
                evaluated[cutoff] = evaluate(run_at(cutoff, batch), specs)
        return evaluated

    trec_measures: dict[int | None, set[str]] = {}
    by_trec = [m for m in resolved if m.by_trec_eval]
    for m in by_trec:
        trec_measures.setdefault(m.run_cutoff, set()).add(m.trec_measure)

    # every judgeable query gets every measure: 0.0 where the run did not answer (-c).
    # trec_eval sees EVAL_BATCH queries at a time, and its values become rows at once:
    # its own per-query dicts never exist for the whole run.
    names = [m.name for m in by_trec]
    columns_keys = [([m.name for m in by_trec if m.run_cutoff == cutoff],
                     [m.trec_key for m in by_trec if m.run_cutoff == cutoff])
                    for cutoff in trec_measures]
    per_query: dict[str, dict[str, float]] = {}
    zeros = [0.0] * len(names)
    queries = sorted(judgeable)
    for start in range(0, len(queries), EVAL_BATCH):
        batch = queries[start:start + EVAL_BATCH]
        groups = [(values, *ck) for values, ck in zip(evaluated_batch(batch).values(),
                                                       columns_keys)]
        for query_id in batch:
            row: dict[str, float] = {}
            for values, columns, keys in groups:
                found = values.get(query_id)
                row.update(zip(columns, zeros if found is None else map(found.__getitem__, keys)))
            per_query[query_id] = row if len(groups) == 1 else {n: row[n] for n in names}
    if JUDGED in (m.name for m in resolved):
        judged = judged_values(per_query, judgeable,
                               {q: top_ids(ranking_of(q, JUDGED_DEPTH)) for q in full})
        for query_id, value in judged.items():
            per_query[query_id][JUDGED] = value

    tied = tuple(sorted(q for q, ranking in ordered.items() if _has_tie(ranking)))
    rankings = {}
    if keep_rankings:
        rankings = Rankings({q: ranking_of(q, keep_rankings) for q in sorted(full)}, scored_docs)
    return ScoreResult(
        measures=tuple(m.name for m in resolved),
        per_query=per_query,
        queries_unanswered=tuple(sorted(unanswered)),
        queries_dropped_unjudgeable=tuple(dropped),
        queries_not_in_qrels=tuple(sorted(set(run) - set(qrels))),
        negative_labels=negative,
        judged_documents=sum(len(d) for d in judgeable.values()),
        relevant_documents=sum(sum(map((0).__lt__, d.values())) for d in judgeable.values()),
        binary=binary,
        preserve_order=preserve_order,
        rankings=rankings,
        queries_tied=tied,
    )
