"""Compare: two runs query by query on one measure: a scatter of run A against run B, and
win / tie / loss counts per query class (B against A)."""

from __future__ import annotations

import altair as alt
import pandas as pd
import streamlit as st

from dashboard import common, tables


def render() -> None:
    st.title("Compare two runs")
    st.caption("Where does one run beat another? Query by query on one measure, with win / tie / loss counts per class.")
    common.require_runs()
    view = common.view()
    options = common.load("choices", view)
    if len(options["run_id"]) < 1:
        st.info(f"No run has rows visible in the {view} view.")
        return
    ids, labels = common.visible_runs(view)
    cols = st.columns(4)
    run_a = cols[0].selectbox("Run A (baseline)", ids, index=0,
                              format_func=lambda r: labels.get(r, r), key=f"compare_a_{view}")
    run_b = cols[1].selectbox("Run B", ids, index=min(1, len(ids) - 1),
                              format_func=lambda r: labels.get(r, r), key=f"compare_b_{view}")
    measures = options["measure"]
    default = common.measure_defaults(measures)[0]
    measure = cols[2].selectbox("Measure", measures, index=measures.index(default),
                                key=f"compare_measure_{view}")
    corpus = cols[3].selectbox("Corpus", [None, *[c for c in options["corpus"] if "+" not in c]],
                               format_func=lambda c: "every corpus" if c is None else c,
                               key=f"compare_corpus_{view}")
    pair = common.load("per_query_pair", run_a, run_b, measure, view,
                       corpora=None if corpus is None else [corpus])
    if pair.empty:
        st.info("These runs have no per-query values in common for this selection.")
        return

    st.subheader("Win / tie / loss per class (B against A)")
    common.tier_badge(view, pair["tier"])
    st.dataframe(tables.outcome_counts(pair), hide_index=True, width="stretch",
                 column_config={"mean Δ": st.column_config.NumberColumn(format="%+.4f")})

    st.subheader(f"Per query: {common.md_text(measure)}")
    common.tier_badge(view, pair["tier"])
    data = pair.dropna(subset=["value_a", "value_b"]).assign(
        query_class=lambda f: f["query_class"].fillna("(no class)"))
    name_a, name_b = labels.get(run_a, run_a), labels.get(run_b, run_b)
    points = alt.Chart(data).mark_circle(size=60, opacity=0.6).encode(
        x=alt.X("value_a:Q", title=f"{measure}, run A ({name_a})", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("value_b:Q", title=f"{measure}, run B ({name_b})", scale=alt.Scale(domain=[0, 1])),
        color=alt.Color("query_class:N", title="query class",
                        scale=alt.Scale(scheme=common.CATEGORY_SCHEME)),
        tooltip=[alt.Tooltip("corpus:N"), alt.Tooltip("query_id:N", title="query"),
                 alt.Tooltip("query_class:N", title="class"),
                 alt.Tooltip("value_a:Q", title="A", format=".4f"),
                 alt.Tooltip("value_b:Q", title="B", format=".4f"),
                 alt.Tooltip("delta:Q", title="B - A", format="+.4f")])
    diagonal = alt.Chart(pd.DataFrame({"x": [0, 1], "y": [0, 1]})).mark_line(
        strokeDash=[4, 4], color="gray").encode(x="x:Q", y="y:Q")
    st.altair_chart(diagonal + points, width="stretch")
    st.caption("Points above the dashed line are queries run B answers better than run A. "
               "Queries one run lacks are counted as missing above and not drawn.")
    with st.expander("The per-query values"):
        common.tier_badge(view, pair["tier"])
        st.dataframe(pair, hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f")
                                    for c in ("value_a", "value_b", "delta")})


common.run(render)
