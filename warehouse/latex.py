"""The paste-ready LaTeX of an export: tables that fit the page they are pasted into.

An export becomes one ``table`` per corpus (and per comparability group: runs that measured
differently never share a column), the query classes as row groups (``all`` first), one
line per run, per measure the mean aligned on its decimal point (siunitx ``S`` columns) with
its interval and, with a control, the delta against it with its interval and mark.  The best
mean per measure and class is bold; an arm statistically tied with the best carries a dagger
(when the export holds that test).

The layout is chosen to fit the text width of an ``article`` (345 pt) or, with
``columns=2``, one column of a two-column ``article`` (229.5 pt; 241-pt columns fit too).
Widths are estimated from Computer Modern's glyph widths (:func:`harness.core.latex.text_width`);
the layouts are tried in order and the first that fits is used:

1. intervals beside their means;
2. intervals on a second line under their means;
3. the same with the runs abbreviated (R1, R2, ...) and a legend under the table;
4. (two columns only) the three above as a ``table*`` across both columns (469 pt);
5. the measures split over several tables;
6. the last resort: the table scaled down with ``\\resizebox`` (said on stderr).

Tables taller than a page are split into continued tables.  The first lines are LaTeX
comments naming the packages the preamble needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.core.latex import breakable, escape_latex, text_width
from warehouse.best import best_of

#: text widths (pt) of the standard ``article`` at 10 pt: one column, one column of two, and
#: the full width of a two-column page (for ``table*``)
ONE_COLUMN, HALF_COLUMN, TWO_COLUMN_SPAN = 345.0, 229.5, 469.0
#: the text height (pt) of ``article`` at 10 pt; a float is kept well inside it
TEXT_HEIGHT = 550.0
FLOAT_HEIGHT = 0.85 * TEXT_HEIGHT
#: the share of the width a table may fill by the estimate
SAFETY = 0.97
#: LaTeX's default ``\\tabcolsep``
TABCOLSEP = 6.0
#: decimals of every mean, bound and delta in a LaTeX table
DIGITS = 3
#: line heights (pt) at ``\\small`` (the table body) and ``\\footnotesize`` (notes)
LINE, NOTE_LINE = 11.5, 9.5
#: the marks of a delta as superscripts, and what they mean (the legend)
MARK_TEXT = {"*": "$^{*}$", "n.s.": r"\textsuperscript{ns}", "floor": r"\textsuperscript{f{}l}"}
MARK_LEGEND = {"*": "* significant after Holm's correction", "n.s.": "ns not significant",
               "floor": "fl cannot be significant with this many queries (its floor)"}
TIED = r"$^{\dagger}$"
PACKAGES = ("booktabs", "siunitx")
#: after this many floats of one export, a ``\\clearpage`` places them (LaTeX's queue of
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


@dataclass
class Table:
    """One table's content: row groups of (class, n text, [(run, {measure: cells})])."""

    corpus: str
    measures: list[str]
    groups: list[tuple[str, str, list[tuple[str, dict]]]]
    with_control: bool
    ties_tested: bool
    notes: list[str] = field(default_factory=list)


@dataclass
class Rendered:
    text: str
    #: what the CLI says on stderr (a table scaled down)
    warnings: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------- cells


def _num(value, signed: bool = False) -> str:
    text = f"{float(value):+.{DIGITS}f}" if signed else f"{float(value):.{DIGITS}f}"
    return text.replace("-0.000", "+0.000") if signed else text


def _missing(value) -> bool:
    try:
        return value is None or math.isnan(float(value))
    except (TypeError, ValueError):
        return True


def _interval(lower, upper, signed: bool = False) -> str:
    if _missing(lower) or _missing(upper):
        return ""
    return f"[{_num(lower, signed)}, {_num(upper, signed)}]"


def _cells(r: dict, with_control: bool) -> dict:
    """The texts of one run x class x measure: mean, interval, delta, delta interval, mark,
    and whether it is the best or tied with it (unescaped; numbers as plain text)."""
    out = {"value": "" if _missing(r["value"]) else _num(r["value"]),
           "interval": _interval(r.get("lower"), r.get("upper")),
           "best": bool(r.get("best", False)), "tied": bool(r.get("tied", False))}
    if with_control:
        mark = r.get("mark") or ""
        if mark == "control":
            out.update(delta="--", delta_interval="", mark="")
        elif mark == "not comparable":
            out.update(delta="n/c", delta_interval="", mark="")
        elif _missing(r.get("delta")):
            out.update(delta="--", delta_interval="", mark="")
        else:
            out.update(delta=_num(r["delta"], signed=True),
                       delta_interval=_interval(r.get("delta_lower"), r.get("delta_upper"), True),
                       mark=mark if mark in MARK_TEXT else "")
    return out


