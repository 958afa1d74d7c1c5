"""The paste-ready LaTeX of an export: one table that fits the page it is pasted into.

An export becomes one ``table``: the corpus x query-class slices as row groups (``all``
first, pooled corpora last), one line per run, per measure the mean aligned on its decimal
point (siunitx ``S`` columns) with its interval and, with a control, the delta against it
with its interval and mark.  Only runs that measured differently (comparability groups)
get tables of their own: their numbers never share a column.  The best mean per measure
and slice is bold; an arm statistically tied with the best carries a dagger (when the
export holds that test), a borderline one a double dagger, an untested slice ``nt``.  The
caption and the notes (interval level, sources, marks) are written once; a continued
table points back to the first.

Means and deltas carry the fewest decimals, from 3 to 6, that keep every two different
means of a slice and measure different as printed (:func:`separating_digits`), so a bold
best and a marked run never print the same digits; interval bounds carry the screen's
precision (2 decimals, 4 when an interval is narrower than 0.02).

The layout is chosen to fit the text width of an ``article`` (345 pt) or, with
``columns=2``, one column of a two-column ``article`` (229.5 pt; 241-pt columns fit too).
Widths are estimated from Computer Modern's glyph widths (:func:`harness.core.latex.text_width`);
the layouts are tried in order and the first that fits is used, preferring one that needs no
continued table to one that is narrower:

1. intervals beside their means;
2. intervals on a second line under their means;
3. the same with the runs abbreviated (R1, R2, ...) and a legend under the table;
4. the three again tighter (``\\footnotesize``, half the column separation);
5. (two columns only) the six above as a ``table*`` across both columns (469 pt);
6. the measures split over several tables (the last resort but one);
7. the last resort: the table scaled down with ``\\resizebox`` (said on stderr).

Tables taller than a page continue in the next float.  The first lines are LaTeX comments
naming the packages the preamble needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.core.latex import breakable, escape_latex, text_width
from warehouse.best import BORDERLINE, NOT_TESTED, best_of
from warehouse.cells import interval_precision

#: text widths (pt) of the standard ``article`` at 10 pt: one column, one column of two, and
#: the full width of a two-column page (for ``table*``)
ONE_COLUMN, HALF_COLUMN, TWO_COLUMN_SPAN = 345.0, 229.5, 469.0
#: the text height (pt) of ``article`` at 10 pt; a float is kept well inside it
TEXT_HEIGHT = 550.0
FLOAT_HEIGHT = 0.85 * TEXT_HEIGHT
#: the share of the width a table may fill by the estimate
SAFETY = 0.97
#: LaTeX's default ``\tabcolsep``, and the tight layouts' half of it
TABCOLSEP, TIGHT_TABCOLSEP = 6.0, 3.0
#: the fewest and the most decimals of a mean, bound or delta (:func:`separating_digits`)
LEAST_DIGITS, MOST_DIGITS = 3, 6
#: line heights (pt) at ``\small`` / ``\footnotesize`` (the table body) and of the notes
LINE, TIGHT_LINE, NOTE_LINE = 11.5, 9.5, 9.5
#: the marks of a delta as superscripts, and what they mean (the legend)
MARK_TEXT = {"*": "$^{*}$", "n.s.": r"\textsuperscript{ns}", "floor": r"\textsuperscript{f{}l}",
             "borderline": r"\textsuperscript{b}"}
MARK_LEGEND = {"*": "* significant after Holm's correction", "n.s.": "ns not significant",
               "floor": "fl cannot be significant with this many queries (its floor)",
               "borderline": "b within Monte Carlo error of the level (neither verdict is "
                             "safe: rerun with more --permutations)"}
TIED, BORDERLINE_TIE, UNTESTED = r"$^{\dagger}$", r"$^{\ddagger}$", r"\textsuperscript{nt}"
PACKAGES = ("booktabs", "siunitx")
#: after this many floats of one export, a ``\clearpage`` places them (LaTeX's queue of
#: unplaced floats holds 18)
FLOATS_PER_PAGE_RUN = 6


@dataclass
class Layout:
    stacked: bool  # intervals on a line of their own
    abbreviate: bool  # runs as R1, R2, ... with a legend
    per_table: int  # measures per table
    env: str  # table or table*
    width: float  # the width it must fit
    resize: bool = False
    tight: bool = False  # \footnotesize body, half the column separation
    transpose: bool = False  # runs as columns, measures as the lines of each slice

    @property
    def sep(self) -> float:
        return TIGHT_TABCOLSEP if self.tight else TABCOLSEP

    @property
    def size(self) -> str:
        return "footnotesize" if self.tight else "small"

    @property
    def line(self) -> float:
        return TIGHT_LINE if self.tight else LINE


@dataclass
class Table:
    """One table's content: row groups ``(heading, [(run, {measure: cells})])``, the heading
    the slice's raw text (corpus when the export has several, class, n)."""

    title: str | None  # the comparability group, when the export has several
    measures: list[str]
    groups: list[tuple[str, list[tuple[str, dict]]]]
    with_control: bool
    ties_tested: bool
    digits: int = LEAST_DIGITS
    #: what the lines are (the first column's head): runs, or measures when transposed
    corner: str = "run"
    #: every run of the export in order, so R1, R2, ... name the same run in every table
    numbering: list[str] = field(default_factory=list)


