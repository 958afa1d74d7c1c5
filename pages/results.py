"""Results: per corpus metric tables in the methodology's format (4 decimals, the stored
interval beside each value at one precision per table, deltas against a chosen control with
their Holm marks; the ``all`` class first, measures as columns or class x measure columns),
the count of what the publishable view withholds, and the exports (CSV, Markdown, LaTeX,
Parquet and the provenance) of exactly what is shown."""

from __future__ import annotations

import streamlit as st

import pandas as pd

from dashboard import common, downloads, hints, tables
from warehouse.arms import ARM_COLUMNS, arm_parameters, groups_of


def _downloads(view: str, tiers, runs, corpora, classes, measures, control, labels) -> None:
    st.subheader("Export")
    common.tier_badge(view, tiers)
    ok, payload = common.export_files(view, tuple(runs), tuple(corpora), tuple(classes),
                                      tuple(measures), control)
    if not ok:
        st.warning(payload, icon=":material/block:")
        return
    shown = labels.get(control, control) if control else None
    selection = {"runs": list(runs), "corpora": list(corpora), "classes": list(classes),
                 "measures": list(measures), "control": control}

    def audited(fmt: str) -> dict:
        # an internal download is recorded (team mode's audit log) when it is taken
        if view != "internal":
            return {"on_click": "ignore"}
        return {"on_click": common.audit_export, "args": (fmt, selection)}

    cols = st.columns(len(downloads.FORMATS) + 1)
    for col, (fmt, label, mime, ext) in zip(cols, downloads.FORMATS):
        col.download_button(f"Download {label}", payload[fmt],
                            file_name=downloads.file_name(view, corpora, measures, shown, ext),
                            mime=mime, key=f"download_{fmt}", icon=":material/download:",
                            **audited(fmt))
    cols[-1].download_button("Download provenance", payload["provenance"],
                             file_name=downloads.file_name(view, corpora, measures, shown,
                                                           "provenance.json"),
                             mime="application/json", key="download_provenance",
                             icon=":material/download:", **audited("provenance"))
    st.caption("The exports hold what the tables above show, as numbers: each value with "
               "its interval bounds and method and, with a control, the delta, its interval, "
               "the Holm-adjusted p and the mark. CSV holds the data rows only (its provenance "
               "is the JSON beside it: runs, metric engine, embedding model, corpus licences "
               "and checksums); LaTeX is paste-ready (booktabs and siunitx, one table per "
               "corpus fitting an article's text width, the best mean in bold) and is the "
               f"same table `{hints.inline(hints.EXPORT_LATEX)}` writes for the same "
               "runs, corpora and measures (`--run`, `--corpus`, `--measures`). A "
               "publishable export refuses rather than include a row whose corpora are not "
               "all tier A; an internal one is stamped as not for publication.")


def _arms(runs_table, chosen_runs, labels) -> None:
    """Each chosen run's parameters as columns: sortable (click a heading) and filterable."""
    with st.expander("Arms as data: each run's parameters"):
        chosen = runs_table[runs_table["run_id"].isin(set(chosen_runs))]
        frame = pd.DataFrame([{"run": labels.get(r["run_id"], r["run_id"]),
                               **arm_parameters(r), "run_id": r["run_id"]}
                              for r in chosen.to_dict("records")],
                             columns=["run", *ARM_COLUMNS, "run_id"])
        needle = st.text_input("Filter (any parameter contains)", key="results_arm_filter")
        if needle:
            text = frame.astype(str).apply(lambda row: " ".join(row).lower(), axis=1)
            frame = frame[text.str.contains(needle.lower(), regex=False)]
        st.dataframe(frame, hide_index=True, width="stretch")
        st.caption("The same columns are in the CSV and Parquet exports. Empty: the run does "
                   "not have that parameter.")


