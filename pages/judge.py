"""Judge: label a judging task's (query, document) pairs in the browser (docs/judgments.md).

One person's queue (:func:`harness.judgments.queue.queue`: the pool's order, a stable share
of pairs shown to two people), the query, the document with the query's terms marked, the
four grades (keys 0-3), skip (S), undo (U), progress and what is left, and the agreement of
the labels so far.  Each label leaves as a labels batch (:mod:`dashboard.judging`), never by
writing the warehouse.  The tasks listed are those of the tier view: an outside audience
reads the publishable snapshot, which holds tier-A tasks only."""

from __future__ import annotations

import streamlit as st

from dashboard import common, hints, judging
from harness.claims.judging import TaskPair
from harness.claims.labels import GRADES, Label, check_rater, labels_text, latest, now
from harness.judgments.agreement import agreement
from harness.judgments.queue import queue

KEY = "judge"


def _state(task_id: str) -> dict:
    """This session's labelling state of one task: labels it sent that the warehouse may
    not hold yet, pairs skipped, the pair an undo brings back."""
    return st.session_state.setdefault(f"{KEY}_{task_id}", {"sent": [], "skipped": [],
                                                            "back": None})


def _rater(team) -> str | None:
    if team is not None:
        name = common.identity()
        if name is None:
            st.info("Log in to label: your labels are recorded under your login.")
            return None
    else:
        name = st.text_input("Your name (the labels record it)", key=f"{KEY}_rater").strip()
        if not name:
            st.info("Type your name to start labelling.")
            return None
    try:
        check_rater(name, "your name", None)
    except ValueError as exc:
        st.error(f"Not a usable name: {exc}")
        return None
    return name


def _send(team, task_id: str, label: Label) -> None:
    if team is not None:
        judging.submit_to_store(team.store, task_id, label)
    else:
        judging.write_to_inbox(judging.inbox(common.db_path()), task_id, label)


def _answer(team, task_id: str, pair: TaskPair, rater: str, grade: int) -> None:
    state = _state(task_id)
    label = Label(pair.query_id, pair.doc_id, rater, now(), grade)
    try:
        _send(team, task_id, label)
    except Exception as exc:  # the store or the disk: say so, keep the pair on screen
        st.session_state[f"{KEY}_error"] = f"Your label was not saved: {exc}"
        return
    state["sent"].append(label)
    state["back"] = None


def _skip(task_id: str, pair: TaskPair) -> None:
    state = _state(task_id)
    state["skipped"].append((pair.query_id, pair.doc_id))
    state["back"] = None


def _undo(task_id: str) -> None:
    """Back one more pair each time: the last label this session sent is shown again."""
    state = _state(task_id)
    if state["sent"]:
        last = state["sent"].pop()
        state["back"] = (last.query_id, last.doc_id)
        state["skipped"] = [p for p in state["skipped"] if p != state["back"]]


def _labels(team, task_id: str, view: str) -> list[Label]:
    made = common.load("task_judgments", task_id, view)
    labels = [Label(r.query_id, r.doc_id, r.rater, r.labelled_at, int(r.label))
              for r in made.itertuples(index=False)]
    if team is None:
        labels += judging.inbox_labels(judging.inbox(common.db_path()), task_id)
    return labels + _state(task_id)["sent"]


def _empty(view: str) -> None:
    if view == "publishable" and "internal" in common.views() \
            and not common.load("judging_tasks", "internal").empty:
        st.info("No judging task is visible in the publishable view (tier A only). Switch the "
                "tier view in the sidebar to label internal tasks.")
        return
    st.info("No judging task is stored yet. Pool a run's top 10 into a task and put it here:")
    st.code(hints.block(hints.JUDGE_TASK), language="bash")


def _tasks_table(tasks):
    """One line per task the view holds: what it is and how far its labelling is."""
    import pandas as pd

    return pd.DataFrame([{
        "task": r.name, "corpus": r.corpus, "tier": r.tier, "pairs": int(r.pairs),
        "depth": int(r.depth), "judged twice": f"{float(r.overlap):.0%}",
        "labels applied": int(r.labels), "raters": int(r.raters), "id": r.task_id[:12],
    } for r in tasks.itertuples(index=False)])


