"""Answers: aggregation queries scored on the answer (docs/answers.md).  Per corpus and
answerer, a table per rule with EM / partial / answered to 4 decimals and the ``none``
answerer's floor over the same gold queries beside it; the scoring policy; and, per query,
the question, the gold, the prediction and the mechanism that produced it.  These are not
retrieval measures and are never shown beside one."""

from __future__ import annotations

import json

import pandas as pd
import streamlit as st

from dashboard import common, hints

#: column of warehouse.queries.answer_table -> the measure's name on the page
MEASURES = {"em": "EM", "partial": "partial", "answered_share": "answered"}

NOTE = ("Scored on the answer, not on a ranking: **EM** is exact match under the policy (the "
        "gate), **partial** diagnostic partial credit (never a substitute for EM), "
        "**answered** the share of the gold queries attempted at all. Means iterate the gold "
        "query set: a declined query scores 0 and stays in the denominator. These are not "
        "retrieval measures: an answer score is not comparable with nDCG, recall or MRR on "
        "the other pages.")
FLOOR_NOTE = ("**floor**: the `none` answerer, which declines every query, scored by the same "
              "path over the same gold queries. The difference from the floor is due only to "
              "who answered. A reference answerer's 1.0000 characterises the corpus and the "
              "mechanism (the generator's own question frames), not a shipped system.")
COMMANDS = hints.block(hints.ANSWERS)


def value_text(raw) -> str:
    """A gold or predicted value (JSON text) as a reader reads it."""
    if common.missing(raw):
        return "(declined)"
    value = json.loads(raw) if isinstance(raw, str) else raw
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) if value else "(no file)"
    if isinstance(value, dict) and {"speaker", "count"} <= set(value):
        return f"{value['speaker']} ({value['count']} sessions)"
    return str(value)


def notes_text(raw) -> str:
    if common.missing(raw):
        return ""
    notes = json.loads(raw) if isinstance(raw, str) else raw
    return "; ".join(f"{k}: {json.dumps(v, sort_keys=True)}" for k, v in sorted(notes.items()))


def policy_text(count_tolerance, set_credit) -> str:
    tolerance = int(count_tolerance)
    count = ("counts exact" if tolerance == 0
             else f"a count within {tolerance} of the gold is exact")
    sets = ("file-set partial is F1" if set_credit == "f1"
            else f"file-set partial credit: {set_credit}")
    return f"count tolerance {tolerance} ({count}) · set credit `{set_credit}` ({sets})"


def rule_table(part: pd.DataFrame) -> pd.DataFrame:
    """One line per class x rule: n, unanswered, the three measures and the floor's."""
    lines = []
    for r in part.itertuples(index=False):
        line = {"class": r.query_class, "rule": r.rule, "n": int(r.n),
                "unanswered": int(r.unanswered)}
        line.update({label: common.fmt(getattr(r, column)) for column, label in MEASURES.items()})
        line.update({f"floor {label}": common.fmt(getattr(r, f"floor_{column}"))
                     for column, label in MEASURES.items()})
        lines.append(line)
    return pd.DataFrame(lines)


def _empty(view: str) -> None:
    if not common.load("answer_runs", "internal").empty:
        st.info(f"No answer row is visible in the {view} view. Switch the tier view in the "
                "sidebar to see internal rows.")
        return
    if not common.load("health")["runs"]:
        common.guidance(f"The warehouse at {common.md_code(common.db_path())} holds no runs yet.")
        return
    st.info("No answers run is stored yet. Answer the synthetic corpus's aggregation queries "
            "(each run is ingested as it is written):")
    st.code(COMMANDS, language="bash")


def _tables(view: str, rows: pd.DataFrame) -> None:
    for corpus in sorted(rows["corpus"].unique(), key=lambda c: ("+" in c, c)):
        st.subheader(common.md_text(corpus))
        part = rows[rows["corpus"] == corpus]
        for doc_id in part["document_id"].unique():
            mine = part[part["document_id"] == doc_id]
            first = mine.iloc[0]
            path = ("production path" if first["is_production_path"]
                    else "not the production path")
            st.markdown(f"**{common.md_text(first['answerer'])}** answerer · {path} · document "
                        f"{common.md_code(doc_id[:12])}  \n"
                        f"Policy: {policy_text(first['count_tolerance'], first['set_credit'])}")
            common.tier_badge(view, mine["tier"])
            st.dataframe(rule_table(mine), hide_index=True, width="stretch")


