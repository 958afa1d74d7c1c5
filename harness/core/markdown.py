"""Text that goes into Markdown tables: escaped so a value can never become markup."""

from __future__ import annotations


def md_escape(text: object) -> str:
    return str(text).replace("|", "\\|")