@dataclass
class Rendered:
    text: str
    #: what the CLI says on stderr (a table scaled down)
    warnings: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- cells


def _num(value, digits: int, signed: bool = False) -> str:
    text = f"{float(value):+.{digits}f}" if signed else f"{float(value):.{digits}f}"
    zero = f"{0:.{digits}f}"
    return text.replace("-" + zero, "+" + zero) if signed else text


def _missing(value) -> bool:
    try:
        return value is None or math.isnan(float(value))
    except (TypeError, ValueError):
        return True


def _interval(lower, upper, digits: int, signed: bool = False) -> str:
    if _missing(lower) or _missing(upper):
        return ""
    return f"[{_num(lower, digits, signed)}, {_num(upper, digits, signed)}]"


def separating_digits(rows) -> int:
    """The fewest decimals (from :data:`LEAST_DIGITS` to :data:`MOST_DIGITS`) at which,
    per corpus x group x class x measure, means that differ at :data:`MOST_DIGITS` decimals
    still print differently: a bold best and the runs beside it never show the same digits
    unless their means are the same."""
    keys = [k for k in ("corpus", "group", "class", "measure") if k in rows.columns]
    slices = [sorted({round(float(v), MOST_DIGITS) for v in part["value"] if not _missing(v)})
              for _, part in rows.groupby(keys, sort=False)] if len(rows) else []
    for digits in range(LEAST_DIGITS, MOST_DIGITS):
        if all(len({f"{v:.{digits}f}" for v in values}) == len(values) for values in slices):
            return digits
    return MOST_DIGITS


def _cells(r: dict, with_control: bool, digits: int, bounds: int) -> dict:
    """The texts of one run x class x measure: mean, interval, delta, delta interval, mark,
    and the tie test's state (unescaped; numbers as plain text)."""
    tie = r.get("tie") if isinstance(r.get("tie"), str) else (
        "tied" if r.get("tied") is True else "")
    out = {"value": "" if _missing(r["value"]) else _num(r["value"], digits),
           "interval": _interval(r.get("lower"), r.get("upper"), bounds),
           "best": bool(r.get("best", False)), "tie": tie}
    if with_control:
        mark = r.get("mark") or ""
        if mark == "control":
            out.update(delta="--", delta_interval="", mark="")
        elif mark == "not comparable":
            out.update(delta="n/c", delta_interval="", mark="")
        elif _missing(r.get("delta")):
            out.update(delta="--", delta_interval="", mark="")
        else:
            out.update(delta=_num(r["delta"], digits, signed=True),
                       delta_interval=_interval(r.get("delta_lower"), r.get("delta_upper"),
                                                bounds, True),
                       mark=mark if mark in MARK_TEXT else "")
    return out