def _drill_down(view: str, runs: pd.DataFrame) -> None:
    st.subheader("Per query")
    # newest first, the none answerer's runs last (every one of its answers is declined)
    ordered = sorted(runs.itertuples(index=False), key=lambda r: r.answerer == "none")
    labels = {r.document_id: f"{r.answerer} · {r.corpora} · {r.document_id[:12]}"
              for r in ordered}
    left, right = st.columns([3, 1])
    chosen = left.selectbox("Answers run", list(labels), format_func=labels.get,
                            key=f"answers_document_{view}")
    misses_only = right.checkbox("Only answers not exactly right", value=False,
                                 key=f"answers_misses_{view}")
    run = runs[runs["document_id"] == chosen].iloc[0]
    with st.expander("The answerer and every scoring rule of this run"):
        info = json.loads(run["answerer_info"])
        st.markdown(f"**{common.md_text(run['answerer'])}**: "
                    f"{common.md_text(info.get('description', ''))}; production path: "
                    f"{'yes' if run['is_production_path'] else 'no'}; model: "
                    f"{common.md_text(info.get('model') or 'none')}; row limit "
                    f"{common.md_text(info.get('row_limit'))}.")
        st.markdown("\n".join(f"- {common.md_code(k)}: {common.md_text(v)}"
                              for k, v in sorted(json.loads(run["policy"]).items())))
    details = common.load("answer_details", chosen, view)
    if misses_only:
        details = details[details["em"] < 1.0]
    common.tier_badge(view, details["tier"])
    if details.empty:
        st.info("Every answer of this run is exactly right." if misses_only
                else f"No answer of this run is visible in the {view} view.")
        return
    table = pd.DataFrame([{
        "corpus": r.corpus, "tier": r.tier, "query": r.query_id, "rule": r.rule,
        "question": r.question, "gold": value_text(r.gold), "predicted": value_text(r.predicted),
        **{label: common.fmt(getattr(r, column)) for column, label in MEASURES.items()},
        "mechanism": r.mechanism, "notes": notes_text(r.notes),
    } for r in details.itertuples(index=False)])
    st.dataframe(table, hide_index=True, width="stretch",
                 column_config={"question": st.column_config.TextColumn(width="large"),
                                "mechanism": st.column_config.TextColumn(width="large")})
    st.caption("predicted `(declined)`: the answerer did not attempt the query (it scores 0 "
               "and counts). The mechanism is what produced the value: a SQL read of the "
               "transcript store, never a model.")


def render() -> None:
    common.title("Answers", "How often each answerer gets aggregation questions right, and where it fails.")
    view = common.view()
    runs = common.load("answer_runs", view)
    if runs.empty:
        _empty(view)
        return
    st.info(NOTE, icon=":material/rule:")
    everything = common.load("answer_table", view)
    left, right = st.columns([3, 2])
    corpora = left.multiselect("Corpora", sorted(everything["corpus"].unique()),
                               default=sorted(everything["corpus"].unique()),
                               key=f"answers_corpora_{view}")
    answerers = right.multiselect("Answerers", sorted(everything["answerer"].unique()),
                                  default=sorted(everything["answerer"].unique()),
                                  key=f"answers_answerers_{view}")
    if not (corpora and answerers):
        st.info("Choose at least one corpus and one answerer.")
        return
    rows = common.load("answer_table", view, corpora=corpora, answerers=answerers)
    if rows.empty:
        st.info("No answer row matches these filters in this view.")
        return
    st.caption("Values to 4 decimals; the newest run per corpus, answerer and policy. "
               + FLOOR_NOTE)
    _tables(view, rows)
    _drill_down(view, runs)


common.run(render)
