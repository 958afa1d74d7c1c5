"""Migration: every stored embedding-model migration decision (``python -m harness
migrate``) with adapted recall retention, OLD's own retention, the unadapted baseline and
the upgrade gain, each with its paired bootstrap interval, the decision per evaluation tier
(T0 held-out documents, T1 real queries) and its flags.  Below, the product's current
decision thresholds (each report's migration.json records the ones it used;
docs/migration.md)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import common, hints

#: what each evaluation tier measures
TIER_MEANING = {"T0": "held-out documents as queries (cannot see query prefixes)",
                "T1": "real queries and judgements"}


def _interval(value, lower, upper) -> str:
    return "n/a" if common.missing(value) else common.fmt_interval(value, lower, upper)


def _signed(value, lower, upper) -> str:
    return common.fmt_delta(value, lower, upper)


def render() -> None:
    from harness.studies.embedding_migration.decision import THRESHOLDS

    common.title("Migration", "Keep the old embedding model, bridge it with an adapter, or "
                              "re-index: the measured decision.")
    view = common.view()
    frame = common.load("migration_decisions", view)
    health = common.load("health")
    if frame.empty and not health["runs"] and not health["rows"]["documents"]:
        common.guidance(f"The warehouse at {common.md_code(common.db_path())} holds no runs yet.")
    elif frame.empty:
        st.info(f"No migration decision is visible in the {view} view. Measure one and it is "
                "ingested:")
        st.code(hints.block(hints.MIGRATION), language="bash")
    else:
        common.tier_badge(view, frame["tier"])
        table = pd.DataFrame([{
            "decision": r.decision, "eval tier": r.eval_tier,
            "headline": "yes" if r.headline else "",
            "pair": f"{r.old_model} -> {r.new_model}",
            "ARR": _interval(r.arr, r.arr_lower, r.arr_upper),
            "OLD alone": _interval(r.old_retention, r.old_retention_lower,
                                   r.old_retention_upper),
            "ARR - OLD": _signed(r.bridge_minus_old, r.bridge_minus_old_lower,
                                 r.bridge_minus_old_upper),
            "upgrade gain": _interval(r.gain, r.gain_lower, r.gain_upper),
            "unadapted": _interval(r.unadapted, r.unadapted_lower, r.unadapted_upper),
            "flags": ", ".join(r.flags),
            "corpus": r.corpus, "tier": r.tier, "queries": int(r.n_queries),
            "dims": f"{r.old_dimension} -> {r.new_dimension}",
            "adapter": r.adapter,
        } for r in frame.itertuples(index=False)])
        st.dataframe(table, hide_index=True, width="stretch",
                     column_config={"flags": st.column_config.TextColumn(width="medium")})
        st.caption("ARR: recall@k of NEW's queries mapped into OLD's index by the adapter, "
                   "over recall@k of NEW's own index (the oracle). OLD alone: OLD's recall over "
                   "the same oracle. Upgrade gain: oracle recall over OLD's (T1 only). "
                   "Intervals: paired ratio bootstrap over queries. ARR is not comparable "
                   "across model pairs; read it with the gain.")
        for r in frame.itertuples(index=False):
            text = common.md_text
            title = (f"{text(r.decision)} · {text(r.eval_tier)} · {text(r.old_model)} -> "
                     f"{text(r.new_model)} on {text(r.corpus)}")
            with st.expander(title):
                st.markdown(f"**{text(r.decision)}** (rule {common.md_code(r.rule)}): "
                            f"{text(r.reason)}.")
                st.caption(f"{text(r.eval_tier)}: {TIER_MEANING.get(r.eval_tier, '')}. "
                           f"{int(r.n_queries)} queries over {int(r.index_documents)} documents, "
                           f"recall@{int(r.k)}, oracle recall {common.fmt(r.oracle_recall)}; "
                           f"{r.confidence:.0%} intervals, {int(r.resamples)} resamples, seed "
                           f"{int(r.seed)}; adapter {text(r.adapter)} "
                           f"({int(r.adapter_parameters)} parameters).")
                if not common.missing(r.unadapted_reason):
                    st.caption(f"Unadapted baseline n/a: {text(r.unadapted_reason)}.")
                if r.straddles is not None and len(r.straddles):
                    st.warning("The interval straddles: " + ", ".join(map(text, r.straddles)))
                if not common.missing(r.situation):
                    st.caption(f"What the pair stands for: {text(r.situation)}.")
                st.caption(f"OLD {text(r.old_label)} · NEW {text(r.new_label)}")
    st.subheader("Decision thresholds")
    st.dataframe(pd.DataFrame([{"threshold": k, "value": v} for k, v in THRESHOLDS.items()]),
                 hide_index=True, width="stretch")
    st.caption("The product's current thresholds (each report records those it was decided "
               "with). In order: a gain below gain_floor means no upgrade is needed; bridging that "
               "trails OLD's own retention by more than borderline_band means a full re-index; "
               "otherwise ARR bands (bridge_sufficient, bridge_and_migrate, caution, below: "
               "full re-index).")


common.run(render)
