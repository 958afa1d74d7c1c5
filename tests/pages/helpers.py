"""What the page tests share: the pages, opening one in a tier view, finding a table."""

from __future__ import annotations

import re

from dashboard import PAGES

PAGE_FILES = [file for file, _, _ in PAGES]
#: the pages that read the warehouse (the glossary is text only)
DATA_PAGES = [file for file in PAGE_FILES if file != "glossary.py"]


def goto(at, page: str, view: str):
    at.run()
    at.radio(key="tier_view").set_value(view).run()
    at.switch_page(f"pages/{page}").run()
    return at


def table_text(at) -> str:
    return "\n".join(frame.value.to_csv() for frame in at.dataframe)


def frame_with(at, column: str):
    for frame in at.dataframe:
        if column in frame.value.columns:
            return frame.value
    raise AssertionError(f"no table with a column {column!r}: "
                         f"{[list(f.value.columns) for f in at.dataframe]}")


def plain(text: str) -> str:
    """Markdown-escaped text (``dashboard.formatting.md_text``) as it reads on the page."""
    return re.sub(r"\\(.)", r"\1", str(text))


def static_table(at, index: int = 0):
    """An ``st.table``'s cells and headings as the page shows them (unescaped)."""
    frame = at.table[index].value
    frame = frame.map(lambda v: plain(v) if isinstance(v, str) else v)
    frame.columns = [plain(c) for c in frame.columns]
    return frame
