"""Latency: p50 / p95 / p99 per run (computed in SQL from the stored samples), the sample
distribution, and repeated runs of one arm drawn as a band, so a single noisy run is not
read as a regression.  Latency lives in runinfo.json, outside the claim: it is a timing
on one machine, never byte-identical."""

from __future__ import annotations

import altair as alt
import streamlit as st

from dashboard import common, tables

#: modes whose queries run a dense matmul (the step multi-threaded BLAS made bimodal)
DENSE_MODES = ("vector", "hybrid")
UNEXPLAINED = ("timed before the harness held BLAS to one thread per worker: its dense "
               "matmul waited for BLAS helper threads, so on busy cores one run of an arm "
               "measured p50 ≈ 0.5 ms and the next ≈ 8 ms with nothing else changed; rerun "
               "it with the current harness before comparing")


#: latencies on a log scale: one slow outlier (115 ms beside a few ms) would otherwise
#: flatten every other box and band against the axis
LOG = alt.Scale(type="log")

def notes(latency) -> list[str]:
    """Per run, what its numbers cannot be read as (empty when nothing)."""
    out = []
    for r in latency.itertuples(index=False):
        if r.mode in DENSE_MODES and common.missing(r.blas_threads):
            out.append(UNEXPLAINED)
        else:
            out.append("")
    return out


def time_axis(times) -> alt.Axis:
    """A time axis with one tick per run, labelled with its date and time (runs minutes or
    seconds apart otherwise get sub-second ticks such as ".020")."""
    # DateTime objects are read in the browser's zone, as the data's naive timestamps are
    stamps = [alt.DateTime(year=t.year, month=t.month, date=t.day, hours=t.hour,
                           minutes=t.minute, seconds=t.second)
              for t in sorted({t.replace(microsecond=0) for t in times})]
    return alt.Axis(values=stamps, format="%Y-%m-%d %H:%M:%S", labelAngle=-30,
                    labelOverlap="greedy", title="run created (UTC)")


