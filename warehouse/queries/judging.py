"""The Judge page's queries: the judging tasks a view may show, one task's pairs, one text,
and the labels made on a task (migration 012).  The publishable view holds tier-A tasks
only, with their texts and labels: an external audience is never shown a tier-B document."""

from __future__ import annotations

from warehouse.db import connect
from warehouse.queries.base import relation


def judging_tasks(view: str, *, db_path=None):
    """Every task the view holds, newest first, with its label count and raters."""
    tasks, labels = relation(view, "judging_tasks"), relation(view, "judgments")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            f"SELECT t.task_id, t.name, t.corpus, t.licence, t.tier, t.depth, t.overlap, "
            f"t.seed, t.pairs, t.ingested_at, count(j.rater) AS labels, "
            f"count(DISTINCT j.rater) AS raters FROM {tasks} AS t "
            f"LEFT JOIN {labels} AS j ON j.task_id = t.task_id "
            "GROUP BY ALL ORDER BY t.ingested_at DESC, t.task_id")


def task_pairs(task_id: str, view: str, *, db_path=None):
    """The task's pairs in queue order."""
    source = relation(view, "task_pairs")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(f"SELECT position, query_id, doc_id, sampled FROM {source} "
                             "WHERE task_id = ? ORDER BY position", [task_id])


def task_text(task_id: str, kind: str, text_id: str, view: str, *, db_path=None):
    """One query's or document's text in the task (None when the view holds none)."""
    source = relation(view, "task_texts")
    with connect(db_path, read_only=True) as conn:
        row = conn.query_one(f"SELECT text FROM {source} WHERE task_id = ? AND kind = ? "
                             "AND id = ?", [task_id, kind, text_id])
    return None if row is None else row[0]


def task_judgments(task_id: str, view: str, *, db_path=None):
    """Every label made on the task, in the order they were applied."""
    source = relation(view, "judgments")
    batches = relation(view, "label_batches")
    with connect(db_path, read_only=True) as conn:
        return conn.query_df(
            f"SELECT j.query_id, j.doc_id, j.rater, j.label, j.labelled_at FROM {source} AS j "
            f"JOIN {batches} AS b ON b.batch_id = j.batch_id WHERE j.task_id = ? "
            "ORDER BY b.ingested_at, j.batch_id, j.query_id, j.doc_id, j.rater", [task_id])
