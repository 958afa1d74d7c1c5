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

The parts live beside this module: the engine and its identity in :mod:`~harness.evaluation.engine`,
list order and rank-derived scores in :mod:`~harness.evaluation.ordering`, single-precision ties
in :mod:`~harness.evaluation.ties`, qrels preparation in :mod:`~harness.evaluation.relevance`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Iterable, Mapping, Sequence

from harness.core.measures import JUDGED, resolve
from harness.core.records import RankedDocs, RunColumns
from harness.evaluation.engine import ENGINE_NAME, relevance_evaluator
from harness.evaluation.judged import DEPTH as JUDGED_DEPTH
from harness.evaluation.judged import judged_values, top_ids
from harness.evaluation.ordering import as_dict, check_pairs, normalise, rank_scores
from harness.evaluation.relevance import prepare_qrels
from harness.evaluation.ties import has_tie, untied_lists

#: queries trec_eval scores per call (bounds the engine's per-query output held at once)
EVAL_BATCH = 1 << 14

_SCORE = itemgetter(1)
_DOC_SCORE = itemgetter(1, 2)
_DOC_ID = itemgetter(1)
_SCORE_OF = itemgetter(2)


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


def _diagnose(qrels: Mapping, run: Mapping) -> None:
    """Name the id or value trec_eval refused (the fast path leaves these checks to it)."""
    for query_id in sorted(run):
        for doc_id in qrels.get(query_id, {}):
            if not isinstance(doc_id, str):
                raise ValueError(f"qrels: doc_id for query_id={query_id!r} must be a string, "
                                 f"got {doc_id!r}")
        check_pairs(list(run[query_id].items()), query_id, unique=True)


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
        read = run.take_mappings() if isinstance(run, RunColumns) else {}
        as_dicts = {q: d for q in judgeable
                    if (d := as_dict(run.get(q), q, read.get(q))) is not None}
        del read
        untied = untied_lists(as_dicts, descending)
    for query_id in judgeable:
        docs = run.get(query_id)
        if not docs:
            unanswered.append(query_id)
            continue
        if query_id in untied:
            full[query_id] = as_dicts[query_id]
            continue
        ranking = normalise(docs, preserve_order, query_id, cache)
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
                    ordered[query_id] = normalise(run[query_id], False, query_id, cache)
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

    tied = tuple(sorted(q for q, ranking in ordered.items() if has_tie(ranking)))
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
