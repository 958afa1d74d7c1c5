"""md_text and md_code: any string put into Streamlit Markdown reads as itself (issue #16)."""

from __future__ import annotations

import pytest

from dashboard.formatting import md_code, md_text
from tests.markdown_check import HOSTILE, assert_inert, render, text_of

STREAMLIT = ("$x^2$ :red[big] :material/bolt:", "- a list", "# a heading", "12. item", "> quote")


@pytest.mark.parametrize("value", HOSTILE + STREAMLIT)
def test_md_text_is_literal_anywhere(value):
    escaped = md_text(value)
    for where in (escaped, f"### {escaped}", f"**{escaped}**: text", f"a {escaped} b"):
        assert_inert(where, value)
        assert text_of(render(where)).count("\n") <= 1  # one paragraph or heading, no block
    assert ":red[" not in escaped and "$x^2$" not in escaped


@pytest.mark.parametrize("value", [*HOSTILE, "``", "`a``b`", "plain"])
def test_md_code_cannot_be_closed_from_inside(value):
    rendered = render(f"before {md_code(value)} after")
    assert rendered.count("<code>") == 1
    code = rendered.split("<code>", 1)[1].split("</code>", 1)[0]
    assert text_of(code).strip() == value.strip()


def test_plain_names_read_as_they_are():
    for name in ("alt+pub", "beir-nq", "qmsum-committee", "min_max", "hybrid-rrf-60"):
        assert md_text(name) == name