def mark_best(rows):
    """``rows`` (the export's long rows) with ``best``: the highest mean per table, class and
    measure, when at least two runs are there (every measure here is higher-is-better)."""
    return rows.assign(best=best_of(rows))


def _n_text(part) -> str:
    ns = sorted({int(n) for n in part["n"]})
    return str(ns[0]) if len(ns) == 1 else f"{ns[0]}--{ns[-1]}"


def tables_of(export, measures: list[str]) -> list[Table]:
    """One :class:`Table` per comparability group (one for most exports), its row groups
    the corpus x class slices: corpora in the export's order, pooled ones last, ``all``
    first within each."""
    rows = export.rows[export.rows["measure"].isin(measures)]
    rows = mark_best(rows)
    digits = separating_digits(rows)
    # the bounds to the precision the screen gives them: 2 decimals, 4 when any interval
    # is narrower than 0.02 (:func:`warehouse.cells.interval_precision`)
    bounds = interval_precision([*zip(rows["lower"], rows["upper"]),
                                 *(zip(rows["delta_lower"], rows["delta_upper"])
                                   if "delta_lower" in rows.columns else [])])
    with_control = export.control is not None
    ties_tested = "tied" in rows.columns or "tie" in rows.columns
    split = "group" in rows.columns and rows["group"].nunique() > 1
    several = rows["corpus"].nunique() > 1
    corpora = sorted(dict.fromkeys(rows["corpus"]), key=lambda c: "+" in c)
    out = []
    for title in (list(dict.fromkeys(rows["group"])) if split else [None]):
        part = rows if title is None else rows[rows["group"] == title]
        groups = []
        for corpus in corpora:
            in_corpus = part[part["corpus"] == corpus]
            for cls in sorted(dict.fromkeys(in_corpus["class"]), key=lambda c: c != "all"):
                sub = in_corpus[in_corpus["class"] == cls]
                lines: dict[str, dict] = {}
                for r in sub.to_dict("records"):
                    lines.setdefault(r["run"], {})[r["measure"]] = _cells(
                        r, with_control, digits, bounds)
                heading = (f"{corpus}, " if several else "") + f"{cls} (n = {_n_text(sub)})"
                groups.append((heading, list(lines.items())))
        shown = [m for m in measures if m in set(part["measure"])]
        if groups:
            out.append(Table(title, shown, groups, with_control, ties_tested, digits))
    numbering = list(dict.fromkeys(run for t in out for _, lines in t.groups for run, _ in lines))
    for table in out:
        table.numbering = numbering
    return out


def transposed(table: Table) -> Table:
    """The same table with the runs as columns and, in each slice, one line per measure."""
    runs = list(dict.fromkeys(run for _, lines in table.groups for run, _ in lines))
    groups = []
    for heading, lines in table.groups:
        by_measure: dict[str, dict] = {}
        for measure in table.measures:
            for run, cells in lines:
                if measure in cells:
                    by_measure.setdefault(measure, {})[run] = cells[measure]
        groups.append((heading, list(by_measure.items())))
    return Table(table.title, runs, groups, table.with_control, table.ties_tested,
                 table.digits, corner="measure", numbering=table.numbering)


def shaped(tables: list[Table], layout: Layout) -> list[Table]:
    """The tables as ``layout`` sets them (transposed or not)."""
    return [transposed(t) for t in tables] if layout.transpose else tables


# --------------------------------------------------------------------------- widths


def _marks_used(table: Table) -> set[str]:
    return {c["tie"] for _, lines in table.groups for _, cells in lines
            for c in cells.values() if c["tie"] and not c["best"]}


def _post_mark(table: Table) -> str:
    """The widest mark after a mean (the space its column keeps)."""
    used = _marks_used(table)
    if NOT_TESTED in used:
        return UNTESTED
    if used & {BORDERLINE, "tied"}:
        return BORDERLINE_TIE if BORDERLINE in used else TIED
    return ""


