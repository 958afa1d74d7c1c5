"""Shaping warehouse query results into what the pages show: pure pandas, no streamlit and
no SQL, so it is tested directly (the pages only render it)."""

from __future__ import annotations

import pandas as pd

from dashboard.formatting import fmt_interval, mark
from warehouse.exports import BORDERLINE_MARK, class_order, is_borderline_test
from warehouse import render
from warehouse.render import interval_precision, not_comparable_text


#: how the Results tables are laid out: measures as columns with one line per run x class
#: (classes as row groups, ``all`` first; fits at 1366 px), or one column per class x measure
BY_CLASS, BY_MEASURE = "classes as row groups", "class × measure columns"
PIVOTS = (BY_CLASS, BY_MEASURE)


def methodology_table(rows: pd.DataFrame, measures: list[str], labels: dict,
                       deltas: pd.DataFrame | None, control: str | None,
                       pivot: str = BY_CLASS) -> pd.DataFrame:
    """The value with its interval per run, class and measure, then (with a control) the
    delta with its interval and mark.  Intervals share one precision in the whole table
    (:func:`warehouse.render.interval_precision`); the ``all`` class comes first.  A delta
    between runs that measured differently (``comparable`` False: another relevance policy,
    corpus version, granularity, scope, stage or index) is not an effect: its cell says why,
    and carries neither the number nor a mark.  Delta columns appear only when the control
    has rows in ``rows`` (no control line in a corpus the control never ran on)."""
    if pivot not in PIVOTS:
        raise ValueError(f"unknown pivot {pivot!r}; expected one of {list(PIVOTS)}")
    digits = interval_precision(zip(rows["lower"], rows["upper"]))
    classes = class_order(rows["query_class"])
    with_control = (deltas is not None and control is not None
                    and control in set(rows["run_id"]))
    runs = list(dict.fromkeys(rows["run_id"]))
    cells: dict[tuple, str] = {}
    marked = "best" in rows.columns and "tied" in rows.columns
    for r in rows.itertuples(index=False):
        text = fmt_interval(r.value, r.lower, r.upper, digits)
        if marked:
            tie = getattr(r, "tie", render.TIED if r.tied else "")
            text += BEST_MARK if r.best else render.TIE_MARKS.get(tie, "")
        cells[(r.run_id, r.query_class, r.measure)] = text
    deltas_at: dict[tuple, str] = {}
    if with_control:
        for d in deltas.itertuples(index=False):
            if not bool(d.comparable):
                cell = not_comparable_cell(d.not_comparable_because)
            else:
                cell = render.fmt_delta(d.delta, d.delta_lower, d.delta_upper,
                                        BORDERLINE_MARK if is_borderline_test(d._asdict())
                                        else mark(d.verdict))
                if not d.paired:
                    cell = f"{cell} (unpaired: n {d.control_n} vs {d.n})"
            deltas_at[(d.run_id, d.query_class, d.measure)] = cell
        for cls in classes:
            for m in measures:
                deltas_at[(control, cls, m)] = "control"

    def present(cls, m):
        return any((run, cls, m) in cells for run in runs)

    lines = []
    if pivot == BY_CLASS:
        shown = [m for m in measures if any(present(c, m) for c in classes)]
        for cls in classes:
            for run in runs:
                if not any((run, cls, m) in cells for m in shown):
                    continue
                line = {"run": labels.get(run, run), "class": cls}
                for m in shown:
                    line[m] = cells.get((run, cls, m), "–")
                    if with_control:
                        line[f"{m} Δ"] = deltas_at.get((run, cls, m), "–")
                lines.append(line)
        columns = ["run", "class"]
        for m in shown:
            columns += [m, *([f"{m} Δ"] if with_control else [])]
    else:
        order = [(c, m) for c in classes for m in measures if present(c, m)]
        for run in runs:
            line = {"run": labels.get(run, run)}
            for cls, m in order:
                line[f"{cls} · {m}"] = cells.get((run, cls, m), "–")
                if with_control:
                    line[f"{cls} · {m} Δ"] = deltas_at.get((run, cls, m), "–")
            lines.append(line)
        columns = ["run"]
        for cls, m in order:
            columns += [f"{cls} · {m}", *([f"{cls} · {m} Δ"] if with_control else [])]
    return pd.DataFrame(lines).reindex(columns=columns).fillna("–")


