"""Corpora: each corpus as the runs declared it (licence, tier, the evidence the licence was
traced to, version, checksum, files and chunks) and its composition (queries per class as
the runs scored them)."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboard import common

TIER_MEANING = {"A": "publishable", "B": "internal only", "C": "unobtainable"}
COLUMNS = ["name", "tier", "meaning", "licence", "evidence", "version", "sha256", "files",
           "chunks", "runs"]
#: what can tell two declarations of one corpus apart (``runs`` only counts them)
DECLARED = ["tier", "licence", "evidence", "version", "sha256", "files", "chunks"]


def with_differences(corpora):
    """The declarations table with a ``differs in`` column: for a corpus declared more than
    once, the fields in which its declarations differ; those columns move to the front, so
    two rows that look alike at a glance (a checksum differing past the cell's width) show
    where they differ first."""
    import pandas as pd

    differs = pd.Series("", index=corpora.index, dtype=object)
    changed: list[str] = []
    for _, group in corpora.groupby("name", sort=False):
        if len(group) < 2:
            continue
        fields = [c for c in DECLARED if group[c].astype(str).nunique(dropna=False) > 1]
        differs.loc[group.index] = ", ".join(fields)
        changed += [c for c in fields if c not in changed]
    out = corpora.assign(meaning=corpora["tier"].map(TIER_MEANING), **{"differs in": differs})
    if not changed:
        return out[COLUMNS]
    order = ["name", "differs in", *changed, *(c for c in COLUMNS[1:] if c not in changed)]
    return out[order]


def render() -> None:
    common.title("Corpora", "What each corpus is, where its licence comes from, and how many "
                            "queries of each class the runs scored.")
    common.require_runs()
    view = common.view()
    corpora = common.load("corpora")
    if view == "publishable":
        corpora = corpora[corpora["tier"] == "A"]
    if corpora.empty:
        st.info(f"No corpus is visible in the {view} view.")
        return

    st.subheader("Licences and provenance")
    common.tier_badge(view, corpora["tier"])
    st.dataframe(with_differences(corpora), hide_index=True, width="stretch",
        column_config={"evidence": st.column_config.TextColumn(width="large"),
                       "meaning": "use", "runs": "runs declaring it"})
    st.caption("One line per distinct declaration: a corpus whose version, checksum or licence "
               "changed between runs appears once per declaration. Tier A: publishable "
               "licence traced to the corpus's own terms; B: internal only (non-commercial, "
               "research-only, or unknown: doubt fails closed).")

    st.subheader("Composition")
    composition = common.load("corpus_composition", view)
    common.tier_badge(view, composition["tier"])
    st.dataframe(composition, hide_index=True, width="stretch",
                 column_config={"n": "queries scored", "runs": "runs"})
    classes = (composition[composition["query_class"] != "all"]
               .groupby(["corpus", "query_class"], as_index=False)
               .agg(n=("n", "max"), tier=("tier", "max"), runs=("runs", "sum")))
    if not classes.empty:
        chart = alt.Chart(classes).mark_bar().encode(
            x=alt.X("n:Q", title="queries scored (largest set)", stack="zero",
                  axis=alt.Axis(format="d", tickMinStep=1)),
            y=alt.Y("corpus:N", title="corpus"),
            color=alt.Color("query_class:N", title="query class",
                            scale=alt.Scale(scheme=common.CATEGORY_SCHEME)),
            tooltip=[alt.Tooltip("corpus:N"), alt.Tooltip("query_class:N", title="class"),
                     alt.Tooltip("n:Q", title="queries"), alt.Tooltip("tier:N"),
                     alt.Tooltip("runs:Q", title="runs")])
        st.altair_chart(chart, width="stretch")
        st.caption("Where runs scored different query sets of one corpus (another version or "
                   "budget), each set is a separate line in the table above.")


common.run(render)