def mark_best(rows):
    """``rows`` (the export's long rows) with ``best``: the highest mean per table, class and
    measure, when at least two runs are there (every measure here is higher-is-better)."""
    return rows.assign(best=best_of(rows))


def tables_of(export, measures: list[str]) -> list[Table]:
    """One :class:`Table` per corpus (and comparability group), in the export's order."""
    rows = export.rows[export.rows["measure"].isin(measures)]
    rows = mark_best(rows)
    with_control = export.control is not None
    ties_tested = "tied" in rows.columns
    out = []
    # runs that measured differently (granularity, relevance policy) get tables of their own
    group_keys = ["corpus", "group"] if "group" in rows.columns and \
        rows["group"].nunique() > 1 else ["corpus"]
    order = list(dict.fromkeys(map(tuple, rows[group_keys].itertuples(index=False))))
    order.sort(key=lambda k: ("+" in k[0], k))
    for key in order:
        part = rows[(rows[group_keys].apply(tuple, axis=1) == key)]
        classes = list(dict.fromkeys(part["class"]))
        shown = [m for m in measures if m in set(part["measure"])]
        groups = []
        for cls in classes:
            sub = part[part["class"] == cls]
            ns = sorted({int(n) for n in sub["n"]})
            n_text = str(ns[0]) if len(ns) == 1 else f"{ns[0]}--{ns[-1]}"
            lines: dict[str, dict] = {}
            for r in sub.to_dict("records"):
                lines.setdefault(r["run"], {})[r["measure"]] = _cells(r, with_control)
            groups.append((cls, n_text, list(lines.items())))
        corpus = key[0] if len(key) == 1 else f"{key[0]} ({key[1]})"
        out.append(Table(corpus, shown, groups, with_control, ties_tested))
    return out


# --------------------------------------------------------------------------- widths


def _block_widths(table: Table, measure: str, stacked: bool) -> list[float]:
    """Widths (pt) of a measure's columns: mean [, interval] [, delta [, delta interval]]."""
    cells = [line[measure] for _, _, lines in table.groups for _, line in lines
             if measure in line]
    post = text_width("x", "scriptsize") if table.ties_tested else 0.0
    value = text_width("0." + "0" * DIGITS, "small", bold=True) + post + 1.0
    interval = max((text_width(c["interval"], "footnotesize") for c in cells), default=0.0)
    widths = [max(value, interval) if stacked else value] + ([] if stacked else [interval])
    if table.with_control:
        delta = text_width("+0." + "0" * DIGITS, "small") + text_width("ns", "scriptsize") + 1.0
        delta = max(delta, text_width("n/c", "small"))
        dint = max((text_width(c.get("delta_interval", ""), "footnotesize") for c in cells),
                   default=0.0)
        widths += [max(delta, dint)] if stacked else [delta, dint]
    # the measure's name spans the block
    head = text_width(measure, "small") + 2.0
    inner = sum(widths) + 2 * TABCOLSEP * (len(widths) - 1)
    if head > inner:
        widths[0] += head - inner
    return widths


def _run_names(table: Table, abbreviate: bool) -> dict[str, str]:
    runs = list(dict.fromkeys(run for _, _, lines in table.groups for run, _ in lines))
    return {run: f"R{i}" if abbreviate else run for i, run in enumerate(runs, 1)}


def table_width(table: Table, measures: list[str], layout: Layout) -> float:
    names = _run_names(table, layout.abbreviate)
    first = max([text_width("run", "small")] + [text_width(n, "small") for n in names.values()])
    widths = [first]
    for m in measures:
        widths += _block_widths(table, m, layout.stacked)
    total = sum(widths) + 2 * TABCOLSEP * (len(widths) - 1)
    groups = max((text_width(f"{cls} (n = {n})", "small", bold=False) + 4.0
                  for cls, n, _ in table.groups), default=0.0)
    return max(total, groups)


def _fits(tables: list[Table], measures: list[str], layout: Layout) -> bool:
    chunks = _chunks(measures, layout.per_table)
    # the glyph-width estimate is within about 1 % of TeX's; keep 3 % in hand
    return all(table_width(t, c, layout) <= SAFETY * layout.width - 1.0
               for t in tables for c in chunks)