#: what the Results page appends to the best mean and to a mean tied with the best (the
#: exports' marks)
BEST_MARK, TIED_MARK = render.BEST_MARK, render.TIED_MARK
#: what the tie marks and a borderline delta mean (the Results page's caption)
TIE_LEGEND, BORDERLINE, NOT_TESTED = render.TIE_LEGEND, render.BORDERLINE, render.NOT_TESTED
#: what a table says beside means that left out queries with no relevant document
dropped_note = render.dropped_note


def tie_marks(rows: pd.DataFrame, per_query: pd.DataFrame, groups: dict) -> pd.DataFrame:
    """``rows`` (metric intervals) with ``best`` and ``tied``: per corpus x group x class x
    measure, the highest mean and the runs a Holm-corrected paired sign-flip test cannot
    tell from the best (:func:`harness.stats.best.tied_with_best`, as the exports mark)."""
    from harness.stats.best import tied_with_best
    from warehouse.best import best_of
    from warehouse.exports import mark_ties

    frame = rows.assign(**{"class": rows["query_class"],
                           "group": rows["run_id"].map(groups).fillna("")})
    frame = frame.assign(best=best_of(frame))
    return mark_ties(frame, per_query, tied_with_best)


def not_comparable_cell(because) -> str:
    """``not comparable (first reason, +k more)``: what a delta cell says instead of a number
    when the two runs measured differently."""
    return not_comparable_text(because)


def outcome_counts(pair: pd.DataFrame) -> pd.DataFrame:
    """Per class (and ``all``): queries where B beats A (win), equals it (tie), loses, or
    that one run lacks (missing)."""
    frame = pair.assign(query_class=pair["query_class"].fillna("(no class)"))

    def counts(part: pd.DataFrame, cls: str) -> dict:
        both = part["value_a"].notna() & part["value_b"].notna()
        delta = part["delta"][both]
        return {"class": cls, "queries": len(part), "win": int((delta > 0).sum()),
                "tie": int((delta == 0).sum()), "loss": int((delta < 0).sum()),
                "missing": int((~both).sum()),
                "mean Δ": float(delta.mean()) if len(delta) else float("nan")}

    rows = [counts(part, cls) for cls, part in frame.groupby("query_class", sort=True)]
    rows.append(counts(frame, "all"))
    return pd.DataFrame(rows)



#: the colours of a query's outcome, B against A
OUTCOME_COLOURS = {"B better": "#1a7f37", "tie": "#6e7781", "B worse": "#c0392b"}


def scatter_points(pair: pd.DataFrame) -> pd.DataFrame:
    """The per-query pairs answered by both runs, one line per distinct ``(value_a,
    value_b)`` (to 6 decimals) with how many queries sit there, their outcome, classes and
    the first five query ids: ties at one point (on QMSum most queries tie at (0, 0)) show as
    one circle of their count instead of one dot."""
    both = pair.dropna(subset=["value_a", "value_b"]).assign(
        a=lambda f: f["value_a"].round(6), b=lambda f: f["value_b"].round(6),
        query_class=lambda f: f["query_class"].fillna("(no class)"))
    if both.empty:
        return pd.DataFrame(columns=["value_a", "value_b", "queries", "outcome", "classes",
                                     "examples"])
    rows = []
    for (a, b), part in both.groupby(["a", "b"], sort=True):
        delta = b - a
        rows.append({"value_a": float(a), "value_b": float(b), "queries": len(part),
                     "outcome": "B better" if delta > 0 else "B worse" if delta < 0 else "tie",
                     "classes": ", ".join(sorted(set(part["query_class"]))),
                     "examples": ", ".join(list(part["query_id"].astype(str))[:5])})
    return pd.DataFrame(rows)


def count_legend(most: int) -> list[int]:
    """Whole counts for the size legend: 1, the largest, and up to three between."""
    if most <= 4:
        return list(range(1, most + 1))
    between = sorted({max(2, round(most * f)) for f in (0.1, 0.3, 0.6)} - {1, most})
    return [1, *between, most]


def square_domain(points: pd.DataFrame) -> tuple[float, float]:
    """One domain for both axes: [0, 1] unless a value lies outside it."""
    values = pd.concat([points["value_a"], points["value_b"]])
    return min(0.0, float(values.min())), max(1.0, float(values.max()))




# --------------------------------------------------------------------------- agreement


