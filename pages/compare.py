"""Compare: two runs query by query on one measure: win / tie / loss counts (B against A),
overall and per query class, and a square scatter of A against B with a 45° no-change line
where coinciding queries are one circle sized by their count."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import common, paired, tables


def render() -> None:
    st.title("Compare two runs")
    st.caption("Where does one run beat another? Query by query on one measure, with win / tie / "
               "loss counts per class.")
    common.require_runs()
    view = common.view()
    options = common.load("choices", view)
    if len(options["run_id"]) < 1:
        st.info(f"No run has rows visible in the {view} view.")
        return
    ids, labels = common.visible_runs(view)
    runs = common.load("runs").set_index("run_id")

    def full(rid: str) -> str:
        return f"{runs.loc[rid, 'control_name']} (run {rid})" if rid in runs.index else rid

    cols = st.columns(2)
    run_a = cols[0].selectbox("Run A (baseline)", ids, index=0,
                              format_func=lambda r: labels.get(r, r), key=f"compare_a_{view}",
                              help="Each run is named by its control name, with a short id "
                                   "where names repeat; the full name and id are shown below.")
    run_b = cols[1].selectbox("Run B", ids, index=min(1, len(ids) - 1),
                              format_func=lambda r: labels.get(r, r), key=f"compare_b_{view}",
                              help="Each run is named by its control name, with a short id "
                                   "where names repeat; the full name and id are shown below.")
    st.caption(f"A: {common.md_text(full(run_a))}  \nB: {common.md_text(full(run_b))}")
    cols = st.columns(2)
    measures = options["measure"]
    default = common.measure_defaults(measures)[0]
    measure = cols[0].selectbox("Measure", measures, index=measures.index(default),
                                key=f"compare_measure_{view}")
    corpus = cols[1].selectbox("Corpus", [None, *[c for c in options["corpus"] if "+" not in c]],
                               format_func=lambda c: "every corpus" if c is None else c,
                               key=f"compare_corpus_{view}")
    pair = common.load("per_query_pair", run_a, run_b, measure, view,
                       corpora=None if corpus is None else [corpus])
    if pair.empty:
        st.info("These runs have no per-query values in common for this selection.")
        return

    counts = tables.outcome_counts(pair)
    total = counts[counts["class"] == "all"].iloc[0]
    st.subheader("Win / tie / loss per class (B against A)")
    common.tier_badge(view, pair["tier"])
    metrics = st.columns(4)
    metrics[0].metric("B better (win)", int(total["win"]))
    metrics[1].metric("tie", int(total["tie"]))
    metrics[2].metric("B worse (loss)", int(total["loss"]))
    metrics[3].metric("missing in one run", int(total["missing"]))
    st.dataframe(counts, hide_index=True, width="stretch",
                 column_config={"mean Δ": st.column_config.NumberColumn(format="%+.4f")})

    st.subheader("Paired test per class (B against A)")
    common.tier_badge(view, pair["tier"])
    st.dataframe(paired.paired_tests(pair, measure), hide_index=True, width="stretch",
                 column_config={"Δ": st.column_config.NumberColumn(format="%+.4f"),
                                "p": st.column_config.NumberColumn(format="%.4f")})
    st.caption(f"Paired randomization test (sign flips of the per-query differences; exact up "
               f"to 16 differing queries, else {paired.PERMUTATIONS:,} seeded draws) over the "
               "queries both runs answered, this pair alone (no multiplicity correction: the "
               "Holm-corrected verdicts of a stored family are on the Results page). The "
               f"interval is that test inverted at alpha {paired.ALPHA}: it excludes 0 exactly "
               "when the verdict is significant. The unadjusted bootstrap interval is shown "
               "for reference and is a different procedure.")

    st.subheader(f"Per query: {common.md_text(measure)}")
    common.tier_badge(view, pair["tier"])
    name_a, name_b = labels.get(run_a, run_a), labels.get(run_b, run_b)
    points = tables.scatter_points(pair)
    if points.empty:
        st.info("No query has a value in both runs.")
        return
    low, high = tables.square_domain(points)
    # a margin, so a large circle at a corner (QMSum's ties at (0, 0)) never covers the axes
    pad = 0.06 * (high - low or 1.0)
    low, high = low - pad, high + pad
    scale = alt.Scale(domain=[low, high], nice=False, zero=False)
    size = 420
    most = int(points["queries"].max())
    dots = alt.Chart(points).mark_circle(opacity=0.75, stroke="white", strokeWidth=0.5).encode(
        x=alt.X("value_a:Q", title=f"{measure}, A: {name_a}", scale=scale),
        y=alt.Y("value_b:Q", title=f"{measure}, B: {name_b}", scale=scale),
        size=alt.Size("queries:Q", title="queries at this point",
                      scale=alt.Scale(domain=[1, most], range=[40, 900 if most > 1 else 40]),
                      legend=alt.Legend(orient="right", format="d",
                                        values=tables.count_legend(most))),
        color=alt.Color("outcome:N", title="B against A",
                        scale=alt.Scale(domain=list(tables.OUTCOME_COLOURS),
                                        range=list(tables.OUTCOME_COLOURS.values()))),
        tooltip=[alt.Tooltip("queries:Q", title="queries"),
                 alt.Tooltip("outcome:N", title="B against A"),
                 alt.Tooltip("value_a:Q", title=f"A: {full(run_a)}", format=".4f"),
                 alt.Tooltip("value_b:Q", title=f"B: {full(run_b)}", format=".4f"),
                 alt.Tooltip("classes:N", title="classes"),
                 alt.Tooltip("examples:N", title="queries (first 5)")])
    diagonal = alt.Chart(pd.DataFrame({"x": [low, high], "y": [low, high]})).mark_line(
        strokeDash=[4, 4], color="gray").encode(x=alt.X("x:Q", scale=scale),
                                                y=alt.Y("y:Q", scale=scale))
    # the plot itself square: axes and legends are added around it (autosize "pad")
    chart = (diagonal + dots).properties(
        width=size, height=size, autosize=alt.AutoSizeParams(type="pad"))
    st.altair_chart(chart, width="content", theme=None)
    st.caption(f"Square axes on one scale; the dashed 45° line is no change. Each circle is "
               f"every query with that pair of values, sized by how many there are "
               f"({int(total['tie'])} ties, {int(total['win'])} wins, {int(total['loss'])} "
               "losses). Points above the line are queries B answers better than A. Queries "
               "one run lacks are counted as missing above and not drawn.")
    st.subheader("The queries that changed most (B against A)")
    common.tier_badge(view, pair["tier"])
    texts = pd.concat([common.load("query_texts", run_a, view),
                       common.load("query_texts", run_b, view)], ignore_index=True)
    changes = tables.query_changes(pair, common.load("rankings", run_a, view),
                                   common.load("rankings", run_b, view), texts=texts)
    # the tier is the badge's; the values named as the page names the runs
    shown = changes.drop(columns="tier").rename(
        columns={"query_class": "class", "query_id": "query", "text": "query text",
                 "value_a": "A", "value_b": "B", "delta": "Δ"})
    st.dataframe(shown, hide_index=True, width="stretch",
                 column_config={"A": st.column_config.NumberColumn(format="%.4f"),
                                "B": st.column_config.NumberColumn(format="%.4f"),
                                "Δ": st.column_config.NumberColumn(format="%+.4f")})
    st.caption(f"Sorted by Δ = B − A, the queries B made worse first; queries one run lacks "
               f"last. The documents that moved: in B's top {tables.MOVED_DEPTH} but not A's "
               f"(entered) and in A's but not B's (left), in rank order. The query text is the "
               "one its run stored (queries.jsonl); a run scored without it shows none (bench "
               "runs store it; `harness score` stores it given `--queries`).")


common.run(render)
