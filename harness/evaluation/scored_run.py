"""One run scored against qrels, as the claim and the files of its results directory.

``harness score`` and the Python API (``harness.evaluate``) both call :func:`score_run`, and
both write through :meth:`ScoredRun.write`, so a number in a notebook and a number from the
command line are one computation.  The tier comes from the declared licence exactly as on
the command line (:func:`harness.core.tiers.declared_tier`: unknown -> tier B).
"""

from __future__ import annotations

import dataclasses
import logging
from itertools import chain
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.claims.metrics import METRICS_JSON, QRELS, QUERIES, MetricsClaim
from harness.core.canonical import Columns, Grouped, canonical_lines
from harness.core.markdown import md_escape
from harness.core.measures import reported, resolve
from harness.core.tiers import UNKNOWN_LICENCE, declared_tier
from harness.evaluation.results import render_results, write_results
from harness.evaluation.rows import QueryMeta, build_rows, metrics_table, per_query_rows, ranking_rows
from harness.evaluation.engine import metric_engine_block
from harness.evaluation.scoring import ScoreResult, score

log = logging.getLogger(__name__)

#: top-k per query kept in rankings.jsonl by default
KEEP_RANKINGS = 100

#: the relevance policy of a run scored against given qrels (no gold-span mapping)
NEGATIVE_LABELS = "judged non-relevant (relevance 0)"


def relevance_policy(binary: bool) -> dict:
    """The ``relevance_policy`` block of a run scored against qrels as given."""
    return {"graded_from": "qrels", "gain": "linear", "binary": binary,
            "relevance_high": None, "relevance_low": None, "negative_labels": NEGATIVE_LABELS}


def qrels_rows(judgements: Mapping[str, Mapping[str, int]], meta: Mapping[str, QueryMeta],
               tiers: Mapping[str, str]) -> Columns:
    """The judgements a run was scored with, one row per (query, document), sorted; labels
    as given (negative ones included).  A query without any judgement has no row.  Corpus,
    tier and query id are given once per query (:class:`Grouped`), and so written once."""
    order = sorted((q for q in judgements if judgements[q]), key=lambda q: (meta[q].corpus, q))
    docs = [sorted(judgements[q]) for q in order]
    corpora = [meta[q].corpus for q in order]
    return Columns({
        "corpus": Grouped(corpora),
        "tier": Grouped(map(tiers.__getitem__, corpora)),
        "query_id": Grouped(order),
        "doc_id": list(chain.from_iterable(docs)),
        "relevance": list(map(int, chain.from_iterable(
            map(judgements[q].__getitem__, ids) for q, ids in zip(order, docs)))),
    }, groups=list(map(len, docs)))


def qrels_text(judgements, meta, tiers) -> str:
    """``qrels.jsonl``: :func:`qrels_rows` as canonical JSONL (a JSONL qrels file itself)."""
    return canonical_lines(qrels_rows(judgements, meta, tiers))


def queries_text(texts: Mapping[str, str], meta: Mapping[str, QueryMeta],
                 tiers: Mapping[str, str]) -> str:
    """``queries.jsonl``: the text of every query in ``meta`` that ``texts`` knows, one
    canonical line per query sorted by corpus and id, at its corpus's tier (a query's text
    is as restrictive as the corpus it came from)."""
    order = sorted((q for q in meta if q in texts), key=lambda q: (meta[q].corpus, q))
    return canonical_lines({"corpus": meta[q].corpus, "tier": tiers[meta[q].corpus],
                            "query_id": q, "text": texts[q]} for q in order)


@dataclasses.dataclass(frozen=True)
class ScoredRun:
    """The claim of one run and the files that go with it, not yet written.

    ``metrics_md`` None means the score table under ``# control_name``; ``result`` is the
    scorer's output when the run was scored here (None when read back from a directory).
    """

    claim: MetricsClaim
    measures: tuple[str, ...]
    per_query: list[dict]
    rankings: Sequence[Mapping]  # a Columns table when scored here
    extra_files: Mapping[str, str] = dataclasses.field(default_factory=dict)
    metrics_md: str | None = None
    result: ScoreResult | None = dataclasses.field(default=None, repr=False, compare=False)

    def named(self, control_name: str) -> "ScoredRun":
        """The same run under another ``control_name`` (the heading of metrics.md too)."""
        if control_name == self.claim.control_name:
            return self
        return dataclasses.replace(self, claim=dataclasses.replace(self.claim,
                                                                   control_name=control_name))

    def table(self) -> str:
        """The Markdown table of the claim's rows (metrics.md without its heading)."""
        return metrics_table(self.claim.rows, list(self.measures))

    def markdown(self) -> str:
        """The text of metrics.md."""
        if self.metrics_md is not None:
            return self.metrics_md
        return f"# {md_escape(self.claim.control_name)}\n\n" + self.table()

    def render(self, source: str = METRICS_JSON) -> tuple[MetricsClaim, dict[str, str]]:
        """``(pinned claim, {file name: text})`` exactly as :meth:`write` would write them."""
        return render_results(self.claim, metrics_md=self.markdown(), per_query=self.per_query,
                              rankings=self.rankings, extra_files=self.extra_files,
                              source=source)

    def write(self, out, runinfo: Mapping[str, Any] | None = None) -> Path:
        """Write the results directory ``out`` atomically; returns its path."""
        return write_results(out, self.claim, metrics_md=self.markdown(),
                             per_query=self.per_query, rankings=self.rankings,
                             runinfo=runinfo, extra_files=self.extra_files)


