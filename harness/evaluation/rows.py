"""Report objects: metric rows per corpus x query class, per-query rows, Markdown tables.

Computing is separate from presenting (ranx's lesson): :func:`build_rows` and
:func:`per_query_rows` return plain data for metrics.json; :func:`metrics_table` and
:func:`compare_table` render it for a reader.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain
from operator import itemgetter
from typing import Mapping, Sequence

from harness.claims.metrics import ALL, comparability_notes, pooled_name
from harness.core.canonical import RANKS, Columns, Grouped
from harness.core.markdown import md_escape
from harness.core.measures import COMPARE_MEASURES
from harness.core.tiers import most_restrictive_tier
from harness.evaluation.scoring import Rankings, ScoreResult

@dataclass(frozen=True)
class QueryMeta:
    corpus: str
    query_class: str | None


def _row(corpus, tier, query_class, ids, result: ScoreResult, unanswered, dropped) -> dict:
    return {
        "corpus": corpus,
        "tier": tier,
        "query_class": query_class,
        "n": len(ids),
        "metrics": {m: result.mean(m, ids) for m in result.measures},
        "queries_unanswered": sum(1 for q in ids if q in unanswered),
        "queries_dropped_unjudgeable": sum(1 for q in dropped),
    }


def build_rows(
    result: ScoreResult,
    meta: Mapping[str, QueryMeta],
    tiers: Mapping[str, str],
    *,
    pooled: bool = True,
) -> list[dict]:
    """One row per corpus x query class plus ``all`` per corpus (and a pooled ``all`` row
    over several corpora, whose tier is the most restrictive of theirs).

    ``meta`` must describe every qrels query, scored or dropped.  Queries without a class
    count only towards ``all``.  A class whose queries were all dropped gets no row; its
    drops still count in ``all``.
    """
    missing = sorted((set(result.per_query) | set(result.queries_dropped_unjudgeable)) - set(meta))
    if missing:
        raise ValueError(f"no corpus/class known for queries {missing[:5]} ({len(missing)} in all)")
    unanswered = set(result.queries_unanswered)
    rows: list[dict] = []
    by_corpus: dict[str, list[str]] = {}
    for q, m in meta.items():
        by_corpus.setdefault(m.corpus, []).append(q)
    for corpus in sorted(by_corpus):
        if corpus not in tiers:
            raise ValueError(f"no licence tier for corpus {corpus!r}")
        tier = tiers[corpus]
        queries = by_corpus[corpus]
        classes = sorted({meta[q].query_class for q in queries if meta[q].query_class})
        for cls in classes + [ALL]:
            members = [q for q in queries if cls == ALL or meta[q].query_class == cls]
            ids = sorted(q for q in members if q in result.per_query)
            dropped = [q for q in members if q in result.queries_dropped_unjudgeable]
            if not ids:
                if cls == ALL:
                    raise ValueError(f"corpus {corpus!r} has no judgeable query to score")
                continue
            rows.append(_row(corpus, tier, cls, ids, result, unanswered, dropped))
    if pooled and len(by_corpus) > 1:
        ids = sorted(result.per_query)
        dropped = list(result.queries_dropped_unjudgeable)
        tier = most_restrictive_tier(tiers[c] for c in by_corpus)
        rows.append(_row(pooled_name(by_corpus), tier, ALL, ids, result, unanswered, dropped))
    return rows


def per_query_rows(result: ScoreResult, meta: Mapping[str, QueryMeta],
                   tiers: Mapping[str, str]) -> Columns:
    """One row per scored query x measure, sorted by (corpus, query_id, measure order).

    Built as columns (:class:`~harness.core.canonical.Columns`, a sequence of dicts to its
    readers): a million queries x 12 measures would otherwise be 12 million dicts.  What
    belongs to the query (corpus, tier, class, id, answered) is given once per query."""
    unanswered = set(result.queries_unanswered)
    order = sorted(result.per_query, key=lambda q: (meta[q].corpus, q))
    measures = list(result.measures)
    corpora = [meta[q].corpus for q in order]
    per_query = result.per_query
    return Columns({
        "corpus": Grouped(corpora),
        "tier": Grouped(tiers[c] for c in corpora),
        "query_class": Grouped(meta[q].query_class for q in order),
        "query_id": Grouped(order),
        "measure": measures * len(order),
        "value": [per_query[q][m] for q in order for m in measures],
        "answered": Grouped(q not in unanswered for q in order),
    }, groups=[len(measures)] * len(order))


def ranking_rows(result: ScoreResult, meta: Mapping[str, QueryMeta]) -> Columns:
    """The kept top-k of each scored list (``corpus, query_id, rank, doc_id, score``, by
    corpus and query, then rank): what statistics and certificates read back."""
    rankings = result.rankings
    order = sorted(rankings, key=lambda q: (meta[q].corpus, q))
    if isinstance(rankings, Rankings):
        columns = list(map(rankings.doc_scores, order))
    else:
        columns = [(list(map(itemgetter(0), r)), list(map(itemgetter(1), r)))
                   for r in map(rankings.__getitem__, order)]
    sizes = [len(ids) for ids, _ in columns]
    return Columns({
        "corpus": Grouped(meta[q].corpus for q in order),
        "query_id": Grouped(order),
        "rank": RANKS,
        "doc_id": list(chain.from_iterable(map(itemgetter(0), columns))),
        "score": list(map(float, chain.from_iterable(map(itemgetter(1), columns)))),
    }, groups=sizes)


# --------------------------------------------------------------------------- Markdown


def _fmt(value: float) -> str:
    return f"{value:.4f}"


def _signed(value: float) -> str:
    text = f"{value:+.4f}"
    return "+0.0000" if text == "-0.0000" else text


def metrics_table(rows: Sequence[Mapping], measures: Sequence[str]) -> str:
    """The methodology's table: corpus, tier, class, n, measures (4 decimals), counts."""
    head = ["corpus", "tier", "class", "n", *map(md_escape, measures), "unanswered", "dropped"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [md_escape(r["corpus"]), md_escape(r["tier"]), md_escape(r["query_class"]),
                 str(r["n"])]
        cells += [_fmt(r["metrics"][m]) for m in measures]
        cells += [str(r["queries_unanswered"]), str(r["queries_dropped_unjudgeable"])]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def compare_table(control: Mapping, candidate: Mapping,
                  measures: Sequence[str] = COMPARE_MEASURES) -> str:
    """Per corpus x class: the control's and candidate's first measure, then deltas.

    Rows present in only one file are listed with the side that is missing; a row whose
    ``n`` differs is flagged, because a delta over different query sets is not a delta;
    so are differences in metric engine, relevance policy, corpus version or checksum,
    granularity, scope, stage and the indexed corpora (:func:`comparability_notes`).
    Deltas are candidate minus control.
    """
    def index(doc):
        return {(r["corpus"], r["query_class"]): r for r in doc["rows"]}

    ctl, cand = index(control), index(candidate)
    if not measures:
        raise ValueError("compare needs at least one measure")
    lead = measures[0]
    head = ["corpus", "class", "n", f"{md_escape(lead)} control", f"{md_escape(lead)} candidate",
            *[f"Δ {md_escape(m)}" for m in measures]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = [f"- {md_escape(n[2:] if n.startswith('- ') else n)}"
             for n in comparability_notes(control, candidate)]
    for key in sorted(set(ctl) | set(cand), key=lambda k: (k[0], k[1] == ALL, str(k[1]))):
        corpus, cls = key
        a, b = ctl.get(key), cand.get(key)
        if a is None or b is None:
            notes.append(f"- {md_escape(corpus)} / {md_escape(cls)}: only in the "
                         f"{'candidate' if a is None else 'control'}")
            continue
        n = str(a["n"]) if a["n"] == b["n"] else f"{a['n']} vs {b['n']} (differs)"
        if a["n"] != b["n"]:
            notes.append(f"- {md_escape(corpus)} / {md_escape(cls)}: different query counts; "
                         "the delta is not paired")
        cells = [md_escape(corpus), md_escape(cls), n]
        missing = [m for m in measures if m not in a["metrics"] or m not in b["metrics"]]
        if missing:
            notes.append(f"- {md_escape(corpus)} / {md_escape(cls)}: measures missing from one "
                         f"file: {md_escape(missing)}")
            continue
        cells += [_fmt(a["metrics"][lead]), _fmt(b["metrics"][lead])]
        cells += [_signed(b["metrics"][m] - a["metrics"][m]) for m in measures]
        lines.append("| " + " | ".join(cells) + " |")
    out = "\n".join(lines) + "\n"
    if notes:
        out += "\n" + "\n".join(notes) + "\n"
    return out