def render() -> None:
    common.title("Judge", "Label a judging task's (query, document) pairs: your queue, the "
                          "grades 0-3 by key, skip, undo, and the agreement so far.")
    view = common.view()
    tasks = common.load("judging_tasks", view)
    if tasks.empty:
        if not common.load("health")["runs"]:
            common.guidance(f"The warehouse at {common.md_code(common.db_path())} holds no runs "
                            "yet.")
        _empty(view)
        return
    common.tier_badge(view, tasks["tier"])
    st.dataframe(_tasks_table(tasks), hide_index=True, width="stretch")
    names = {r.task_id: f"{r.name} · {r.corpus} · tier {r.tier} · {r.task_id[:12]}"
             for r in tasks.itertuples(index=False)}
    task_id = st.selectbox("Task", list(names), format_func=names.get, key=f"{KEY}_task")
    task = tasks[tasks["task_id"] == task_id].iloc[0]
    if task["tier"] != "A" and "internal" not in common.views():
        st.error("This task's corpus is not publishable: it is not shown to your audience.")
        return
    team = common.team()
    if team is not None and not team.store:
        st.warning("Labelling is off: the team configuration names no store (`store` in "
                   "`[team]`, docs/team.md).")
        return
    rater = _rater(team)
    if rater is None:
        return
    _labelling(team, view, task, rater)


def _labelling(team, view: str, task, rater: str) -> None:
    task_id = task["task_id"]
    pairs = [TaskPair(r.query_id, r.doc_id, bool(r.sampled))
             for r in common.load("task_pairs", task_id, view).itertuples(index=False)]
    # the publishable views name raters by pseudonym: this person's labels likewise
    labels = judging.as_seen_in(view, _labels(team, task_id, view))
    me = judging.as_seen_in(view, [Label("q", "d", rater, "2026-01-01T00:00:00Z", 0)])[0].rater
    todo, progress = queue(pairs, labels, me, float(task["overlap"]), int(task["seed"]))
    state = _state(task_id)
    error = st.session_state.pop(f"{KEY}_error", None)
    if error:
        st.error(error)
    st.progress(progress.done / max(progress.total, 1), text=progress.line())

    by_id = {(p.query_id, p.doc_id): p for p in pairs}
    current = by_id.get(state["back"]) if state["back"] else None
    if current is None:
        fresh = [p for p in todo if (p.query_id, p.doc_id) not in set(map(tuple, state["skipped"]))]
        if todo and not fresh:
            st.caption(f"Only the {len(todo)} pair(s) you skipped are left: shown again.")
            state["skipped"] = []
            fresh = todo
        current = fresh[0] if fresh else None

    if current is None:
        st.success("Nothing left in your queue.")
    else:
        query = common.load("task_text", task_id, "query", current.query_id, view) or ""
        text = common.load("task_text", task_id, "document", current.doc_id, view) or ""
        st.markdown(f"**Query** {common.md_code(current.query_id)}"
                    + (" · hand-labelling sample" if current.sampled else ""))
        st.markdown(f"> {common.md_text(query)}")
        st.markdown(f"**Document** {common.md_code(current.doc_id)} · query terms marked")
        with st.container(height=360, border=True, key=f"{KEY}_document"):
            st.html(f"<div>{judging.marked_html(text, query)}</div>")
        if len(text) > judging.SHOWN:
            with st.expander(f"The rest of the document ({len(text) - judging.SHOWN} characters)"):
                st.html(f"<div>{judging.marked_html(text[judging.SHOWN:], query, None)}</div>")
        columns = st.columns(len(GRADES) + 2)
        for column, (grade, meaning) in zip(columns, GRADES.items()):
            column.button(f"{grade} {meaning}", key=f"{KEY}_grade_{grade}", shortcut=str(grade),
                          on_click=_answer, args=(team, task_id, current, rater, grade),
                          type="primary", width="stretch")
        columns[-2].button("Skip", key=f"{KEY}_skip", shortcut="S", on_click=_skip,
                           args=(task_id, current), width="stretch")
        columns[-1].button("Undo", key=f"{KEY}_undo", shortcut="U", on_click=_undo,
                           args=(task_id,), disabled=not state["sent"], width="stretch")
        st.caption("Keys: 0-3 grade (TREC Deep Learning scale), S skip, U undo. Undo shows your "
                   "last pair again: the grade you give then replaces the earlier one.")

    if team is None:
        folder = judging.inbox(common.db_path())
        st.caption(f"Your labels are written to {common.md_code(folder)}; apply them to the "
                   "warehouse with:")
        st.code(hints.block(hints.filled(hints.JUDGE_INGEST, INBOX=str(folder))), language="bash")
    else:
        st.caption("Your labels are submitted to the team's store under your login; the ingester "
                   "applies each once, and they count here from the next snapshot.")

    st.subheader("Agreement")
    shown = agreement(labels)
    for line in shown.lines():
        st.markdown(f"- {common.md_text(line)}")
    st.download_button("Download the labels (JSONL, for harness qrels version)",
                       labels_text(latest(labels)), file_name=f"labels-{task_id[:12]}.jsonl",
                       key=f"{KEY}_download", mime="application/jsonl")


common.run(render)
