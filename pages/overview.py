"""Overview: what the team needs first: runs per corpus and tier, the latest comparisons
with their verdicts, certificates that need recalibrating, and the latest runs; the
warehouse's schema version and change stamp in an expander."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import common, hints

TIER_MEANING = {"A": "publishable", "B": "internal only", "C": "unobtainable"}
#: certificate states that mean "recalibrate": the arm changed, or the monitor alarmed
DUE = ("expired", "alarm")


def _comparisons(view: str) -> None:
    st.subheader("Latest comparisons")
    tests = common.load("latest_comparisons", view, 500)
    if tests.empty:
        st.caption(f"No paired test is visible in the {view} view. Test arms against a "
                   "control (one Holm family) and store the tests:")
        st.code(hints.block(hints.COMPARISONS), language="bash")
        return
    headline = common.measure_defaults(sorted(set(tests["measure"])))[0]
    shown = tests[tests["measure"] == headline].head(12)
    common.tier_badge(view, shown["tier"])
    st.dataframe(pd.DataFrame({
        "arm": shown["arm_name"], "against control": shown["control_name"],
        "corpus": shown["corpus"], "queries": shown["n"],
        f"Δ {headline} [interval]": [common.fmt_delta(d, lo, hi) for d, lo, hi in zip(
            shown["delta"], shown["delta_lower"], shown["delta_upper"])],
        "Holm p": [common.fmt_p(p) for p in shown["p_holm"]],
        "verdict": shown["verdict"], "ingested (UTC)": shown["ingested_at"]}),
        hide_index=True, width="stretch",
        column_config={"ingested (UTC)": st.column_config.DatetimeColumn(
            format="YYYY-MM-DD HH:mm")})
    st.caption(f"Class all, {common.md_text(headline)}, newest comparisons document first. "
               "Verdicts are Holm-adjusted over the arms tested against one control; "
               "'cannot be significant': too few queries differ (the p floor). Every class "
               "and measure: the Results page with a control chosen.")


def _certificates(view: str) -> None:
    st.subheader("Certificates due for recalibration")
    certs = common.certificate_statuses(view)
    if certs.empty:
        st.caption(f"No certificate is visible in the {view} view.")
        return
    from dashboard.certificate_status import certificate_names, why_text

    runs = common.load("runs")
    names = certificate_names(certs, dict(zip(runs["run_id"], runs["control_name"])))
    due = [(n, r) for n, r in zip(names, certs.itertuples(index=False)) if r.state in DUE]
    if not due:
        st.caption(f"All {len(certs)} certificate(s) visible in the {view} view are in force "
                   "(valid or degenerate as issued); none has expired or alarmed.")
        return
    common.tier_badge(view, [r.tier for _, r in due])
    common.static_table(pd.DataFrame([{"certificate": n, "status": r.state,
                                       "why": why_text(r.state, r.why)} for n, r in due]),
                        wrap=["why"])
    st.caption(f"{len(due)} of {len(certs)} certificate(s): expired (the arm's newest run "
               "changed) or alarm (the monitor ruled the promise out). The Certificates page "
               "has the details.")


def render() -> None:
    common.title("Overview", "What the warehouse holds: runs per corpus and tier, the "
                             "latest verdicts, and certificates that need attention.")
    health = common.require_runs()
    view = common.view()
    runs = common.load("runs", view=view)
    common.withheld_note(view)

    per_corpus = common.load("runs_by_corpus", view)
    cols = st.columns(4)
    cols[0].metric("Corpora", per_corpus["corpus"].nunique(),
                   help=f"Corpora some run visible in the {view} view was measured on")
    cols[1].metric("Runs", len(runs), help=f"{health['runs']} runs in the warehouse; "
                                           f"{len(runs)} visible in the {view} view")
    cols[2].metric("Per-query values", f"{common.load('per_query_count', view):,}",
                   help=f"One measure of one query of one run, in the {view} view")
    documents = sum(health["documents_by_kind"].values())
    cols[3].metric("Claim documents ingested", documents,
                   help="Statistics, agreement, certificate and answer documents stored "
                        "beside the runs, in the whole warehouse, every tier: " + (", ".join(
                            f"{k}: {v}" for k, v in health["documents_by_kind"].items())
                            or "none"))

    st.subheader("Runs per corpus and tier")
    common.tier_badge(view, per_corpus["tier"])
    st.dataframe(per_corpus.assign(use=per_corpus["tier"].map(TIER_MEANING))[
        ["corpus", "tier", "use", "runs", "arms", "newest"]], hide_index=True, width="stretch",
        column_config={"arms": "arms (control names)",
                       "newest": st.column_config.DatetimeColumn(
                           "newest run (UTC)", format="YYYY-MM-DD HH:mm")})
    st.caption("A run over several corpora (one index) counts once for each of them.")

    _comparisons(view)
    _certificates(view)

    st.subheader("Latest runs")
    common.tier_badge(view, runs["tier"])
    latest = runs.sort_values(["created_at", "run_id"], ascending=False).head(20)
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

    with st.expander("Warehouse schema and change stamp"):
        applied = ", ".join(f"{m['version']:03d} {m['name']}" for m in health["migrations"])
        st.markdown(f"Schema version **{health['schema_version']}** (applied migrations: "
                    f"{common.md_text(applied)})  \nChange stamp {common.md_code(health['change_stamp'])}: "
                    "pages re-read the warehouse when it changes (refresh the page after an "
                    "ingest).")
        by_tier = health["corpora_by_tier"]
        tiers = ["A"] if view == "publishable" else sorted(by_tier)
        st.markdown("  \n".join(
            f"**Tier {t}** ({TIER_MEANING.get(t, 'unknown')}): "
            + (", ".join(common.md_code(n) for n in by_tier.get(t, [])) or "none")
            for t in tiers))
    common.terms("Holm", "p floor", "tier A / B / C")


common.run(render)
