"""Judging tasks and labels batches into the warehouse (migration 012), each in one
transaction, each at most once (:mod:`harness.claims.judging` defines both files).

A task is stored with the tier its licence record gives its corpus (checked, never taken
from the file), made as restrictive as ``tier_cap`` (the team ingester's cap for what no
trusted signature vouches for); its pairs and texts carry that tier.  A labels batch is
checked against the stored task it names (every labelled pair must be one of its pairs)
and stored with the task's tier: a label is as restrictive as the document it judges.
"""

from __future__ import annotations

import hashlib
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable

import pyarrow as pa

from harness.claims.judging import (LABELS_FILE, TASK_FILE, labels_document, read_labels_batch,
                                    read_task)
from harness.core import interrupts
from harness.core.canonical import canonical_json
from harness.core.formats import FormatError
from harness.core.tiers import most_restrictive_tier
from warehouse import schema
from warehouse.db import Connection, connect, resolve_path
from warehouse.errors import IngestRefused
from warehouse.ingest import IngestReport

Also = Callable[[Connection, bool], None]


class TaskNotStored(IngestRefused):
    """A labels batch names a task the warehouse does not hold (yet): the team ingester
    leaves it pending, a local ingest refuses it."""


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _refused(exc: FormatError) -> IngestRefused:
    return IngestRefused(str(exc), path=exc.path, line=exc.line, field=exc.field)


def is_task(path) -> bool:
    return Path(path).is_dir() and (Path(path) / TASK_FILE).is_file()


def is_labels(path) -> bool:
    return Path(path).is_dir() and (Path(path) / LABELS_FILE).is_file()


def _already(conn: Connection, sql: str, key: str, also: Also | None) -> bool:
    if not conn.query_one(sql, [key]):
        return False
    if also is not None:
        with conn.transaction():
            also(conn, False)
    return True


def ingest_task(path, db_path=None, *, tier_cap: str | None = None,
                also: Also | None = None) -> IngestReport:
    """Store the judging task in directory ``path`` (``also`` as in
    :func:`warehouse.ingest.store`)."""
    try:
        task = read_task(path)
    except FormatError as exc:
        raise _refused(exc) from None
    tier = task.tier if tier_cap is None else most_restrictive_tier([task.tier, tier_cap])
    target = resolve_path(db_path)
    source = str(Path(path) / TASK_FILE)
    with ExitStack() as committed, connect(target, read_only=False, check_schema=False) as conn:
        schema.apply_pending(conn)
        if _already(conn, "SELECT 1 FROM judging_tasks WHERE task_id = ?", task.task_id, also):
            return IngestReport(task.task_id, False, f"judging task {task.task_id[:12]} is "
                                f"already in {target}: nothing to do", kind="judging-task",
                                db_path=str(target))
        with conn.transaction():
            conn.execute(
                "INSERT INTO judging_tasks (task_id, name, corpus, licence, tier, depth, "
                "pool_sha256, overlap, seed, pairs, source, ingested_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [task.task_id, task.name, task.corpus["name"], task.corpus["licence"], tier,
                 task.pool["depth"], task.pool["sha256"], task.overlap, task.seed,
                 len(task.pairs), source, _now()])
            n = len(task.pairs)
            conn.insert_frame("task_pairs", pa.table({
                "task_id": [task.task_id] * n, "position": pa.array(range(n), pa.int32()),
                "query_id": [p.query_id for p in task.pairs],
                "doc_id": [p.doc_id for p in task.pairs],
                "sampled": pa.array([p.sampled for p in task.pairs], pa.bool_()),
                "tier": [tier] * n}))
            texts = [("query", k, v) for k, v in task.queries.items()] \
                + [("document", k, v) for k, v in task.documents.items()]
            conn.insert_frame("task_texts", pa.table({
                "task_id": [task.task_id] * len(texts), "kind": [t[0] for t in texts],
                "id": [t[1] for t in texts], "text": [t[2] for t in texts],
                "tier": [tier] * len(texts)}))
            if also is not None:
                also(conn, True)
            committed.enter_context(interrupts.deferred(reraise=False))
        return IngestReport(task.task_id, True, f"ingested judging task {task.name!r} "
                            f"({task.task_id[:12]}, {len(task.pairs)} pairs, tier {tier}) into "
                            f"{target}", kind="judging-task", db_path=str(target))


def ingest_labels(path, db_path=None, *, also: Also | None = None) -> IngestReport:
    """Store the labels batch in directory ``path`` against the task it names."""
    source = str(Path(path) / LABELS_FILE)
    try:
        batch = read_labels_batch(path)
    except FormatError as exc:
        raise _refused(exc) from None
    batch_id = hashlib.sha256(canonical_json(labels_document(
        batch.task_id, batch.labels)).encode("utf-8")).hexdigest()
    target = resolve_path(db_path)
    with ExitStack() as committed, connect(target, read_only=False, check_schema=False) as conn:
        schema.apply_pending(conn)
        if _already(conn, "SELECT 1 FROM label_batches WHERE batch_id = ?", batch_id, also):
            return IngestReport(batch_id, False, f"labels batch {batch_id[:12]} is already in "
                                f"{target}: nothing to do", kind="labels", db_path=str(target))
        row = conn.query_one("SELECT tier FROM judging_tasks WHERE task_id = ?", [batch.task_id])
        if row is None:
            raise TaskNotStored(f"{source}: field 'task': judging task {batch.task_id[:12]} is "
                                "not in the warehouse (ingest the task first)",
                                path=source, field="task")
        tier = row[0]
        pairs = {(q, d) for q, d in conn.query_all(
            "SELECT query_id, doc_id FROM task_pairs WHERE task_id = ?", [batch.task_id])}
        for i, item in enumerate(batch.labels):
            if (item.query_id, item.doc_id) not in pairs:
                raise IngestRefused(f"{source}: field 'labels[{i}]': pair ({item.query_id}, "
                                    f"{item.doc_id}) is not in task {batch.task_id[:12]}",
                                    path=source, field=f"labels[{i}]")
        with conn.transaction():
            conn.execute("INSERT INTO label_batches VALUES (?, ?, ?, ?, ?, ?)",
                         [batch_id, batch.task_id, len(batch.labels), tier, source, _now()])
            labels, n = batch.labels, len(batch.labels)
            conn.insert_frame("judgments", pa.table({
                "batch_id": [batch_id] * n, "task_id": [batch.task_id] * n,
                "query_id": [x.query_id for x in labels], "doc_id": [x.doc_id for x in labels],
                "rater": [x.rater for x in labels],
                "label": pa.array([x.label for x in labels], pa.int32()),
                "labelled_at": [x.at for x in labels], "tier": [tier] * n}))
            if also is not None:
                also(conn, True)
            committed.enter_context(interrupts.deferred(reraise=False))
        return IngestReport(batch_id, True, f"ingested {len(batch.labels)} label(s) of task "
                            f"{batch.task_id[:12]} (tier {tier}) into {target}", kind="labels",
                            db_path=str(target))


def ingest_judging(path, db_path=None) -> IngestReport:
    """A judging task or a labels batch (by the file its directory holds), as a local
    ingest stores it."""
    if is_task(path):
        return ingest_task(path, db_path)
    if is_labels(path):
        return ingest_labels(path, db_path)
    raise IngestRefused(f"{path}: neither a judging task ({TASK_FILE}) nor a labels batch "
                        f"({LABELS_FILE})", path=path)