def _block_widths(table: Table, measure: str, layout: Layout,
                  head_text: str | None = None) -> list[float]:
    """Widths (pt) of a measure's columns: mean [, interval] [, delta [, delta interval]]."""
    cells = [line[measure] for _, lines in table.groups for _, line in lines
             if measure in line]
    size, note = layout.size, ("scriptsize" if layout.tight else "footnotesize")
    mark = _post_mark(table)
    post = text_width("nt" if mark == UNTESTED else "x", "scriptsize") if mark else 0.0
    value = text_width("0." + "0" * table.digits, size, bold=True) + post + 1.0
    interval = max((text_width(c["interval"], note) for c in cells), default=0.0)
    widths = [max(value, interval) if layout.stacked else value] + \
        ([] if layout.stacked else [interval])
    if table.with_control:
        delta = text_width("+0." + "0" * table.digits, size) + \
            text_width("ns", "scriptsize") + 1.0
        delta = max(delta, text_width("n/c", size))
        dint = max((text_width(c.get("delta_interval", ""), note) for c in cells),
                   default=0.0)
        widths += [max(delta, dint)] if layout.stacked else [delta, dint]
    # the measure's name spans the block
    head = text_width(measure if head_text is None else head_text, size) + 2.0
    inner = sum(widths) + 2 * layout.sep * (len(widths) - 1)
    if head > inner:
        widths[0] += head - inner
    return widths


def _names(table: Table, abbreviate: bool) -> tuple[dict[str, str], dict[str, str]]:
    """The lines' names and the columns' heads: runs are abbreviated (R1, R2, ...) when
    ``abbreviate``, wherever they are."""
    runs = list(dict.fromkeys(run for _, lines in table.groups for run, _ in lines)) \
        if table.corner == "run" else list(table.measures)
    order = table.numbering or runs
    short = {run: f"R{order.index(run) + 1}" if abbreviate else run for run in runs}
    if table.corner == "run":
        return short, {m: m for m in table.measures}
    lines = {m: m for _, rows in table.groups for m, _ in rows}
    return lines, short


def table_width(table: Table, measures: list[str], layout: Layout) -> float:
    names, heads = _names(table, layout.abbreviate)
    first = max([text_width(table.corner, layout.size)]
                + [text_width(n, layout.size) for n in names.values()])
    widths = [first]
    for m in measures:
        widths += _block_widths(table, m, layout, heads.get(m, m))
    total = sum(widths) + 2 * layout.sep * (len(widths) - 1)
    groups = max((text_width(heading, layout.size) + 4.0 for heading, _ in table.groups),
                 default=0.0)
    return max(total, groups)


def _fits(tables: list[Table], measures: list[str], layout: Layout) -> bool:
    # the glyph-width estimate is within about 1 % of TeX's; keep 3 % in hand
    return all(table_width(t, c, layout) <= SAFETY * layout.width - 1.0
               for t in shaped(tables, layout)
               for c in _chunks(t.measures if layout.transpose else measures,
                                layout.per_table))