def render() -> None:
    common.title("Latency", "How long each arm takes per query, how much that varies between "
                            "repeated runs, and whether a new run is a regression.")
    common.require_runs()
    view = common.view()
    latency = common.load("latency", view=view)
    if latency.empty:
        st.info(f"No run visible in the {view} view recorded latency samples "
                "(`harness bench` records them in runinfo.json).")
        return
    labels = common.run_labels(latency)

    st.subheader("Percentiles per run")
    common.tier_badge(view, latency["tier"])
    noted = notes(latency)
    st.dataframe(latency.assign(run=latency["run_id"].map(labels), note=noted)[
        ["run", "control_name", "corpus", "tier", "concurrency", "sample_unit", "samples",
         "p50", "p95", "p99", "max", "mean", "note", "run_id"]], hide_index=True,
        width="stretch",
        column_config={**{c: st.column_config.NumberColumn(f"{c} (ms)", format="%.3f")
                          for c in ("p50", "p95", "p99", "max", "mean")},
                       "note": st.column_config.TextColumn(width="medium")})
    unexplained = [labels.get(r, r) for r, n in zip(latency["run_id"], noted) if n]
    if unexplained:
        st.warning(f"{len(unexplained)} run(s) cannot be compared on these numbers "
                   f"({', '.join(map(common.md_text, unexplained))}): {UNEXPLAINED}.",
                   icon=":material/warning:")
    if (latency["sample_unit"] != "query").any():
        st.caption("A sample that is a batch mean is not one query's time: its p95/p99 "
                   "understate the per-query tail (`harness bench --query-batch 1`, the default, "
                   "times every query).")

    st.subheader("Each arm's runs as a band")
    bands = tables.latency_bands(latency)
    long = tables.latency_long(latency, labels)
    common.tier_badge(view, latency["tier"])
    band = alt.Chart(bands).mark_bar(opacity=0.25, size=18).encode(
        x=alt.X("arm:N", title="arm (control name)"),
        y=alt.Y("low:Q", title="latency (ms, log scale)", scale=LOG),
        y2="high:Q", color=common.percentile_colour(),
        xOffset="percentile:N",
        tooltip=[alt.Tooltip("arm:N"), alt.Tooltip("percentile:N"), alt.Tooltip("runs:Q"),
                 alt.Tooltip("low:Q", title="lowest (ms)", format=".3f"),
                 alt.Tooltip("median:Q", title="median (ms)", format=".3f"),
                 alt.Tooltip("high:Q", title="highest (ms)", format=".3f")])
    dots = alt.Chart(long).mark_circle(size=50).encode(
        x=alt.X("arm:N", title="arm (control name)"),
        y=alt.Y("ms:Q", title="latency (ms, log scale)", scale=LOG),
        color=common.percentile_colour(), xOffset="percentile:N",
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("percentile:N"),
                 alt.Tooltip("ms:Q", title="ms", format=".3f"), alt.Tooltip("samples:Q"),
                 alt.Tooltip("concurrency:Q")])
    st.altair_chart(band + dots, width="stretch")
    st.caption("Each dot is one run; the shaded bar spans the lowest to the highest value over "
               "the arm's repeated runs (same control name). A new run inside its arm's band "
               "is within run-to-run noise; only one clearly above it is a regression "
               "candidate, and one run alone has no band yet.")

    st.subheader("Sample distribution")
    ids = list(latency["run_id"])
    chosen = st.multiselect("Runs", ids, default=ids[-6:], format_func=lambda r: labels.get(r, r),
                            key=f"latency_runs_{view}")
    if chosen:
        samples = common.load("latency_distribution", chosen, view=view)
        samples = samples.assign(run=samples["run_id"].map(labels))
        common.tier_badge(view, latency.loc[latency["run_id"].isin(chosen), "tier"])
        box = alt.Chart(samples).mark_boxplot(extent="min-max", size=14).encode(
            x=alt.X("ms:Q", title="retrieval latency per query (ms, log scale)", scale=LOG),
            y=alt.Y("run:N", title="run"),
            color=alt.Color("run:N", legend=None, scale=alt.Scale(scheme=common.CATEGORY_SCHEME)),
            tooltip=[alt.Tooltip("run:N"), alt.Tooltip("ms:Q", format=".3f")])
        st.altair_chart(box, width="stretch")
        st.caption("Each box spans the middle half of a run's samples (25th to 75th "
                   "percentile) with a line at the median; the whiskers reach the fastest and "
                   "the slowest sample (min to max: no sample is dropped as an outlier). The axis is "
                   "logarithmic, so a slow outlier does not flatten the other runs.")

    st.subheader("One arm over time")
    # the arm with the most repeated runs first: that is where a band says something
    arms = list(latency["control_name"].value_counts().sort_index(kind="stable")
                .sort_values(ascending=False, kind="stable").index)
    arm = st.selectbox("Arm", arms, key=f"latency_arm_{view}")
    runs = common.load("runs")
    mine = long[long["arm"] == arm].merge(runs[["run_id", "created_at"]], on="run_id")
    common.tier_badge(view, latency.loc[latency["control_name"] == arm, "tier"])
    arm_band = bands[bands["arm"] == arm]
    area = alt.Chart(arm_band).mark_rect(opacity=0.15).encode(
        y=alt.Y("low:Q", title="latency (ms, log scale)", scale=LOG), y2="high:Q",
        color=common.percentile_colour(),
        tooltip=[alt.Tooltip("percentile:N"), alt.Tooltip("runs:Q"),
                 alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f")])
    line = alt.Chart(mine).mark_line(point=True).encode(
        x=alt.X("created_at:T", axis=time_axis(mine["created_at"]),
                scale=alt.Scale(padding=30)),
        y=alt.Y("ms:Q", title="latency (ms, log scale)", scale=LOG),
        color=common.percentile_colour(),
        tooltip=[alt.Tooltip("run:N"), alt.Tooltip("percentile:N"),
                 alt.Tooltip("ms:Q", format=".3f"), alt.Tooltip("created_at:T")])
    st.altair_chart(area + line, width="stretch")
    st.caption(f"{int(arm_band['runs'].max()) if len(arm_band) else 0} run(s) of "
               f"{common.md_text(arm)}; the "
               "band spans every run so far.")


common.run(render)