def score_run(
    judgements: Mapping[str, Mapping[str, int]],
    run: Mapping[str, Sequence],
    measures: Sequence[str] | None = None,
    *,
    corpus: str,
    control_name: str,
    qrels_sha256: str,
    run_sha256: str,
    run_source: str = "run file",
    licence: str = UNKNOWN_LICENCE,
    tier: str | None = None,
    query_classes: Mapping[str, str] | None = None,
    classes_source: str = "query classes",
    binary: bool = False,
    preserve_order: bool = False,
    keep_rankings: int | None = KEEP_RANKINGS,
    query_texts: Mapping[str, str] | None = None,
    texts_source: str = "query texts",
    qrels_version: str | None = None,
) -> ScoredRun:
    """Score ``run`` against ``judgements`` (trec_eval ``-c``, ties normalised) into the claim
    and files ``harness score`` writes.

    ``qrels_sha256`` / ``run_sha256`` identify the inputs (a file's sha256, or that of an
    in-memory input's JSONL form); ``run_source`` says which.  Queries in
    ``query_classes`` (or ``query_texts``) that are not in the qrels are ignored with a
    warning naming ``classes_source`` (``texts_source``).  ``query_texts`` given, the texts
    of the qrels queries are written to ``queries.jsonl`` (pinned by the claim).
    ``qrels_version`` (a qrels version's name) is recorded as the corpus's ``version``, so
    runs scored on different versions are flagged as not comparable.
    """
    tier, evidence = declared_tier(licence, tier, corpus)
    resolved = resolve(reported(measures))
    names = [m.name for m in resolved]
    classes = dict(query_classes or {})
    strays = sorted(set(classes) - set(judgements))
    if strays:
        log.warning("%d queries in %s are not in the qrels and are ignored: %s",
                    len(strays), classes_source, strays[:5])
    texts = dict(query_texts or {})
    strays = sorted(set(texts) - set(judgements))
    if strays:
        log.warning("%d queries in %s are not in the qrels and are ignored: %s",
                    len(strays), texts_source, strays[:5])
    result = score(judgements, run, names, binary=binary, preserve_order=preserve_order,
                   keep_rankings=keep_rankings)
    meta = {q: QueryMeta(corpus, classes.get(q)) for q in judgements}
    tiers = {corpus: tier}
    rows = build_rows(result, meta, tiers)
    claim = MetricsClaim(
        control_name=control_name,
        corpora=[{
            "name": corpus, "version": qrels_version, "licence": licence, "tier": tier,
            "sha256": qrels_sha256, "files": None, "chunks": None, "evidence": evidence,
        }],
        index=None,
        retrieval={"source": run_source, "run_sha256": run_sha256,
                   "preserve_order": preserve_order, "rankings_kept": keep_rankings},
        metric_engine=metric_engine_block(resolved, preserve_order),
        relevance_policy=relevance_policy(binary),
        judgements={"queries_in_qrels": len(judgements),
                    "judged_documents": result.judged_documents,
                    "relevant_documents": result.relevant_documents,
                    "negative_labels": result.negative_labels,
                    "run_queries_not_in_qrels": len(result.queries_not_in_qrels)},
        rows=rows,
    )
    return ScoredRun(claim=claim, measures=tuple(names),
                     per_query=per_query_rows(result, meta, tiers),
                     rankings=ranking_rows(result, meta),
                     extra_files={QRELS: qrels_text(judgements, meta, tiers),
                                  **({QUERIES: queries_text(texts, meta, tiers)}
                                     if texts else {})},
                     result=result)