def _chunks(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)] or [[]]


def choose_layout(tables: list[Table], measures: list[str], columns: int) -> Layout:
    """The first layout (module docstring) under which every table fits."""
    n = max(1, len(measures))
    targets = [("table", ONE_COLUMN)] if columns == 1 else [("table", HALF_COLUMN),
                                                            ("table*", TWO_COLUMN_SPAN)]
    for env, width in targets:
        for stacked, abbreviate in ((False, False), (True, False), (True, True)):
            layout = Layout(stacked, abbreviate, n, env, width)
            if _fits(tables, measures, layout):
                return layout
    env, width = targets[-1]
    for k in range(n - 1, 0, -1):
        layout = Layout(True, True, k, env, width)
        if _fits(tables, measures, layout):
            return layout
    return Layout(True, True, n, env, width, resize=True)


# --------------------------------------------------------------------------- text


def _column_spec(table: Table, measures: list[str], layout: Layout) -> str:
    value = ("S[table-format=1.3" + (r", table-space-text-post={$^{\dagger}$}"
                                     if table.ties_tested else "") + "]")
    delta = r"S[table-format=+1.3, retain-explicit-plus, table-space-text-post={\textsuperscript{ns}}]"
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


def _head(table: Table, measures: list[str], layout: Layout) -> list[str]:
    k = _per_measure(table, layout)
    names = [r"\multicolumn{%d}{c}{%s}" % (k, escape_latex(m)) if k > 1
             else "{" + escape_latex(m) + "}" for m in measures]
    lines = ["run & " + " & ".join(names) + r" \\"]
    if table.with_control:
        rules = " ".join(r"\cmidrule(lr){%d-%d}" % (2 + i * k, 1 + (i + 1) * k)
                         for i in range(len(measures)))
        sub = []
        for _ in measures:
            sub += ["{mean}"] + ([] if layout.stacked else ["{}"])
            sub += [r"{$\Delta$}"] + ([] if layout.stacked else ["{}"])
        lines = [lines[0], rules, " & " + " & ".join(sub) + r" \\"]
    return lines


def _value_cell(c: dict | None) -> str:
    if c is None or not c["value"]:
        return "{--}"
    text = (r"\bfseries " if c["best"] else "") + c["value"]
    return text + (TIED if c["tied"] and not c["best"] else "")


def _delta_cell(c: dict | None) -> str:
    if c is None or c["delta"] in ("--", "n/c"):
        return "{" + (c["delta"] if c else "--") + "}"
    return c["delta"] + MARK_TEXT.get(c["mark"], "")


def _small(text: str) -> str:
    return r"{\footnotesize " + text + "}" if text else ""


def _body_lines(table: Table, measures: list[str], layout: Layout, names: dict,
                groups) -> list[str]:
    width = 1 + len(measures) * _per_measure(table, layout)
    out = []
    for i, (cls, n_text, lines) in enumerate(groups):
        out.append(r"\midrule" if i == 0 else r"\addlinespace")
        out.append(r"\multicolumn{%d}{@{}l}{\textit{%s} ($n = %s$)} \\"
                   % (width, escape_latex(cls), n_text))
        for run, cells in lines:
            top, bottom = [escape_latex(names[run])], [""]
            for m in measures:
                c = cells.get(m)
                top.append(_value_cell(c))
                interval = _small(c["interval"]) if c else ""
                if layout.stacked:
                    bottom.append("{" + interval + "}")
                else:
                    top.append(interval)
                if table.with_control:
                    top.append(_delta_cell(c))
                    dint = _small(c.get("delta_interval", "")) if c else ""
                    if layout.stacked:
                        bottom.append("{" + dint + "}")
                    else:
                        top.append(dint)
            out.append(" & ".join(top) + r" \\")
            if layout.stacked and any(b.strip("{}") for b in bottom):
                out.append(" & ".join(bottom) + r" \\")
    return out


def _body_height(groups, stacked: bool) -> float:
    lines = sum(1 + len(runs) * (2 if stacked else 1) for _, _, runs in groups)
    return lines * LINE + 6.0 * len(groups)


