"""Agreement: do two corpora rank the arms' changes alike?  Each arm's delta on corpus A
against its family's control is plotted against its delta on corpus B, coloured by family.

Families and controls come from stored agreement documents (``python -m harness agreement
--manifest M --out FILE``, then ``python -m warehouse ingest FILE``), with their stored
coefficients.  Without one, pick a control run: every other run that scored both corpora
with the control's query counts becomes an arm of one family, and the coefficients are
computed here by the harness's own code (and said to be)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import common, hints, tables
from harness.core.tiers import most_restrictive_tier

CLASSES = ("all", "lookup")
FROM_DOCUMENTS, FROM_CONTROL = "stored agreement documents", "a control run picked here"
#: below this many arms a rank coefficient is not evidence: with n = 4 even a perfect
#: ordering has an exact two-sided Kendall p of 2 / 4! = 0.083 (n = 2: tau is +1 or -1)
MIN_ARMS = 5


def _small_n_caveat(rows: pd.DataFrame) -> None:
    """A warning naming every coefficient row computed from fewer than :data:`MIN_ARMS` arms."""
    small = [(("pooled" if bool(r.pooled) else str(r.family)), int(r.n))
             for r in rows.itertuples(index=False)
             if not common.missing(r.n) and int(r.n) < MIN_ARMS]
    if small:
        which = ", ".join(f"{common.md_text(name)} (n = {n})" for name, n in small)
        st.warning(f"Too few arms to be evidence: {which}. With fewer than {MIN_ARMS} arms a "
                   "rank coefficient takes only a handful of values (two arms give tau-b "
                   "+1 or −1, whatever the corpora) and even a perfect ordering of four arms "
                   "has an exact two-sided p of 2 / 4! = 0.083. Add arms before reading the "
                   "sign of tau-b.", icon=":material/warning:")


def zero_ticks(values, count: int = 6) -> list[float]:
    """Axis ticks on a round step that always include 0 and cover ``values`` (a step of
    1, 2, 2.5 or 5 x 10^k giving about ``count`` ticks)."""
    import math

    lo = min(0.0, float(pd.Series(values).min()))
    hi = max(0.0, float(pd.Series(values).max()))
    span = (hi - lo) or 1e-3
    raw = span / max(1, count - 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [round(i * step, 12) + 0.0 for i in range(first, last + 1)]


#: tick labels with their sign, and 0 as "0"
SIGNED = "datum.value == 0 ? '0' : format(datum.value, '+.3~f')"


def padded(ticks: list[float]) -> list[float]:
    """The ticks' span widened by a quarter step each side, so a point on the outermost
    tick (or on 0 at the edge) is drawn whole."""
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1e-3
    return [ticks[0] - step / 4, ticks[-1] + step / 4]


def _scatter(arms: pd.DataFrame, corpus_a: str, corpus_b: str, measure: str) -> None:
    data = arms.assign(axis=arms.get("axis", pd.Series(index=arms.index, dtype=object)))
    data = data.assign(axis=data["axis"].fillna("–"),
                       included=data["included"].map({True: "included", False: "left out"}))
    x_ticks = zero_ticks(data["delta_a"])
    y_ticks = zero_ticks(data["delta_b"])
    family = alt.Color("family:N", title="family (colour)",
                       scale=alt.Scale(scheme=common.CATEGORY_SCHEME),
                       legend=alt.Legend(orient="right", labelLimit=0, titleLimit=0))
    points = alt.Chart(data).mark_point(size=90, filled=True).encode(
        x=alt.X("delta_a:Q", title=f"Δ {measure} on {corpus_a}",
                scale=alt.Scale(domain=padded(x_ticks), nice=False),
                axis=alt.Axis(values=x_ticks, titleLimit=0, labelExpr=SIGNED)),
        y=alt.Y("delta_b:Q", title=f"Δ {measure} on {corpus_b}",
                scale=alt.Scale(domain=padded(y_ticks), nice=False),
                axis=alt.Axis(values=y_ticks, titleLimit=0, labelExpr=SIGNED)),
        color=family,
        shape=alt.Shape("included:N", title="in the coefficients",
                        legend=alt.Legend(orient="right", titleLimit=0)),
        tooltip=[alt.Tooltip("arm:N"), alt.Tooltip("family:N"), alt.Tooltip("axis:N"),
                 alt.Tooltip("delta_a:Q", title=f"Δ {corpus_a}", format="+.4f"),
                 alt.Tooltip("delta_b:Q", title=f"Δ {corpus_b}", format="+.4f"),
                 alt.Tooltip("sign:N"), alt.Tooltip("tier:N")])
    labels = alt.Chart(data).mark_text(align="left", dx=8, dy=-8, fontSize=12).encode(
        x="delta_a:Q", y="delta_b:Q", text=alt.Text("arm:N"), color=family)
    zero = pd.DataFrame({"v": [0.0]})
    rules = (alt.Chart(zero).mark_rule(color="gray", strokeDash=[4, 4]).encode(x="v:Q")
             + alt.Chart(zero).mark_rule(color="gray", strokeDash=[4, 4]).encode(y="v:Q"))
    st.altair_chart(rules + points + labels, width="stretch")
    st.caption("Each Δ is the arm minus its family's control. Top-right and bottom-left "
               "quadrants: both corpora move the same way (agree); the other two: they "
               "disagree. Points on an axis moved on one corpus only.")


def _from_documents(view: str, cls: str, docs: pd.DataFrame) -> None:
    labels = {r.document_id: f"{r.measure} · {r.corpus_a} vs {r.corpus_b} · {r.families} "
                             f"famil{'y' if r.families == 1 else 'ies'}, {r.arms} arms · "
                             f"{r.ingested_at:%Y-%m-%d %H:%M} · {r.document_id[:8]}"
              for r in docs.itertuples(index=False)}
    doc = st.selectbox("Agreement document", list(labels), format_func=labels.get,
                       key=f"agreement_document_{view}_{cls}")
    meta = docs[docs["document_id"] == doc].iloc[0]
    arms = common.load("agreement_arms", view, document_id=doc)
    results = common.load("agreement_results", view, document_id=doc)
    st.subheader(f"Arms: Δ on {common.md_text(meta.corpus_a)} vs Δ on "
                 f"{common.md_text(meta.corpus_b)} ({cls})")
    common.tier_badge(view, arms["tier"])
    _scatter(arms, meta.corpus_a, meta.corpus_b, meta.measure)
    st.subheader("Stored coefficients")
    common.tier_badge(view, results["tier"])
    st.dataframe(tables.coefficient_rows(results), hide_index=True, width="stretch")
    _small_n_caveat(results)
    caveat = results.loc[results["pooled"], "caveat"].dropna()
    if len(caveat):
        st.caption(f"Pooled: {common.md_text(caveat.iloc[0])}. Pearson is shown to be distrusted: it is "
                   "flagged when it differs from Spearman by more than 0.2 or one arm moves it "
                   "that much.")
    with st.expander("The arms"):
        common.tier_badge(view, arms["tier"])
        st.dataframe(arms.drop(columns=["document_id"]), hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%+.4f")
                                    for c in ("delta_a", "delta_b")})


def _from_control(view: str, cls: str) -> None:
    options = common.load("choices", view)
    corpora = [c for c in options["corpus"] if "+" not in c]
    if len(corpora) < 2:
        st.info(f"Agreement needs runs measured on two corpora; the {view} view holds "
                f"{len(corpora)} ({', '.join(map(common.md_text, corpora)) or 'none'}).")
        return
    run_ids, labels = common.visible_runs(view)
    cols = st.columns(4)
    corpus_a = cols[0].selectbox("Corpus A", corpora, index=0, key=f"agreement_corpus_a_{view}")
    corpus_b = cols[1].selectbox("Corpus B", [c for c in corpora if c != corpus_a], index=0,
                                 key=f"agreement_corpus_b_{view}")
    measure = cols[2].selectbox("Measure", options["measure"], key=f"agreement_measure_{view}",
                                index=options["measure"].index(
                                    common.measure_defaults(options["measure"])[0]))
    control = cols[3].selectbox("Control run (the family's control)", run_ids,
                                format_func=lambda r: labels.get(r, r),
                                key=f"agreement_control_{view}")
    deltas = common.load("deltas", control, None, view, corpora=[corpus_a, corpus_b],
                         classes=[cls], measures=[measure])
    family = f"vs {labels.get(control, control)}"
    arms = tables.arms_from_deltas(deltas, corpus_a, corpus_b, labels, family)
    if arms.empty:
        st.info(f"No other run has paired {common.md_text(measure)} deltas on both "
                f"{common.md_text(corpus_a)} and {common.md_text(corpus_b)} (class {cls}) against "
                "this control.")
        return
    st.subheader(f"Arms: Δ on {common.md_text(corpus_a)} vs Δ on {common.md_text(corpus_b)} "
                 f"({cls})")
    common.tier_badge(view, arms["tier"])
    _scatter(arms, corpus_a, corpus_b, measure)
    summary = tables.live_summary(arms, corpus_a, corpus_b)
    st.subheader("Coefficients (computed here, not stored)")
    common.tier_badge(view, arms["tier"])
    row = {**tables.summary_row(summary, family, corpus_a, corpus_b),
           "tier": most_restrictive_tier(arms["tier"])}
    st.dataframe(tables.coefficient_rows(pd.DataFrame([row])), hide_index=True,
                 width="stretch")
    _small_n_caveat(pd.DataFrame([row]))
    st.caption("Computed by `harness.stats.agreement` from the stored metric rows. To keep "
               "them as a claim, write a manifest of the control and its arms (check the "
               "families it guessed), compute the document from it and store it:")
    st.code(hints.block(hints.AGREEMENT), language="bash")


def render() -> None:
    common.title("Do the corpora agree?", "Does an arm that helps on one corpus help on "
                 "another? Each arm's change on corpus A against its change on corpus B.")
    common.require_runs()
    view = common.view()
    cols = st.columns([1, 2])
    cls = cols[0].radio("Query class", CLASSES, horizontal=True, key="agreement_class")
    docs = common.load("agreement_documents", view, query_class=[cls])
    if len(docs):  # a choice only when a stored document exists
        mode = cols[1].radio("Families and controls from", [FROM_DOCUMENTS, FROM_CONTROL],
                             horizontal=True, key=f"agreement_mode_{view}")
    else:
        mode = FROM_CONTROL
        cols[1].caption(f"No agreement document for class {cls} is visible in the {view} "
                        "view: families and controls come from a control run picked below.")
    if mode == FROM_DOCUMENTS:
        _from_documents(view, cls, docs)
    else:
        _from_control(view, cls)


common.run(render)
