"""What the Judge page needs besides the warehouse: who is labelling, where a label goes,
the labels not yet applied, and the document text with the query's terms marked.

A label leaves the page only as a labels batch (:mod:`harness.claims.judging`), one per
answer, never by writing a warehouse: in team mode it is submitted to the shared store
(:mod:`harness.core.submissions`), attributed to the logged-in identity, and the ingester
applies it once; in the single-user dashboard it is written into the inbox directory beside
the warehouse, which ``python -m warehouse ingest INBOX/*`` applies (again once: a batch
ingested twice adds nothing).
"""

from __future__ import annotations

import html
import os
import re
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Iterable

from harness.claims.judging import LABELS_FILE, labels_document, read_labels_batch
from harness.claims.labels import Label
from harness.core.atomic import write_files
from harness.core.canonical import canonical_json
from harness.core.formats import FormatError
from harness.judgments.marking import segments

#: the inbox directory of the single-user dashboard (default: beside its warehouse)
INBOX_ENV = "HARNESS_LABELS_INBOX"
INBOX_NAME = "labels-inbox"
#: characters of a document shown before "show the rest"
SHOWN = 6000


def inbox(warehouse: str | os.PathLike[str]) -> Path:
    """Where the single-user page writes its labels batches."""
    configured = os.environ.get(INBOX_ENV)
    return Path(configured) if configured else Path(warehouse).parent / INBOX_NAME


def _write(folder: Path, task_id: str, labels: Iterable[Label]) -> None:
    write_files([(folder / LABELS_FILE, canonical_json(labels_document(task_id, list(labels))))])


def write_to_inbox(folder: Path, task_id: str, label: Label) -> Path:
    """One labels batch as a new directory in ``folder``, whole (renamed into place)."""
    folder.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".batch-", dir=folder))  # dot: not yet a batch
    try:
        _write(work, task_id, [label])
        stamp = label.at.replace(":", "").replace("-", "")
        target = folder / f"{stamp}-{task_id[:12]}-{secrets.token_hex(4)}"
        work.rename(target)
        return target
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def submit_to_store(url: str, task_id: str, label: Label) -> str:
    """One labels batch submitted to the shared store ``url``; returns its digest."""
    from harness.core.store import open_store
    from harness.core.submissions import submit

    with tempfile.TemporaryDirectory(prefix="labels-batch-") as work:
        _write(Path(work), task_id, [label])
        return submit(work, open_store(url)).digest


def inbox_labels(folder: Path, task_id: str) -> list[Label]:
    """The labels of ``task_id`` in the inbox's batches (unreadable batches are left out:
    the ingest names them)."""
    found: list[Label] = []
    if not folder.is_dir():
        return found
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(".") or not (entry / LABELS_FILE).is_file():
            continue
        try:
            batch = read_labels_batch(entry)
        except FormatError:
            continue
        if batch.task_id == task_id:
            found.extend(batch.labels)
    return found


def pseudonym(rater: str) -> str:
    """How the publishable views name a rater (migration 012): ``rater-`` and the first 12
    hex digits of the sha256 of the identity."""
    import hashlib

    return "rater-" + hashlib.sha256(rater.encode("utf-8")).hexdigest()[:12]


def as_seen_in(view: str, labels: Iterable[Label]) -> list[Label]:
    """``labels`` with their raters named as ``view`` names them."""
    import dataclasses

    if view != "publishable":
        return list(labels)
    return [item if re.fullmatch(r"rater-[0-9a-f]{12}", item.rater)
            else dataclasses.replace(item, rater=pseudonym(item.rater)) for item in labels]


def marked_html(text: str, query: str, limit: int | None = SHOWN) -> str:
    """``text`` (its first ``limit`` characters) as HTML, the query's terms in ``<mark>``,
    everything escaped; line breaks kept."""
    shown = text if limit is None else text[:limit]
    out = [f"<mark>{html.escape(piece)}</mark>" if marked else html.escape(piece)
           for piece, marked in segments(shown, query)]
    return "".join(out).replace("\n", "<br>")