def render() -> None:
    st.title("Results")
    st.caption("Each run's measures with their intervals and, against a control, the deltas "
               "with Holm marks; the tables to publish from.")
    common.require_runs()
    view = common.view()
    common.withheld_note(view)
    options = common.load("choices", view)
    if not options["run_id"]:
        st.info(f"No metric row is visible in the {view} view. Switch the tier view in the "
                "sidebar to see internal rows.")
        return
    run_ids, labels = common.visible_runs(view)

    # each view keeps its own selections: switching the view shows what that view holds
    left, right = st.columns([3, 2])
    chosen_runs = left.multiselect("Runs", run_ids, default=run_ids,
                                   format_func=lambda r: labels.get(r, r),
                                   key=f"results_runs_{view}")
    measures = right.multiselect("Measures", options["measure"],
                                 default=common.measure_defaults(options["measure"]),
                                 key=f"results_measures_{view}")
    left, right, third, fourth = st.columns([2, 2, 2, 2])
    corpora = left.multiselect("Corpora", options["corpus"], default=options["corpus"],
                               key=f"results_corpora_{view}")
    classes = right.multiselect("Query classes", options["query_class"],
                                default=options["query_class"], key=f"results_classes_{view}")
    control = third.selectbox("Control run (deltas)", [None, *chosen_runs],
                              format_func=lambda r: "none" if r is None else labels.get(r, r),
                              key=f"results_control_{view}")
    pivot = fourth.selectbox("Layout", tables.PIVOTS, key=f"results_pivot_{view}",
                             help="Measures as columns with one line per run and class (fits "
                                  "a narrow screen), or one column per class and measure.")
    if not (chosen_runs and measures and corpora and classes):
        st.info("Choose at least one run, measure, corpus and class.")
        return

    rows = common.load("metric_intervals", view, runs=chosen_runs, corpora=corpora,
                       classes=classes, measures=measures)
    deltas = None
    if control is not None:
        deltas = common.load("deltas_tested", control, chosen_runs, view, corpora=corpora,
                             classes=classes, measures=measures)
    if rows.empty:
        st.info("No metric row matches these filters in this view.")
        return

    runs_table = common.load("runs")
    groups = groups_of(runs_table.to_dict("records"))
    per_query = (common.load("per_query_runs", view, tuple(chosen_runs), corpora=corpora,
                             measures=measures) if len(chosen_runs) > 1 else None)
    rows = tables.tie_marks(rows, per_query, groups)
    has_intervals = rows["lower"].notna().any()
    st.caption("Values to 4 decimals"
               + (" with their stored interval (intervals.json)" if has_intervals else
                  "; no interval is stored for these runs yet "
                  f"(`{hints.inline(hints.INTERVALS)}`)")
               + f". {tables.BEST_MARK.strip()} the best mean per measure and class; "
               f"{tables.TIED_MARK.strip()} not significantly different from the best "
               "(paired randomization test against the best run, Holm-corrected, α = 0.05)"
               + "".join(f"; {tables.TIE_LEGEND[k]}" for k in (tables.BORDERLINE,
                                                              tables.NOT_TESTED)
                         if k in set(rows["tie"]))
               + ". "
               + (tables.dropped_note(rows) + " " if tables.dropped_note(rows) else "")
               + "Runs judged at another granularity or under another relevance policy are in "
               "tables of their own: their numbers are not comparable."
               + (f" Δ against the control: paired delta [interval] and mark: "
                  f"{common.MARK_LEGEND}. A run that measured differently from the control "
                  "(relevance policy, corpus version, granularity, scope, stage, index) shows "
                  "`not comparable` and why, never a marked delta."
                  if control is not None else ""))
    for corpus in sorted(rows["corpus"].unique(), key=lambda c: ("+" in c, c)):
        in_corpus = rows[rows["corpus"] == corpus]
        kinds = list(dict.fromkeys(in_corpus["group"]))
        for kind in kinds:
            part = in_corpus[in_corpus["group"] == kind]
            heading = corpus if len(kinds) == 1 else f"{corpus} · {kind}"
            st.subheader(common.md_text(heading))
            common.tier_badge(view, part["tier"])
            part_deltas = None if deltas is None else deltas[
                (deltas["corpus"] == corpus) & deltas["run_id"].isin(set(part["run_id"]))]
            if control is not None and control not in set(part["run_id"]):
                st.caption(f"The control {common.md_text(labels.get(control, control))} has "
                           f"no row on {common.md_text(heading)}: no deltas here.")
            st.dataframe(tables.methodology_table(part, measures, labels, part_deltas,
                                                  control, pivot),
                         hide_index=True, width="stretch",
                         column_config={"run": st.column_config.TextColumn("run", pinned=True)})

    _arms(runs_table, chosen_runs, labels)

    with st.expander("Every value, sortable"):
        common.tier_badge(view, rows["tier"])
        long = rows.assign(run=rows["run_id"].map(labels))
        st.dataframe(long[["run", "corpus", "tier", "query_class", "measure", "value", "lower",
                           "upper", "interval_method", "n", "queries_unanswered",
                           "queries_dropped_unjudgeable", "run_id"]],
                     hide_index=True, width="stretch",
                     column_config={c: st.column_config.NumberColumn(c, format="%.4f")
                                    for c in ("value", "lower", "upper")})
        if deltas is not None and not deltas.empty:
            st.markdown(f"Against **{common.md_text(labels.get(control, control))}**")
            common.tier_badge(view, deltas["tier"])
            # no mark beside a delta that is not comparable, even from an old stored test
            marked = deltas["comparable"].astype(bool)
            st.dataframe(deltas.assign(run=deltas["run_id"].map(labels),
                                       verdict=deltas["verdict"].where(marked))[
                ["run", "corpus", "tier", "query_class", "measure", "control_value", "value",
                 "delta", "delta_lower", "delta_upper", "p", "p_holm", "p_floor", "verdict",
                 "paired", "comparable", "not_comparable_because", "control_n", "n"]],
                hide_index=True, width="stretch",
                column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in
                               ("control_value", "value", "delta", "delta_lower", "delta_upper")})

    _downloads(view, rows["tier"], chosen_runs, corpora, classes, measures, control, labels)


common.run(render)
