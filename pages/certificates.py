"""Certificates: every stored certificate with its live status (valid / degenerate /
expired / alarm) and why.  The status is computed by the warehouse
(``dashboard.certificate_status``), not stored: against the fingerprint of the
newest run of the same arm visible in the chosen view (so a changed corpus, model, arm or
reranker shows as expired), with the anytime-valid monitor replayed on that run's stored
calibration data.  This page only renders it."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from dashboard import common, hints, tables
from dashboard.certificate_status import certificate_names, why_text


def _promise(r) -> str:
    if r.type == "coverage":
        return f"P(relevant passage in the set) ≥ {1 - r.alpha:.2f}"
    return f"P(answer without evidence) ≤ {r.target:.2f} w.p. ≥ {1 - r.delta:.2f}"


def _held_out(r) -> str:
    if common.missing(r.heldout_rate):
        return "–"
    name = "coverage" if r.type == "coverage" else "risk"
    return f"{name} {common.fmt_interval(r.heldout_rate, r.heldout_lower, r.heldout_upper)}"


def _size(r) -> str:
    if r.type != "coverage" or common.missing(r.mean_set_size):
        return "–" if r.type == "coverage" else (
            "–" if common.missing(r.answer_rate) else f"answers {r.answer_rate:.1%}")
    fixed = "–" if common.missing(r.fixed_k) else str(int(r.fixed_k))
    return f"{r.mean_set_size:.2f} vs fixed K {fixed}"


def render() -> None:
    common.title("Certificates", "Is each stored certificate still in force for the arm it was "
                                 "calibrated on, and if not, why?")
    common.require_runs()
    view = common.view()
    certs = common.certificate_statuses(view)
    if certs.empty:
        st.info(f"No certificate is visible in the {view} view. Calibrate one from a bench run "
                "and ingest it:")
        st.code(hints.block(hints.CALIBRATE), language="bash")
        return
    runs = common.load("runs")
    names = certificate_names(certs, dict(zip(runs["run_id"], runs["control_name"])))
    whys = [why_text(r.state, r.why) for r in certs.itertuples(index=False)]
    table = pd.DataFrame([{
        "certificate": name, "status": r.state, "why": why, "promise": _promise(r),
        "threshold": common.fmt(r.threshold, 6) if not common.missing(r.threshold) else "none",
        "held out": _held_out(r), "set size / answered": _size(r), "tier": r.tier,
    } for name, why, r in zip(names, whys, certs.itertuples(index=False))])
    common.tier_badge(view, certs["tier"])
    # a static table: every "why" is shown in full, wrapped, never cut at a column's width
    common.static_table(table, wrap=["why"], style=lambda styler: styler.map(
        lambda state: f"background-color: {tables.STATE_COLOURS.get(state, '')}",
        subset=["status"]))
    counts = certs["state"].value_counts()
    st.caption(" · ".join(f"{tables.STATE_ICONS.get(k, '')} {common.md_text(k)}: {v}"
                          for k, v in counts.items())
               + ". Expired: the newest run of the arm differs in corpus, embedding model, arm, "
                 "reranker or stage. Degenerate: nothing usable could be certified. Alarm: the "
                 "monitor has ruled out the promised rate on the observed queries.")
    common.terms("conformal set", "fixed K", "e-value", "tier A / B / C")

    for name, why, r in zip(names, whys, certs.itertuples(index=False)):
        title = (f"{tables.STATE_ICONS.get(r.state, '')} {common.md_text(r.state)}: "
                 f"{common.md_text(name)}")
        with st.expander(title):
            st.markdown(f"**{common.md_text(r.state)}**: {common.md_text(why)}")
            st.caption(common.md_text(r.monitor))
            current = "none stored" if common.missing(r.current_run_id) else (
                f"{common.md_text(r.current_control_name)} · {common.md_text(r.current_run_id[:12])}")
            st.markdown(f"Issued as **{common.md_text(r.status)}** · seed {r.seed} · splits "
                        f"{r.split_tune} / {r.split_calibrate} / {r.split_heldout} (tune / "
                        f"calibrate / held out) · checked against run {current} · "
                        f"certificate id {common.md_code(r.certificate_id)}")
            if r.changes:
                st.dataframe(pd.DataFrame([{
                    "change": c["kind"], "field": c["field"],
                    "certified": json.dumps(c["was"], sort_keys=True),
                    "now": json.dumps(c["now"], sort_keys=True)} for c in r.changes]),
                    hide_index=True, width="stretch")
            st.caption(f"Issued reason: {common.md_text(why_text(r.status, r.reason))}")

    ppi = common.load("ppi_results", view)
    if not ppi.empty:
        st.subheader("Judge calibration (PPI)")
        common.tier_badge(view, ppi["tier"])
        st.dataframe(ppi[["estimate", "lower", "upper", "lambda", "judge_bias",
                          "effective_labels", "labelled", "unlabelled", "labels_only_estimate",
                          "judge_only_estimate", "corpus", "tier", "alpha", "method"]],
                     hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(format="%.4f") for c in
                                    ("estimate", "lower", "upper", "lambda", "judge_bias",
                                     "labels_only_estimate", "judge_only_estimate")})
        st.caption("The judge alone has no validity; the PPI estimate corrects it with the hand "
                   "labels (effective labels: how many hand labels the estimate is worth).")


common.run(render)