def arms_from_deltas(deltas: pd.DataFrame, corpus_a: str, corpus_b: str, labels: dict,
                     family: str) -> pd.DataFrame:
    """Agreement arms from :func:`warehouse.queries.deltas` rows against one picked control:
    one line per run that has a paired, comparable delta on both corpora (same query count
    as the control on each, same measurement setup), in the layout of
    ``warehouse.queries.agreement_arms``."""
    comparable = deltas["comparable"].astype(bool) if "comparable" in deltas else True
    paired = deltas[deltas["paired"].astype(bool) & comparable
                    & deltas["corpus"].isin([corpus_a, corpus_b])]
    wide = paired.pivot_table(index="run_id", columns="corpus", values="delta", aggfunc="first")
    tiers = paired.groupby("run_id")["tier"].max()
    if corpus_a not in wide.columns or corpus_b not in wide.columns:
        return pd.DataFrame(columns=["family", "arm", "run_id", "tier", "delta_a", "delta_b",
                                     "sign", "source", "included"])
    wide = wide.dropna(subset=[corpus_a, corpus_b])
    rows = []
    for run_id, r in wide.iterrows():
        a, b = float(r[corpus_a]), float(r[corpus_b])
        rows.append({"family": family, "arm": labels.get(run_id, run_id), "run_id": run_id,
                     "tier": tiers[run_id], "delta_a": a, "delta_b": b,
                     "sign": sign_class(a, b), "source": "measured", "included": True})
    return pd.DataFrame(rows).sort_values("arm").reset_index(drop=True) if rows else \
        pd.DataFrame(columns=["family", "arm", "run_id", "tier", "delta_a", "delta_b", "sign",
                              "source", "included"])


def sign_class(a: float, b: float) -> str:
    from harness.stats.agreement import sign_class as harness_sign_class

    return harness_sign_class(a, b)


def live_summary(arms: pd.DataFrame, corpus_a: str, corpus_b: str) -> dict:
    """The harness's own agreement summary (``harness.stats.agreement.summarize``) of arms
    picked in the dashboard: the same code ``python -m harness agreement`` runs."""
    from harness.stats.agreement import Arm, summarize

    members = [Arm(r.family, r.arm, None, (float(r.delta_a), float(r.delta_b)), "measured",
                   r.run_id, r.tier) for r in arms.itertuples(index=False)]
    return summarize(members, [corpus_a, corpus_b])


def coefficient_rows(results: pd.DataFrame) -> pd.DataFrame:
    """Stored agreement rows as the table the page shows (undefined stays undefined)."""
    from dashboard.formatting import fmt_p, fmt_signed, missing

    def coef(value, p):
        return "undefined" if missing(value) else f"{fmt_signed(value, 3)} (p {fmt_p(p)})"

    out = []
    for r in results.itertuples(index=False):
        out.append({
            "family": "pooled" if r.pooled else r.family, "tier": r.tier, "arms": r.n,
            "Kendall tau-b": coef(r.tau_b, r.tau_p), "Spearman": coef(r.spearman, r.spearman_p),
            "Pearson": coef(r.pearson, r.pearson_p) + (
                " ⚠ outlier-driven" if (not missing(r.pearson_flag) and bool(r.pearson_flag))
                else ""),
            "agree / disagree / inert / one-sided":
                f"{r.agree} / {r.disagree} / {r.inert} / {r.one_sided}",
            f"winner on {r.corpus_a}": "–" if missing(r.winner_a) else
                f"{r.winner_a} ({fmt_signed(r.winner_a_delta)})",
            f"winner on {r.corpus_b}": "–" if missing(r.winner_b) else
                f"{r.winner_b} ({fmt_signed(r.winner_b_delta)})",
            "Δ-range ratio (b / a)": "undefined" if missing(r.range_ratio) else
                f"{float(r.range_ratio):.1f}x",
        })
    return pd.DataFrame(out)


def summary_row(summary: dict, family: str, corpus_a: str, corpus_b: str) -> dict:
    """A :func:`live_summary` result in the columns of ``warehouse.queries.agreement_results``."""
    winners = summary.get("winners") or {}
    ranges = summary.get("delta_range") or {}
    signs = summary["signs"]
    return {
        "family": family, "pooled": False, "tier": None, "n": summary["n"],
        "tau_b": summary["kendall_tau_b"]["value"], "tau_p": summary["kendall_tau_b"]["p"],
        "spearman": summary["spearman"]["value"], "spearman_p": summary["spearman"]["p"],
        "pearson": summary["pearson"]["value"], "pearson_p": summary["pearson"]["p"],
        "pearson_flag": summary["pearson"].get("outlier_driven"),
        "agree": signs["agree"], "disagree": signs["disagree"], "inert": signs["inert"],
        "one_sided": signs["one_sided"], "corpus_a": corpus_a, "corpus_b": corpus_b,
        "winner_a": (winners.get(corpus_a) or {}).get("arm"),
        "winner_a_delta": (winners.get(corpus_a) or {}).get("delta"),
        "winner_b": (winners.get(corpus_b) or {}).get("arm"),
        "winner_b_delta": (winners.get(corpus_b) or {}).get("delta"),
        "range_ratio": ranges.get("ratio"),
    }


