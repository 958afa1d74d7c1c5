"""Every ``python`` block of the README and of ``docs/python-api.md`` runs, in order, as one
notebook: the blocks of a page share one namespace, in a directory holding a copy of
``examples/``.  Blocks tagged ``sh`` (or anything but ``python``) are shell commands or
output and do not run."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: the pages whose python blocks are a walkthrough that must run
PAGES = ("README.md", "docs/python-api.md")
#: blocks each page holds at least (a page whose blocks vanished would pass vacuously)
MINIMUM_BLOCKS = {"README.md": 1, "docs/python-api.md": 12}

_FENCE = re.compile(r"^```(\S*)\s*$")


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line of the opening fence, code)`` of every fenced block tagged ``python``."""
    blocks, lang, start, body = [], None, 0, []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _FENCE.match(line)
        if lang is None:
            if match:
                lang, start, body = match.group(1), number, []
            continue
        if line.rstrip() == "```":
            if lang == "python":
                blocks.append((start, "\n".join(body) + "\n"))
            lang = None
            continue
        body.append(line)
    if lang is not None:
        raise AssertionError(f"unclosed code fence opened on line {start}")
    return blocks


def test_the_block_reader_itself():
    text = "x\n```python\na = 1\n```\n```sh\nrm -rf /\n```\n```python\nb = a + 1\n```\n"
    assert python_blocks(text) == [(2, "a = 1\n"), (8, "b = a + 1\n")]
    with pytest.raises(AssertionError, match="unclosed"):
        python_blocks("```python\na = 1\n")


#: the API page runs a dozen evaluations (about 7 s): a slow test
@pytest.mark.parametrize("page", [pytest.param(p, marks=pytest.mark.slow)
                                  if p == "docs/python-api.md" else p for p in PAGES])
def test_every_python_block_runs(page, tmp_path, monkeypatch):
    path = REPO / page
    blocks = python_blocks(path.read_text(encoding="utf-8"))
    assert len(blocks) >= MINIMUM_BLOCKS[page], f"{page}: only {len(blocks)} python blocks"
    shutil.copytree(REPO / "examples", tmp_path / "examples")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HARNESS_WAREHOUSE", str(tmp_path / "default-warehouse.duckdb"))
    namespace: dict = {"__name__": f"docs:{page}"}
    for line, code in blocks:
        try:
            exec(compile(code, f"{page}:{line}", "exec"), namespace)
        except Exception as exc:  # name the block, keep the traceback
            raise AssertionError(f"{page}: the python block at line {line} failed: "
                                 f"{type(exc).__name__}: {exc}") from exc
