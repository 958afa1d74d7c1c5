"""Judging tasks for the Judge page's tests: a tier-A task (the registered synthetic corpus)
and a tier-B one (a corpus of unknown licence), written as ``harness qrels task`` writes
them and ingested into a warehouse."""

from __future__ import annotations

from pathlib import Path

from harness.claims.judging import TASK_FILE, TaskPair, read_task, task_document
from harness.core.canonical import canonical_json

PUBLIC = {"name": "synthetic", "licence": "CC0-1.0", "tier": "A", "registry_source": "synthetic"}
PRIVATE = {"name": "ours", "licence": "unknown", "tier": "B"}
#: the page fixtures' tier-B corpus (tests/pages/fixture_warehouse.py)
SECRET = {"name": "secretcorpus", "licence": "CC-BY-NC-4.0", "tier": "B"}
QUERIES = {"q1": "recording equipment", "q2": "budget"}
DOCUMENTS = {"d1": "The recording equipment is set up.", "d2": "Lunch <b>menu</b> & more.",
             "d3": "The budget for the recording."}
PAIRS = [TaskPair("q1", "d1", True), TaskPair("q1", "d2", False), TaskPair("q2", "d3", False)]


def write_task(folder: Path, corpus: dict, name: str, overlap: float = 1.0,
               key: Path | None = None) -> str:
    """A task directory at ``folder`` (signed by the private key ``key`` when given);
    returns its id."""
    import os

    from harness.core.signing import sign_texts

    doc = task_document(name, corpus, {"sha256": "0" * 64, "depth": 10, "runs": [],
                                       "sample": None}, PAIRS, QUERIES, DOCUMENTS, overlap, 0)
    folder.mkdir(parents=True)
    texts = {TASK_FILE: canonical_json(doc)}
    old = os.environ.pop("HARNESS_SIGNING_KEY", None)
    try:
        if key is not None:
            os.environ["HARNESS_SIGNING_KEY"] = str(key)
        texts.update(sign_texts(texts))
    finally:
        os.environ.pop("HARNESS_SIGNING_KEY", None)
        if old is not None:
            os.environ["HARNESS_SIGNING_KEY"] = old
    for name_, text in texts.items():
        (folder / name_).write_text(text, encoding="utf-8")
    return read_task(folder).task_id


def write_labels(folder: Path, task_id: str, *labels) -> Path:
    """A labels batch directory at ``folder``, as the Judge page writes one."""
    from harness.claims.judging import LABELS_FILE, labels_document

    folder.mkdir(parents=True)
    (folder / LABELS_FILE).write_text(canonical_json(labels_document(task_id, list(labels))),
                                      encoding="utf-8")
    return folder


def judging_warehouse(root: Path) -> dict:
    """A warehouse holding a tier-A and a tier-B task; ``{"db", "public", "private"}``."""
    from warehouse.judging import ingest_task

    db = root / "judging.duckdb"
    public = write_task(root / "public-task", PUBLIC, "public pool")
    private = write_task(root / "private-task", PRIVATE, "private pool")
    ingest_task(root / "public-task", db)
    ingest_task(root / "private-task", db)
    return {"db": db, "public": public, "private": private, "root": root}
