"""Overview: the warehouse's health (schema version, runs, corpora by tier, stored
documents) and the latest runs."""

from __future__ import annotations

import streamlit as st

from dashboard import common


def render() -> None:
    st.title("Overview")
    health = common.require_runs()
    view = common.view()
    runs = common.load("runs")
    visible = runs if view == "internal" else runs[runs["tier"] == "A"]

    cols = st.columns(4)
    applied = ", ".join(f"{m['version']:03d} {m['name']}" for m in health["migrations"])
    cols[0].metric("Schema version", health["schema_version"],
                   help=f"Highest applied migration; applied: {applied}")
    cols[1].metric("Runs", len(visible), help=f"{health['runs']} runs in the warehouse; "
                                               f"{len(visible)} visible in the {view} view")
    cols[2].metric("Per-query values", f"{health['rows'].get('per_query', 0):,}",
                   help="In the whole warehouse, every tier")
    cols[3].metric("Documents", sum(health["documents_by_kind"].values()),
                   help="In the whole warehouse, every tier: " + (", ".join(
                       f"{k}: {v}" for k, v in health["documents_by_kind"].items()) or "none"))

    st.subheader("Corpora by licence tier")
    by_tier = health["corpora_by_tier"]
    tiers = ["A"] if view == "publishable" else sorted(by_tier)
    meaning = {"A": "publishable", "B": "internal only", "C": "unobtainable"}
    lines = [f"**Tier {t}** ({meaning.get(t, 'unknown')}): "
             + (", ".join(common.md_code(n) for n in by_tier.get(t, [])) or "none")
             for t in tiers]
    st.markdown("  \n".join(lines))

    st.subheader("Latest runs")
    common.tier_badge(view, visible["tier"])
    latest = visible.sort_values(["created_at", "run_id"], ascending=False).head(20)
    st.dataframe(
        latest[["control_name", "created_at", "corpus", "tier", "backend", "mode", "stage",
                "scope", "granularity", "configured_embedding_model", "metric_engine",
                "metric_engine_version", "code_revision", "run_id"]],
        hide_index=True, width="stretch",
        column_config={"control_name": st.column_config.TextColumn("run", width="medium"),
                       "corpus": st.column_config.TextColumn("corpus", width="medium"),
                       "created_at": st.column_config.DatetimeColumn(
            "created (UTC)", format="YYYY-MM-DD HH:mm:ss"),
            "configured_embedding_model": "embedding model", "run_id": "run id"})
    st.caption(f"Change stamp `{health['change_stamp']}`: pages re-read the warehouse when it "
               "changes (refresh the page after an ingest).")


common.run(render)
