"""Deterministic content digests: of a loaded corpus, and of a directory tree.

The corpus digest is the sha256 of one JSON line per record (keys sorted, no whitespace, the
C encoder for speed; NaN refused), in the corpus's own sorted order, so it names *what was
loaded* (after deduplication and parsing), independent of file order on disk,
``PYTHONHASHSEED`` or the loader's speed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from harness.core.canonical import sha256_file

_ENCODER = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                            allow_nan=False)


def _line(obj: dict) -> bytes:
    return (_ENCODER.encode(obj) + "\n").encode("utf-8")


def _record(tag: str, obj) -> bytes:
    if type(obj).__name__ == "Turn":  # the bulk of a meeting corpus: skip asdict's deep copy
        body = {"file_id": obj.file_id, "index": obj.index, "speaker": obj.speaker,
                "start": obj.start, "end": obj.end, "text": obj.text}
    else:
        body = dataclasses.asdict(obj)
    return _line({"record": tag, **body})


def corpus_sha256(kind: str, files=(), turns=(), documents=(), queries=()) -> str:
    """sha256 over one sorted-key JSON line per file, turn, document and query."""
    digest = hashlib.sha256()
    digest.update(_line({"record": "corpus", "kind": kind}))
    for tag, records in (("file", files), ("turn", turns), ("document", documents),
                         ("query", queries)):
        for obj in records:
            digest.update(_record(tag, obj))
    return digest.hexdigest()


def tree_files(root) -> list[Path]:
    """Every regular file under ``root``, sorted by relative POSIX path (hidden files skipped)."""
    root = Path(root)
    found = [p for p in root.rglob("*")
             if p.is_file() and not any(part.startswith(".") for part in p.relative_to(root).parts)]
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def tree_sha256(root) -> tuple[str, int, int]:
    """``(sha256, files, bytes)`` of a directory: sha256 over ``relpath NUL sha256 LF`` lines."""
    root = Path(root)
    digest = hashlib.sha256()
    count = size = 0
    for path in tree_files(root):
        rel = path.relative_to(root).as_posix()
        digest.update(f"{rel}\0{sha256_file(path)}\n".encode("utf-8"))
        count += 1
        size += path.stat().st_size
    return digest.hexdigest(), count, size