# --------------------------------------------------------------------------- latency


PERCENTILES = ("p50", "p95", "p99")


def latency_long(latency: pd.DataFrame, labels: dict) -> pd.DataFrame:
    """One line per run x percentile: arm (control name), run label, created_at, ms."""
    frame = latency.assign(run=latency["run_id"].map(labels), arm=latency["control_name"])
    return frame.melt(id_vars=["run_id", "run", "arm", "samples", "concurrency"],
                      value_vars=list(PERCENTILES), var_name="percentile", value_name="ms")


def latency_bands(latency: pd.DataFrame) -> pd.DataFrame:
    """Per arm (control name) and percentile, over that arm's repeated runs: how many runs,
    the lowest, median and highest value.  A new run inside its arm's band is noise; one
    above it is a regression candidate."""
    long = latency.melt(id_vars=["control_name"], value_vars=list(PERCENTILES),
                        var_name="percentile", value_name="ms")
    bands = long.groupby(["control_name", "percentile"], sort=True)["ms"].agg(
        runs="count", low="min", median="median", high="max").reset_index()
    return bands.rename(columns={"control_name": "arm"})


# --------------------------------------------------------------------------- certificates


#: Material icons (rendered by Streamlit in labels and markdown) and cell colours per state
STATE_ICONS = {"valid": ":material/check_circle:", "degenerate": ":material/block:",
               "expired": ":material/schedule:", "alarm": ":material/notifications_active:"}
STATE_COLOURS = {"valid": "#d8f0dd", "degenerate": "#e9ebee", "expired": "#fbe6c8",
                 "alarm": "#f8d0cc"}


#: how deep the Compare page looks for documents that moved between two runs
MOVED_DEPTH = 10
#: how many moved documents a cell names before it counts the rest
MOVED_SHOWN = 3


def _listed(docs: list[str]) -> str:
    more = len(docs) - MOVED_SHOWN
    return ", ".join(docs[:MOVED_SHOWN]) + (f" (+{more} more)" if more > 0 else "")


def query_changes(pair: pd.DataFrame, rankings_a: pd.DataFrame,
                  rankings_b: pd.DataFrame, depth: int = MOVED_DEPTH,
                  texts: pd.DataFrame | None = None) -> pd.DataFrame:
    """The per-query values of two runs, the queries B made worse first (most negative Δ
    first; queries one run lacks last), with each query's ``text`` (from ``texts``: corpus,
    query_id, text, the first row of a (corpus, query) kept; empty where neither run stored
    it) and the documents that moved: those in B's top ``depth`` but not A's (``entered``)
    and in A's but not B's (``left``), in rank order."""
    def tops(rankings: pd.DataFrame) -> dict:
        top = rankings[rankings["rank"] <= depth].sort_values(["corpus", "query_id", "rank"])
        return {key: list(part["doc_id"]) for key, part in top.groupby(["corpus", "query_id"])}

    a, b = tops(rankings_a), tops(rankings_b)
    out = pair.assign(_missing=pair["delta"].isna()).sort_values(
        ["_missing", "delta", "corpus", "query_id"], kind="stable").drop(columns="_missing")
    entered, left = [], []
    for corpus, query in zip(out["corpus"], out["query_id"]):
        in_a, in_b = a.get((corpus, query), []), b.get((corpus, query), [])
        entered.append(_listed([d for d in in_b if d not in set(in_a)]))
        left.append(_listed([d for d in in_a if d not in set(in_b)]))
    known: dict = {}
    if texts is not None:
        for corpus, query, text in zip(texts["corpus"], texts["query_id"], texts["text"]):
            known.setdefault((corpus, query), text)
    at = out.columns.get_loc("query_id") + 1
    out = out.copy()
    out.insert(at, "text", [known.get(k, "") for k in zip(out["corpus"], out["query_id"])])
    return out.assign(**{f"entered B's top {depth}": entered,
                         f"left A's top {depth}": left}).reset_index(drop=True)