def _chunks(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def choose_layout(tables: list[Table], measures: list[str], columns: int,
                  floats=None) -> Layout:
    """The first layout (module docstring) under which every table fits the width and,
    when ``floats`` (layout -> how many floats it takes) is given, the first of those
    that takes the fewest floats."""
    n = max(1, len(measures))
    targets = [("table", ONE_COLUMN)] if columns == 1 else [("table", HALF_COLUMN),
                                                            ("table*", TWO_COLUMN_SPAN)]
    steps = ((False, False, False), (True, False, False), (True, True, False),
             (False, False, True), (False, True, True), (True, True, True))
    runs = max((len(t.groups[0][1]) if t.groups else 0 for t in tables), default=0)
    wide_enough = [Layout(stacked, abbreviate, n, env, width, tight=tight)
                   for env, width in targets for stacked, abbreviate, tight in steps]
    # fewer runs than measures: the runs as columns may fit where the measures do not
    wide_enough += [Layout(stacked, abbreviate, max(runs, 1), env, width, tight=tight,
                           transpose=True)
                    for env, width in targets for stacked, abbreviate, tight in steps
                    if 1 < runs < n]
    wide_enough = [layout for layout in wide_enough if _fits(tables, measures, layout)]
    if wide_enough:
        if floats is None:
            return wide_enough[0]
        counts = [floats(layout) for layout in wide_enough]
        return wide_enough[counts.index(min(counts))]
    env, width = targets[-1]
    for k in range(n - 1, 0, -1):
        layout = Layout(True, True, k, env, width, tight=True)
        if _fits(tables, measures, layout):
            return layout
    return Layout(True, True, n, env, width, resize=True, tight=True)


# --------------------------------------------------------------------------- text


def _column_spec(table: Table, measures: list[str], layout: Layout) -> str:
    fmt = f"1.{table.digits}"
    mark = _post_mark(table)
    value = ("S[table-format=" + fmt + (", table-space-text-post={" + mark + "}"
                                         if mark else "") + "]")
    delta = ("S[table-format=+" + fmt
             + r", retain-explicit-plus, table-space-text-post={\textsuperscript{ns}}]")
    spec = ["l"]
    for _ in measures:
        spec.append(value)
        if not layout.stacked:
            spec.append("l")
        if table.with_control:
            spec.append(delta)
            if not layout.stacked:
                spec.append("l")
    return "@{}" + " ".join(spec) + "@{}"


def _per_measure(table: Table, layout: Layout) -> int:
    return (1 if layout.stacked else 2) * (2 if table.with_control else 1)


def _head(table: Table, measures: list[str], layout: Layout, heads: dict) -> list[str]:
    k = _per_measure(table, layout)
    names = [r"\multicolumn{%d}{c}{%s}" % (k, escape_latex(heads.get(m, m))) if k > 1
             else "{" + escape_latex(heads.get(m, m)) + "}" for m in measures]
    lines = [table.corner + " & " + " & ".join(names) + r" \\"]
    if table.with_control:
        rules = " ".join(r"\cmidrule(lr){%d-%d}" % (2 + i * k, 1 + (i + 1) * k)
                         for i in range(len(measures)))
        sub = []
        for _ in measures:
            sub += ["{mean}"] + ([] if layout.stacked else ["{}"])
            sub += [r"{$\Delta$}"] + ([] if layout.stacked else ["{}"])
        lines = [lines[0], rules, " & " + " & ".join(sub) + r" \\"]
    return lines


#: the superscript after a mean, per tie state (the best carries none: it is bold)
TIE_TEXT = {"tied": TIED, BORDERLINE: BORDERLINE_TIE, NOT_TESTED: UNTESTED}


def _value_cell(c: dict | None) -> str:
    if c is None or not c["value"]:
        return "{--}"
    text = (r"\bfseries " if c["best"] else "") + c["value"]
    return text + ("" if c["best"] else TIE_TEXT.get(c["tie"], ""))


def _delta_cell(c: dict | None) -> str:
    if c is None or c["delta"] in ("--", "n/c"):
        return "{" + (c["delta"] if c else "--") + "}"
    return c["delta"] + MARK_TEXT.get(c["mark"], "")


def _small(text: str, layout: Layout) -> str:
    size = r"\scriptsize " if layout.tight else r"\footnotesize "
    return "{" + size + text + "}" if text else ""


def _body_lines(table: Table, measures: list[str], layout: Layout, names: dict,
                groups) -> list[str]:
    width = 1 + len(measures) * _per_measure(table, layout)
    out = []
    for i, (heading, lines) in enumerate(groups):
        out.append(r"\midrule" if i == 0 else r"\addlinespace")
        out.append(r"\multicolumn{%d}{@{}l}{\textit{%s}} \\" % (width, escape_latex(heading)))
        for run, cells in lines:
            top, bottom = [escape_latex(names[run])], [""]
            for m in measures:
                c = cells.get(m)
                top.append(_value_cell(c))
                interval = _small(c["interval"], layout) if c else ""
                if layout.stacked:
                    bottom.append("{" + interval + "}")
                else:
                    top.append(interval)
                if table.with_control:
                    top.append(_delta_cell(c))
                    dint = _small(c.get("delta_interval", ""), layout) if c else ""
                    if layout.stacked:
                        bottom.append("{" + dint + "}")
                    else:
                        top.append(dint)
            out.append(" & ".join(top) + r" \\")
            if layout.stacked and any(b.strip("{}") for b in bottom):
                out.append(" & ".join(bottom) + r" \\")
    return out


def _split_rows(groups, stacked: bool, budget: float, line: float = LINE,
                later: float | None = None) -> list[list]:
    """The row groups packed into floats no taller than ``budget``: a slice starts a new
    float rather than being cut, unless it is taller than a float by itself (it then
    continues in the next, its heading repeated)."""
    per_run = line * (2 if stacked else 1)
    pages: list[list] = []
    current: list = []
    used = 0.0

    def room_for() -> float:
        return budget if not pages or later is None else later

    for heading, runs in groups:
        rest = list(runs)
        whole = line + 6.0 + per_run * len(rest)
        if current and used + whole > room_for() and whole <= (later or budget):
            # a slice that fits a float of its own is never cut: it starts the next one
            pages.append(current)
            current, used = [], 0.0
        while rest:
            room = int((room_for() - used - line - 6.0) // per_run)
            if room < 1 and current:
                pages.append(current)
                current, used = [], 0.0
                continue
            take = max(1, room)
            current.append((heading, rest[:take]))
            used += line + 6.0 + per_run * len(rest[:take])
            rest = rest[take:]
    if current:
        pages.append(current)
    return pages


def _note_height(note: str, width: float) -> float:
    return (text_width(note, "footnotesize") / width + 1) * NOTE_LINE


#: what the notes say when a control is chosen but no paired test is stored for an arm
NO_TEST_NOTE = ("no paired test is stored for some arms: their $\\Delta$ is the difference "
                "of the means, with no interval and no mark; to add the tests, run "
                "\\texttt{python -m harness intervals ARM\\_DIR... --control CONTROL\\_DIR} "
                "and ingest the results again")
TIE_LEGEND = {
    "tied": r"$^{\dagger}$ not significantly different from the best (paired randomization "
            r"test against the best run, Holm-corrected)",
    BORDERLINE: r"$^{\ddagger}$ within Monte Carlo error of the level even at the most "
                r"sign flips: neither tied nor separated",
    NOT_TESTED: r"\textsuperscript{nt} not tested (no query every run of the slice scored)",
}


def _legend(tables: list[Table], layout: Layout, control: str | None) -> list[str]:
    """The marks' legend, once for every table of the export."""
    parts = []
    runs = {run for t in tables for _, lines in t.groups for run, _ in lines}
    if len(runs) > 1:
        used = set().union(*(_marks_used(t) for t in tables)) if tables else set()
        ties = "".join("; " + TIE_LEGEND[k] for k in ("tied", BORDERLINE, NOT_TESTED)
                       if k in used)
        parts.append(r"Bold: the best mean per measure and slice" + ties + ".")
    if any(t.with_control for t in tables):
        cells = [c for t in tables for _, lines in t.groups for _, cells in lines
                 for c in cells.values()]
        used = sorted({c["mark"] for c in cells if c.get("mark")})
        marks = "; ".join(MARK_LEGEND[m] for m in used)
        untested = any(c.get("delta") not in (None, "--", "n/c") and not c.get("mark")
                       for c in cells)
        parts.append(r"$\Delta$: paired difference from the control "
                     + f"({breakable(control or '')})"
                     + (" with its interval" if used else "")
                     + (f" ({escape_latex(marks)})" if marks else "")
                     + "; n/c: measured differently from the control (not comparable)"
                     + ("; " + NO_TEST_NOTE if untested else "") + ".")
    if layout.abbreviate:
        names = {}
        for t in tables:
            names.update(_names(t, True)[0])
        parts.append("Runs: " + "; ".join(f"{short} = {breakable(run)}"
                                           for run, short in sorted(
                                               names.items(), key=lambda kv: int(kv[1][1:]))
                                           ) + ".")
    return parts


def _pages(table: Table, layout: Layout, caption: str, note: str) -> list[list]:
    """The table's row groups split into floats that fit a page: the first with the
    caption and the notes, the others with their one-line caption and pointer."""
    head_height = layout.line * (3 if table.with_control else 1) + 12.0
    caption_height = _note_height(caption, layout.width) * LINE / NOTE_LINE
    first = FLOAT_HEIGHT - head_height - caption_height - _note_height(note, layout.width)
    later = FLOAT_HEIGHT - head_height - 2 * LINE - 2 * NOTE_LINE
    floor = 4 * layout.line
    return _split_rows(table.groups, layout.stacked, max(first, floor), layout.line,
                       later=max(later, floor))


def render_tables(export, measures: list[str], caption: str, label: str, source: str,
                  columns: int = 1) -> Rendered:
    """The export's LaTeX: the packages comment, then the table (see the module)."""
    tables = tables_of(export, measures)
    control = export.labels.get(export.control) if export.control else None

    def notes(layout: Layout) -> str:
        legend = " ".join(_legend(tables, layout, control))
        return breakable(source) + (" " + legend if legend else "")

    layout = choose_layout(tables, measures, columns, lambda layout: sum(
        len(_pages(t, layout, caption, notes(layout))) for t in shaped(tables, layout)))
    note = notes(layout)
    packages = list(PACKAGES) + (["graphicx"] if layout.resize else [])
    stamp = ("% publishable (tier A only)" if export.view == "publishable"
             else "% INTERNAL: not for publication")
    out = [stamp, "% \\usepackage{" + ",".join(packages) + "}",
           "% provenance: the .provenance.json sidecar beside this file"]
    warnings = []
    if layout.resize:
        warnings.append(f"the LaTeX table is wider than {layout.width:g} pt even with one "
                        "measure per table: it is scaled down with \\resizebox")
    back = r"Notes as in Table~\ref{" + escape_latex(label) + "}."
    count = 0
    for index, table in enumerate(shaped(tables, layout)):
        names, heads = _names(table, layout.abbreviate)
        pages = _pages(table, layout, caption, note)
        first = True
        for chunk in _chunks(table.measures, layout.per_table):
            for groups in pages:
                count += 1
                if count == 1:
                    cap = caption if table.title is None else \
                        f"{caption.rstrip().rstrip('.')}. Runs measured as {table.title}."
                else:
                    # a comparability group is named once, on its first float
                    new_group = table.title is not None and index > 0 and first
                    cap = (r"Continued from Table~\ref{" + escape_latex(label) + "}"
                           + (f": runs measured as {breakable(table.title)}"
                              if new_group else "") + ".")
                out += _float(table, chunk, layout, names, heads, groups, cap,
                              label if count == 1 else f"{label}-{count}",
                              note if count == 1 else back, raw_caption=count > 1)
                first = False
                if count % FLOATS_PER_PAGE_RUN == 0:
                    # LaTeX holds at most 18 floats waiting for a place: let them out
                    out.append(r"\clearpage")
    return Rendered("\n".join(out) + "\n", warnings)


def _float(table: Table, measures, layout: Layout, names, heads, groups, caption: str,
           label: str,
           note: str, raw_caption: bool = False) -> list[str]:
    tabular = [r"\begin{tabular}{" + _column_spec(table, measures, layout) + "}", r"\toprule",
               *_head(table, measures, layout, heads),
               *_body_lines(table, measures, layout, names, groups),
               r"\bottomrule", r"\end{tabular}"]
    if layout.resize:
        tabular = [r"\resizebox{\linewidth}{!}{%", *tabular, "}"]
    sizing = [r"\footnotesize", r"\setlength{\tabcolsep}{%gpt}" % TIGHT_TABCOLSEP] \
        if layout.tight else [r"\small"]
    return [r"\begin{%s}[tbp]" % layout.env, r"\centering", *sizing,
            r"\sisetup{detect-weight=true, detect-inline-weight=math, group-digits=false}",
            r"\caption{" + (caption if raw_caption else breakable(caption)) + "}",
            r"\label{" + escape_latex(label) + "}",
            *tabular, r"\par\smallskip",
            r"{\footnotesize\raggedright " + note + r"\par}", r"\end{%s}" % layout.env]