def _split_rows(groups, stacked: bool, budget: float) -> list[list]:
    """The row groups packed into tables no taller than ``budget`` (a class may continue
    in the next table, its header repeated)."""
    per_run = LINE * (2 if stacked else 1)
    pages, current, used = [], [], 0.0
    for cls, n_text, runs in groups:
        rest = list(runs)
        while rest:
            room = int((budget - used - LINE - 6.0) // per_run)
            if room < 1 and current:
                pages.append(current)
                current, used = [], 0.0
                continue
            take = max(1, room)
            current.append((cls, n_text, rest[:take]))
            used += LINE + 6.0 + per_run * len(rest[:take])
            rest = rest[take:]
    if current:
        pages.append(current)
    return pages


def _note_height(note: str, width: float) -> float:
    return (text_width(note, "footnotesize") / width + 1) * NOTE_LINE


def _legend(table: Table, names: dict, layout: Layout, control: str | None) -> list[str]:
    parts = []
    if len(names) > 1:
        tied = (r"; $^{\dagger}$ not significantly different from the best (paired "
                r"randomization test against the best run, Holm-corrected)"
                if table.ties_tested else "")
        parts.append(r"Bold: the best mean per measure and class" + tied + ".")
    if table.with_control:
        used = sorted({c["mark"] for _, _, lines in table.groups for _, cells in lines
                       for c in cells.values() if c.get("mark")})
        marks = "; ".join(MARK_LEGEND[m] for m in used)
        parts.append(r"$\Delta$: paired difference from the control "
                     + f"({breakable(control or '')})" + " with its interval"
                     + (f" ({escape_latex(marks)})" if marks else "") + "; n/c: measured "
                     "differently from the control (not comparable).")
    if layout.abbreviate:
        parts.append("Runs: " + "; ".join(f"{short} = {breakable(run)}"
                                           for run, short in names.items()) + ".")
    return parts


def render_tables(export, measures: list[str], caption: str, label: str, source: str,
                  columns: int = 1) -> Rendered:
    """The export's LaTeX: the packages comment, then every table (see the module)."""
    tables = tables_of(export, measures)
    layout = choose_layout(tables, measures, columns)
    control = export.labels.get(export.control) if export.control else None
    packages = list(PACKAGES) + (["graphicx"] if layout.resize else [])
    stamp = ("% publishable (tier A only)" if export.view == "publishable"
             else "% INTERNAL: not for publication")
    out = [stamp, "% \\usepackage{" + ",".join(packages) + "}",
           "% provenance: the .provenance.json sidecar beside this file"]
    warnings = []
    if layout.resize:
        warnings.append(f"the LaTeX table is wider than {layout.width:g} pt even with one "
                        "measure per table: it is scaled down with \\resizebox")
    count = 0
    for table in tables:
        names = _run_names(table, layout.abbreviate)
        legend = " ".join(_legend(table, names, layout, control))
        note = breakable(source) + (" " + legend if legend else "")
        head_height = LINE * (3 if table.with_control else 1) + 12.0
        caption_height = _note_height(caption, layout.width) * LINE / NOTE_LINE
        budget = FLOAT_HEIGHT - head_height - caption_height - _note_height(note, layout.width)
        pages = _split_rows(table.groups, layout.stacked, max(budget, 4 * LINE))
        first = True
        for chunk in _chunks(table.measures, layout.per_table):
            for groups in pages:
                count += 1
                cap = caption if len(tables) == 1 else \
                    f"{caption.rstrip().rstrip('.')}. Corpus {table.corpus}."
                out += _float(table, chunk, layout, names, groups,
                              cap if first else f"{cap} (continued)",
                              label if count == 1 else f"{label}-{count}", note)
                first = False
                if count % FLOATS_PER_PAGE_RUN == 0:
                    # LaTeX holds at most 18 floats waiting for a place: let them out
                    out.append(r"\clearpage")
    return Rendered("\n".join(out) + "\n", warnings)


def _float(table: Table, measures, layout: Layout, names, groups, caption: str, label: str,
           note: str) -> list[str]:
    tabular = [r"\begin{tabular}{" + _column_spec(table, measures, layout) + "}", r"\toprule",
               *_head(table, measures, layout),
               *_body_lines(table, measures, layout, names, groups),
               r"\bottomrule", r"\end{tabular}"]
    if layout.resize:
        tabular = [r"\resizebox{\linewidth}{!}{%", *tabular, "}"]
    return [r"\begin{%s}[tbp]" % layout.env, r"\centering", r"\small",
            r"\sisetup{detect-weight=true, detect-inline-weight=math}",
            r"\caption{" + breakable(caption) + "}", r"\label{" + escape_latex(label) + "}",
            *tabular, r"\par\smallskip",
            r"{\footnotesize\raggedright " + note + r"\par}", r"\end{%s}" % layout.env]
