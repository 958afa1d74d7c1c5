"""Scoring with trec_eval semantics made explicit.

Engine: ``pytrec_eval_terrier`` (NIST trec_eval).  What the harness adds, and why:

* **trec_eval ``-c``**: every query in the qrels is scored.  A query the run did not answer
  scores 0 on every measure and is counted (``queries_unanswered``); means are over the
  qrels' queries.  A mean over the answered queries only flatters exactly the regressions
  worth catching.
* **No ties reach trec_eval**: each list is sorted by
  ``(-score, doc_type, file_id, chunk_index)`` (:mod:`harness.doc_ids`) and its scores are
  replaced by rank-derived values.  ``preserve_order=True`` instead keeps the list order
  given (stages whose order is the product's own, e.g. after rerank and diversity sampling).
* **Unjudgeable queries are dropped, not zeroed**: a qrels query with no relevant document
  would score 0 for every system; it is counted in ``queries_dropped_unjudgeable``.
* **Negative labels** are judged non-relevant (relevance 0) and counted.
* **Graded relevance, linear gain**; ``binary=True`` collapses every positive grade to 1.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from harness.doc_ids import rank_key
from harness.measures import Measure, resolve
from harness.records import ScoredDoc

ENGINE_NAME = "pytrec_eval_terrier"
SEMANTICS = (
    "trec_eval -c: every qrels query is scored; an unanswered query scores 0 and is counted; "
    "queries without a relevant document are dropped and counted"
)
TIE_BREAK = (
    "sorted by (-score, doc_type, file_id, chunk_index) with ids {file}_{n} -> "
    "(chunk, file, n), {file}_digest -> (digest, file, -1), other -> (doc, id, 0); "
    "scores replaced by rank-derived values"
)
PRESERVE_ORDER_TIE_BREAK = "list order as given (preserve_order); scores replaced by rank-derived values"


def engine_version() -> str:
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
            m.name: m.trec_measure + (f" (run cut at {m.run_cutoff})" if m.run_cutoff else "")
            for m in measures
        },
    }


# --------------------------------------------------------------------------- normalisation


def _as_pairs(docs) -> list[tuple[str, float]]:
    """``[(doc_id, score)]`` from ScoredDocs, ``(doc_id, score)`` pairs or a dict."""
    if isinstance(docs, Mapping):
        return list(docs.items())
    out = []
    for doc in docs:
        if isinstance(doc, ScoredDoc):
            out.append((doc.doc_id, doc.score))
        else:
            doc_id, score = doc
            out.append((doc_id, score))
    return out


def normalise_ranking(docs, preserve_order: bool = False) -> list[tuple[str, float]]:
    """One query's list in the order trec_eval will see it, with the original scores.

    Duplicate doc ids are refused: a document cannot hold two ranks.
    """
    pairs = _as_pairs(docs)
    if len({d for d, _ in pairs}) != len(pairs):
        seen, dup = set(), None
        for d, _ in pairs:
            if d in seen:
                dup = d
                break
            seen.add(d)
        raise ValueError(f"duplicate doc_id {dup!r} in one query's ranking")
    if preserve_order:
        return pairs
    return sorted(pairs, key=lambda p: rank_key(p[0], p[1]))


def rank_scores(ranking: Sequence[tuple[str, float]], cutoff: int | None = None) -> dict[str, float]:
    """Rank-derived scores (n, n-1, ..., 1): distinct, so trec_eval sees no tie."""
    if cutoff is not None:
        ranking = ranking[:cutoff]
    n = len(ranking)
    return {doc_id: float(n - i) for i, (doc_id, _) in enumerate(ranking)}


# --------------------------------------------------------------------------- results


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
    rankings: dict[str, list[tuple[str, float]]] = field(default_factory=dict, repr=False)

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


def prepare_qrels(qrels: Mapping[str, Mapping[str, int]], binary: bool = False):
    """Qrels as trec_eval will see them: negatives -> 0, optional binary collapse.

    Returns ``(judgeable, dropped, negative_labels)`` where ``dropped`` lists queries with
    no relevant document.
    """
    judgeable: dict[str, dict[str, int]] = {}
    dropped: list[str] = []
    negative = 0
    for query_id, docs in qrels.items():
        prepared = {}
        for doc_id, rel in docs.items():
            if isinstance(rel, bool) or not isinstance(rel, int):
                raise ValueError(
                    f"qrels: field 'relevance' for (query_id={query_id!r}, doc_id={doc_id!r}) "
                    f"must be an integer, got {rel!r}"
                )
            if rel < 0:
                negative += 1
                rel = 0
            if binary and rel > 0:
                rel = 1
            prepared[str(doc_id)] = rel
        if any(r > 0 for r in prepared.values()):
            judgeable[str(query_id)] = prepared
        else:
            dropped.append(str(query_id))
    return judgeable, sorted(dropped), negative


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

    ``run`` maps query_id to ScoredDocs, ``(doc_id, score)`` pairs or ``{doc_id: score}``.
    ``keep_rankings`` keeps the top-k of each normalised list in the result.
    """
    import pytrec_eval

    resolved = resolve(measures)
    judgeable, dropped, negative = prepare_qrels(qrels, binary=binary)

    normalised: dict[str, list[tuple[str, float]]] = {}
    unanswered: list[str] = []
    for query_id in judgeable:
        docs = run.get(query_id)
        ranking = normalise_ranking(docs, preserve_order) if docs else []
        if not ranking:
            unanswered.append(query_id)
            continue
        normalised[query_id] = ranking

    per_query: dict[str, dict[str, float]] = {q: {} for q in judgeable}
    groups: dict[int | None, list[Measure]] = {}
    for m in resolved:
        groups.setdefault(m.run_cutoff, []).append(m)
    for cutoff, group in groups.items():
        trec_run = {q: rank_scores(r, cutoff) for q, r in normalised.items()}
        if trec_run:
            evaluator = pytrec_eval.RelevanceEvaluator(
                {q: judgeable[q] for q in trec_run}, {m.trec_measure for m in group}
            )
            evaluated = evaluator.evaluate(trec_run)
        else:
            evaluated = {}
        for query_id in judgeable:
            values = evaluated.get(query_id)
            for m in group:
                per_query[query_id][m.name] = float(values[m.trec_key]) if values else 0.0

    ordered = {q: {m.name: per_query[q][m.name] for m in resolved} for q in sorted(per_query)}
    rankings = {}
    if keep_rankings:
        rankings = {q: r[:keep_rankings] for q, r in sorted(normalised.items())}
    return ScoreResult(
        measures=tuple(m.name for m in resolved),
        per_query=ordered,
        queries_unanswered=tuple(sorted(unanswered)),
        queries_dropped_unjudgeable=tuple(dropped),
        queries_not_in_qrels=tuple(sorted(set(run) - set(qrels))),
        negative_labels=negative,
        judged_documents=sum(len(d) for d in judgeable.values()),
        relevant_documents=sum(1 for d in judgeable.values() for r in d.values() if r > 0),
        binary=binary,
        preserve_order=preserve_order,
        rankings=rankings,
    )
