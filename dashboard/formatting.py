"""Number and text formatting for the dashboard (pure Python: no streamlit, no SQL).

Values are shown to 4 decimals as in the methodology's tables; an interval to the precision
it can carry; a delta signed, with its paired interval and the Holm mark of its stored test.
Every string the warehouse holds (a corpus, run, arm or model name, a licence, a path, an
error message) goes into Markdown-rendering page text through :func:`md_text` or
:func:`md_code`, never as it is: Streamlit reads Markdown, its ``:colour[...]``
directives, LaTeX between ``$`` and links in titles, captions, notices and expander labels.
"""

from __future__ import annotations

import re


from warehouse import render
from warehouse.exports import short_labels, significance_mark

#: what opens inline markup in Streamlit's Markdown: emphasis, code, links and images, HTML,
#: entities, strikethrough, math, directives (``:red[...]``, which need ``[``), table pipes
_INLINE = frozenset("\\`*_[]<>&~$|#")
#: what opens a block at the start of a text: heading, list, quote, setext underline, list item
_LEADING = re.compile(r"^(\s*)([#>+=-]|\d+(?=[.)]))")


def md_text(value) -> str:
    """``value`` as literal text in Streamlit Markdown, wherever it is put: the characters
    that open inline markup backslash-escaped (an underscore inside a word, which cannot,
    left as it is), a block marker at its start escaped, line breaks flattened.  Names
    such as ``alt+pub`` or ``beir-nq`` read as they are."""
    text = " ".join(str(value).splitlines())
    out = []
    for i, ch in enumerate(text):
        if ch == "_" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum():
            out.append(ch)
        elif ch in _INLINE:
            out.append("\\" + ch)
        else:
            out.append(ch)
    escaped = "".join(out)
    lead = _LEADING.match(escaped)
    if lead:  # "- x", "# x", "1. x": escape the marker (a list item's after its digits)
        start, marker = lead.span(2)
        if escaped[start].isdigit():
            start = marker
        escaped = escaped[:start] + "\\" + escaped[start:]
    return escaped


def md_code(value) -> str:
    """``value`` as an inline code span that nothing in it can close: fenced with more
    backticks than its longest run of them (CommonMark), padded when it starts or ends
    with one."""
    text = " ".join(str(value).splitlines())
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"

MARK_LEGEND = ("`*` significant after Holm correction; `n.s.` not significant; `floor` cannot "
               "be significant (too few queries differ for any outcome to reach alpha); "
               "`borderline` within Monte Carlo error of alpha (rerun with more "
               "--permutations)")


def run_labels(run_table) -> dict[str, str]:
    """``run_id -> label``: the control name, numbered ``(1)``, ``(2)`` in the table's order
    (oldest first) where names repeat: short, unique, never a hash id, and the names the
    exports use (:func:`warehouse.exports.short_labels`)."""
    return short_labels(zip(run_table["run_id"], run_table["control_name"]))


# one definition of every cell's text, shared with the exports (the screen is what they hold)
missing = render.missing
fmt = render.fmt_value
fmt_signed = render.fmt_signed


def fmt_interval(value, lower, upper, interval_digits: int | None = None) -> str:
    """``0.1234 [0.11, 0.14]``: the value to 4 decimals, the interval to the precision it
    can carry (2 decimals, 4 when it is narrower than 0.02), or to ``interval_digits``: a
    table gives all its intervals one precision (:func:`warehouse.render.interval_precision`)."""
    return render.fmt_interval(value, lower, upper, 4, interval_digits)


def mark(verdict) -> str:
    """The Holm mark of a stored verdict ('' when no test is stored), as the exports write it."""
    return significance_mark(verdict)


def fmt_delta(delta, lower=None, upper=None, verdict=None) -> str:
    """``+0.0123 [+0.0012, +0.0234] *``: delta, its paired interval and Holm mark when stored."""
    return render.fmt_delta(delta, lower, upper, mark(verdict))


def fmt_p(value) -> str:
    if missing(value):
        return "–"
    return f"{value:.3g}" if value >= 1e-3 else f"{value:.2e}"


def measure_defaults(available, wanted=("nDCG@10", "R@10", "MRR@10", "Success@1")) -> list[str]:
    chosen = [m for m in wanted if m in available]
    return chosen or list(available)[:4]
