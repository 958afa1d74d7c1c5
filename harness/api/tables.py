"""Tables for a reader: LaTeX (booktabs) and HTML from plain rows, deterministic text.

Numbers are shown at 4 decimals, as in metrics.md; a missing value is a dash.  Every LaTeX
table opens with a comment naming its licence tier, so a tier-B table pasted into a paper
says what it is.
"""

from __future__ import annotations

import html
import math
from typing import Sequence

from harness.core.latex import escape_latex as latex_escape
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


def latex_table(head: Sequence[str], rows: Sequence[Sequence], *, numeric: Sequence[bool],
                tier: str, caption: str | None = None, label: str | None = None) -> str:
    """A ``table`` environment with a booktabs ``tabular``; ``numeric`` right-aligns."""
    spec = "".join("r" if n else "l" for n in numeric)
    lines = [f"% {tier_note(tier)}", r"\begin{table}", r"\centering"]
    if caption is not None:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label is not None:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
              " & ".join(latex_escape(h) for h in head) + r" \\", r"\midrule"]
    lines += [" & ".join(latex_escape(cell(v)) for v in row) + r" \\" for row in rows]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


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
