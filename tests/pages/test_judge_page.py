"""The Judge page in the single-user dashboard (issue 38 items 3, 4, 7): a queue in pool
order, the query's terms marked (and the text escaped), grade, skip, undo, the labels written
as batches into the inbox and applied by the printed command exactly once, agreement of two
people, and tier: the publishable view lists tier-A tasks only."""

from __future__ import annotations

import shlex
import subprocess

from dashboard import hints
from tests.pages.judge_fixture import judging_warehouse


def _judge(app, db, view="internal", name="ana"):
    at = app(db)
    at.run()
    at.radio(key="tier_view").set_value(view).run()
    at.switch_page("pages/judge.py").run()
    assert not at.exception, at.exception
    if name is not None and view_has_tasks(at):
        at.text_input(key="judge_rater").input(name).run()
    return at


def view_has_tasks(at) -> bool:
    return any(s.key == "judge_task" for s in at.selectbox)


def _pick(at, task_id):
    at.selectbox(key="judge_task").set_value(task_id).run()
    return at


def _html(at) -> str:
    return "\n".join(h.proto.body for h in at.get("html"))


def _batches(inbox):
    return sorted(p for p in inbox.iterdir() if not p.name.startswith("."))


def test_label_skip_undo_and_ingest_once(app, tmp_path, monkeypatch):
    made = judging_warehouse(tmp_path)
    inbox = tmp_path / "inbox"
    monkeypatch.setenv("HARNESS_LABELS_INBOX", str(inbox))
    at = _pick(_judge(app, made["db"]), made["public"])
    page = _html(at)
    # the first pair in pool order, its query's terms marked, the rest escaped
    assert "<mark>recording</mark> <mark>equipment</mark>" in page
    assert "q1" in "".join(m.value for m in at.markdown)
    at.button(key="judge_grade_2").click().run()
    assert len(_batches(inbox)) == 1
    assert "Lunch &lt;b&gt;menu&lt;/b&gt; &amp; more." in _html(at)   # q1 d2 next, escaped
    at.button(key="judge_skip").click().run()
    assert "The <mark>budget</mark> for the recording." in _html(at)   # q2 d3 (skipped d2)
    at.button(key="judge_undo").click().run()
    assert "<mark>equipment</mark>" in _html(at)                      # back to q1 d1
    at.button(key="judge_grade_3").click().run()                      # replaces the 2
    assert len(_batches(inbox)) == 2
    progress = at.get("progress")[0].proto.text
    assert progress.startswith("1 labelled by you, 2 left for you")
    # the printed command applies the inbox, and again adds nothing
    (command,) = hints.filled(hints.JUDGE_INGEST, INBOX=str(inbox))
    assert command in [c.value for c in at.code]
    env = {"HARNESS_WAREHOUSE": str(made["db"])}
    for _ in range(2):
        done = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                              env={**__import__("os").environ, **env}, timeout=300)
        assert done.returncode == 0, done.stderr
    assert done.stdout.count("already in") == 2
    from warehouse import queries

    held = queries.task_judgments(made["public"], "internal", db_path=made["db"])
    assert sorted(zip(held.rater, held.doc_id, held.label)) == [("ana", "d1", 2), ("ana", "d1", 3)]
    # the latest label counts: the download holds one, the 3
    from tests.pages.conftest import download_bytes

    at = _pick(_judge(app, made["db"]), made["public"])
    text = download_bytes(at.get("download_button")[0]).decode()
    assert '"label":3' in text.replace(" ", "") and text.count("\n") == 1


def test_two_people_share_the_double_judged_pairs_and_agreement_shows(app, tmp_path,
                                                                      monkeypatch):
    made = judging_warehouse(tmp_path)
    monkeypatch.setenv("HARNESS_LABELS_INBOX", str(tmp_path / "inbox"))
    for name, grades in (("ana", (2, 0, 1)), ("bo", (2, 1, 1))):
        at = _pick(_judge(app, made["db"], name=name), made["public"])
        for grade in grades:  # overlap 1: every pair is shown to both
            at.button(key=f"judge_grade_{grade}").click().run()
        assert any("Nothing left in your queue." in s.value for s in at.success)
    text = "\n".join(m.value for m in at.markdown)
    # by hand: ana (2, 0, 1), bo (2, 1, 1); p_o = 2/3, p_e = 1/3 * 2/3 + 1/3 * 1/3 = 1/3,
    # kappa = (2/3 - 1/3) / (1 - 1/3) = 0.5; linear weights 1 - |i - j| / 3: p_o = 8/9,
    # p_e = 20/27, kappa_w = (8/9 - 20/27) / (7/27) = 4/7 = 0.571
    assert "kappa ana vs bo over 3 pairs: 0.500" in text.replace("\\", "")
    assert "linearly weighted 0.571" in text


def test_the_publishable_view_lists_tier_a_tasks_only(app, tmp_path, monkeypatch):
    made = judging_warehouse(tmp_path)
    monkeypatch.setenv("HARNESS_LABELS_INBOX", str(tmp_path / "inbox"))
    at = _judge(app, made["db"], view="publishable", name=None)
    options = at.selectbox(key="judge_task").options
    assert len(options) == 1 and made["public"][:12] in options[0]
    assert "private" not in " ".join(options)
    at = _judge(app, made["db"], view="internal", name=None)
    assert len(at.selectbox(key="judge_task").options) == 2


def test_no_task_prints_the_task_command(app, tmp_path):
    from warehouse import schema
    from warehouse.db import connect

    db = tmp_path / "empty.duckdb"
    with connect(db, read_only=False, check_schema=False) as conn:
        schema.apply_pending(conn)
    at = _judge(app, db, name=None)
    assert hints.block(hints.JUDGE_TASK) in [c.value for c in at.code]
    assert shlex.split(hints.JUDGE_TASK[0])[1:3] == ["-m", "harness"]
