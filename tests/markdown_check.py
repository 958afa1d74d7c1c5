"""Rendering Markdown with an independent CommonMark implementation (markdown-it-py, raw
HTML enabled as GitHub and most viewers allow it) to check that hostile values stay text."""

from __future__ import annotations

import html
import re

#: a tag in the rendered HTML
TAG = re.compile(r"<[A-Za-z][^>]*>")
#: what must never come out of a value: active elements, event handlers, script URLs
ACTIVE = re.compile(r"^<(script|img|a|iframe|svg|object|embed|video|audio|input|form)\b"
                    r"|\bon\w+\s*=|javascript:", re.IGNORECASE)

#: values a user could give as a corpus, run, arm or model name
HOSTILE = (
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "x`](javascript:alert(1))[`",
    "[click](javascript:alert(2)) ![i](http://x.invalid/i.png)",
    "*em* _em_ ~~gone~~ $x^2$ a|b \\<b>",
)


def render(markdown: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"]).render(
        markdown)


def text_of(rendered: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", rendered))


def assert_inert(markdown: str, *values: str) -> None:
    """``markdown`` renders to no active element, and each value is shown as it was."""
    rendered = render(markdown)
    active = [tag for tag in TAG.findall(rendered) if ACTIVE.search(tag)]
    assert not active, f"active markup {active} in {rendered[:2000]}"
    text = " ".join(text_of(rendered).split())
    for value in values:
        assert " ".join(value.split()) in text, f"{value!r} not shown as text in {text[:2000]}"
