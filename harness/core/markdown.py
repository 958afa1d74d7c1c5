"""Text that goes into Markdown (tables, headings, lists): escaped so a value can never
become markup.

HTML's special characters become entities, so no tag (``<script>``, ``<img onerror>``), no
autolink and no entity of the value's own survives; the punctuation that could open inline
markup (emphasis, code, a link or image, a table cell, strikethrough, math) is
backslash-escaped; line breaks become spaces, so a value never starts a line (where ``#``,
``-`` or ``>`` would mean something).  A renderer shows the value as it was, as plain text.
"""

from __future__ import annotations

_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
#: punctuation that opens inline markup for a CommonMark / GitHub renderer (escapable with \)
_MARKUP = frozenset("\\`*_[]|~$")


def _intraword(text: str, i: int) -> bool:
    """An underscore between two letters or digits (``snake_case``) can neither open nor
    close emphasis in CommonMark: it stays as it is, so names stay readable."""
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum()


def md_escape(text: object) -> str:
    """``text`` as literal inline Markdown."""
    text = str(text)
    out = []
    for i, ch in enumerate(text):
        if ch in _HTML:
            out.append(_HTML[ch])
        elif ch == "_" and _intraword(text, i):
            out.append(ch)
        elif ch in _MARKUP:
            out.append("\\" + ch)
        elif ch in "\r\n":
            out.append(" ")
        else:
            out.append(ch)
    return "".join(out)
