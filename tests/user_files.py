"""A user's folder and a byte-for-byte snapshot of a tree: what the output-safety tests
check is never touched."""

from __future__ import annotations

from pathlib import Path


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a directory)."""
    out = {}
    for path in sorted(Path(root).rglob("*")):
        key = path.relative_to(root).as_posix()
        out[key] = None if path.is_dir() else path.read_bytes()
    return out


def users_folder(parent: Path) -> Path:
    """``parent/mydocs`` holding ``thesis.tex`` and ``chapters/two.tex``."""
    docs = parent / "mydocs"
    (docs / "chapters").mkdir(parents=True)
    (docs / "thesis.tex").write_text("\\chapter{One}\n", encoding="utf-8")
    (docs / "chapters" / "two.tex").write_text("\\chapter{Two}\n", encoding="utf-8")
    return docs
