"""Tables for a reader: HTML from plain rows, deterministic text (LaTeX is the warehouse's
one renderer, :mod:`warehouse.latex`).

Numbers are shown at 4 decimals, as in metrics.md; a missing value is a dash; the caption
names the licence tier.
"""

from __future__ import annotations

import html
import math
from typing import Sequence

from harness.core.tiers import PUBLISHABLE


def cell(value, digits: int = 4) -> str:
    """One value as text: floats at ``digits`` decimals, None/NaN as a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        text = f"{value:.{digits}f}"
        return text[1:] if text == f"-{0:.{digits}f}" else text
    return str(value)


def tier_note(tier: str) -> str:
    return ("licence tier A: publishable" if tier == PUBLISHABLE
            else f"licence tier {tier}: internal only, not publishable")


def html_table(head: Sequence[str], rows: Sequence[Sequence], *, caption: str = "") -> str:
    """A plain ``<table>`` (Jupyter styles it)."""
    out = ["<table>"]
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("<thead><tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in head)
               + "</tr></thead><tbody>")
    out += ["<tr>" + "".join(f"<td>{html.escape(cell(v))}</td>" for v in row) + "</tr>"
            for row in rows]
    out.append("</tbody></table>")
    return "".join(out)
