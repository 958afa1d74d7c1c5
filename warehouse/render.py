"""Rendering an export table safely: CSV, Markdown, LaTeX, Parquet, each with its provenance.

Cell escaping is per format: CSV text cells that a spreadsheet would run as a formula
(leading ``=``, ``+``, ``-``, ``@``, tab or carriage return; OWASP's CSV-injection advice)
get a leading apostrophe; LaTeX's special characters are escaped; Markdown cells have HTML
escaped to entities and inline markup (pipes, backticks, emphasis, links) backslash-escaped,
newlines flattened.  Numbers are written as numbers, never as text.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Callable

from harness.core.canonical import canonical_float
from harness.core.markdown import md_escape
from warehouse.best import BORDERLINE, NOT_TESTED, TIED, best_of
from warehouse.cells import interval_precision, missing

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

def neutralise_csv(text: str) -> str:
    """A text cell no spreadsheet will evaluate."""
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def escape_md(text: str) -> str:
    """A cell or provenance line as literal Markdown: HTML escaped to entities, inline markup
    backslash-escaped, line breaks flattened (:func:`harness.core.markdown.md_escape`)."""
    return md_escape(text)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _plain(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return canonical_float(value)
    return str(value)


def provenance_lines(provenance: dict) -> list[str]:
    """The provenance as short human-readable lines (the same facts as the JSON sidecar)."""
    lines = [INTERNAL_STAMP] if provenance["view"] != "publishable" else []
    lines += [f"view: {provenance['view']}; rows: {provenance['rows']} "
             f"({provenance['values']} values); "
             f"warehouse schema version: {provenance['schema_version']}"]
    filters = {k: v for k, v in provenance["filters"].items() if v}
    if filters:
        lines.append("filters: " + "; ".join(f"{k}={','.join(v)}" for k, v in sorted(filters.items())))
    for run in provenance["runs"]:
        embedding = run["embedding_model"] or "none recorded"
        lines.append(
            f"run {run['run_id']} ({run['control_name']}): metric engine "
            f"{run['metric_engine']} {run['metric_engine_version']}; embedding model "
            f"{embedding}; code revision {run['code_revision'] or 'unknown'}")
    for c in provenance["corpora"]:
        lines.append(f"corpus {c['name']} version {c['version'] or 'unversioned'}: licence "
                     f"{c['licence'] or 'unknown'}, tier {c['tier']}, sha256 {c['sha256'] or '-'}")
    return lines


#: the stamp every internal export carries (first line, caption, or its ``view`` column)
INTERNAL_STAMP = "INTERNAL: not for publication"


# --------------------------------------------------------------------------- cell text


def fmt_value(value, digits: int = 4) -> str:
    return "–" if missing(value) else f"{float(value):.{digits}f}"


def fmt_signed(value, digits: int = 4) -> str:
    if missing(value):
        return "–"
    text = f"{float(value):+.{digits}f}"
    return f"{0:+.{digits}f}" if text == f"{-0.0:+.{digits}f}" else text


def fmt_interval(value, lower, upper, digits: int = 4, interval_digits: int | None = None) -> str:
    """``0.1234 [0.11, 0.14]``: the value to ``digits`` decimals, the bounds to
    ``interval_digits`` (default: :func:`interval_precision` of this one interval)."""
    if missing(value):
        return "–"
    if missing(lower) or missing(upper):
        return fmt_value(value, digits)
    if interval_digits is None:
        interval_digits = interval_precision([(lower, upper)])
    return (f"{fmt_value(value, digits)} [{fmt_value(lower, interval_digits)}, "
            f"{fmt_value(upper, interval_digits)}]")


def fmt_delta(delta, lower=None, upper=None, mark: str = "", digits: int = 4) -> str:
    """``+0.0123 [+0.0012, +0.0234] *``: delta, its paired interval and its mark."""
    if missing(delta):
        return "–"
    text = fmt_signed(delta, digits)
    if not (missing(lower) or missing(upper)):
        text += f" [{fmt_signed(lower, digits)}, {fmt_signed(upper, digits)}]"
    return f"{text} {mark}" if mark else text


def not_comparable_text(because) -> str:
    """``not comparable (first reason, +k more)``."""
    notes = [n for n in str(because or "").split("; ") if n]
    if not notes:
        return "not comparable"
    more = f", +{len(notes) - 1} more" if len(notes) > 1 else ""
    return f"not comparable ({notes[0]}{more})"


# --------------------------------------------------------------------------- presentation


def presentation(export, digits: int = 4, interval_digits: int | None = None,
                 delta_digits: int = 4):
    """The table as it is read: row groups ``(corpus, class)`` (pooled corpora last, the
    ``all`` class first), one line per run, per measure a ``value [lower, upper]`` cell
    and, with a control, a ``Δ measure`` cell (delta [interval] mark).

    Returns ``(columns, groups)``, ``groups``: ``[((corpus, class), [(run, n, cells)])]``."""
    rows = export.rows
    measures = list(dict.fromkeys(rows["measure"]))
    with_control = export.control is not None
    # one interval precision per corpus, as each corpus is one table on the Results page
    precision = {corpus: interval_digits if interval_digits is not None else
                 interval_precision(zip(part["lower"], part["upper"]))
                 for corpus, part in rows.groupby("corpus", sort=False)}
    columns = []
    for m in measures:
        columns.append(m)
        if with_control:
            columns.append(f"{m} Δ")
    marks = _best_marks(rows)
    groups: dict = {}
    # runs that measured differently (granularity, relevance policy) never share a column
    split = "group" in rows.columns and rows["group"].nunique() > 1
    for i, r in zip(rows.index, rows.to_dict("records")):
        r["_i"] = i
        corpus = f"{r['corpus']} ({r['group']})" if split else r["corpus"]
        group = groups.setdefault((corpus, r["class"]), {})
        line = group.setdefault(r["run"], {"n": r["n"]})
        line[r["measure"]] = fmt_interval(r["value"], r["lower"], r["upper"], digits,
                                          precision[r["corpus"]]) + marks.get(r["_i"], "")
        if with_control:
            if r["mark"] == "control":
                cell = "control"
            elif r["mark"] == "not comparable":
                cell = not_comparable_text(r["not_comparable_because"])
            else:
                cell = fmt_delta(r["delta"], r["delta_lower"], r["delta_upper"], r["mark"],
                                 delta_digits)
            line[f"{r['measure']} Δ"] = cell
    order = sorted(groups, key=lambda k: ("+" in k[0], k[0], k[1] != "all", k[1]))
    out = [(key, [(run, line["n"], [line.get(c, "–") for c in columns])
                  for run, line in groups[key].items()]) for key in order]
    return columns, out


#: what a cell shows after the best mean, after a mean tied with the best, after one whose
#: tie test is within Monte Carlo error, and in a slice whose test did not run (the Results
#: page shows the same: :data:`dashboard.tables.BEST_MARK`, ``TIED_MARK`` ...)
BEST_MARK, TIED_MARK, BORDERLINE_MARK, UNTESTED_MARK = " ★", " †", " ‡", " (not tested)"
TIE_MARKS = {TIED: TIED_MARK, BORDERLINE: BORDERLINE_MARK, NOT_TESTED: UNTESTED_MARK}
#: the legend of those marks, for a page or a Markdown table
TIE_LEGEND = {
    "best": "★ the best mean per measure and slice",
    TIED: "† not significantly different from the best (paired randomization test against "
          "the best run, Holm-corrected, alpha 0.05)",
    BORDERLINE: "‡ within Monte Carlo error of alpha even at the most sign flips: neither "
                "tied nor separated",
    NOT_TESTED: "not tested: no query every run of the slice scored",
}
#: what a table says when a control is chosen but some arms have no stored paired test
NO_TEST_NOTE = ("Δ without an interval or mark: no paired test is stored for that arm, so it "
                "is only the difference of the means; add the tests with "
                "`python -m harness intervals ARM_DIR... --control CONTROL_DIR` and ingest "
                "the results again")


def _best_marks(rows) -> dict:
    """Row index -> mark, when the rows carry the tie test (``tied``, ``tie``): the best
    mean per corpus x group x class x measure (two runs or more) and what the tie test says
    of each other run (:data:`TIE_MARKS`)."""
    if "tied" not in rows.columns or rows.empty:
        return {}
    best = best_of(rows)
    states = rows["tie"] if "tie" in rows.columns else \
        rows["tied"].map(lambda t: TIED if t else "")
    return {i: BEST_MARK if b else TIE_MARKS.get(t, "")
            for i, b, t in zip(rows.index, best, states)}


def dropped_note(rows) -> str:
    """What a table whose runs dropped queries says beside its means ('' when none did):
    a query with no relevant document is left out of every mean, where ``trec_eval -c``
    would score it 0 (README: scoring semantics)."""
    dropped = "dropped" if "dropped" in rows.columns else "queries_dropped_unjudgeable"
    cls = "class" if "class" in rows.columns else "query_class"
    if dropped not in rows.columns or rows.empty:
        return ""
    whole = rows[(rows[cls] == "all") & ~rows["corpus"].str.contains("+", regex=False)]
    counts = {c: int(n) for c, n in whole.groupby("corpus", sort=True)[dropped].max().items()
              if n > 0}
    if not counts:
        return ""
    listed = ", ".join(f"{n} of {c}" for c, n in counts.items())
    return (f"Means are over the queries with a relevant document: {listed} "
            f"{'has' if sum(counts.values()) == 1 else 'have'} none and "
            f"{'is' if sum(counts.values()) == 1 else 'are'} left out (trec_eval -c would "
            "score them 0).")


def legend_lines(rows, with_control: bool) -> list[str]:
    """What the marks of a table mean, for the marks it shows; and, with a control, what a
    delta without a stored test is and the command that adds the tests."""
    out = [dropped_note(rows)] if dropped_note(rows) else []
    marks = set(_best_marks(rows).values())
    if BEST_MARK in marks:
        states = [k for k, mark in TIE_MARKS.items() if mark in marks]
        out.append("; ".join([TIE_LEGEND["best"], *(TIE_LEGEND[k] for k in states)]) + ".")
    if with_control and "mark" in rows.columns:
        bare = (rows["mark"] == "") & rows["delta"].notna()
        if bare.any():
            out.append(NO_TEST_NOTE + ".")
    return out


def _records(table) -> tuple[list[str], list[list]]:
    columns = [str(c) for c in table.columns]
    rows = [[None if missing(v) else (v.item() if hasattr(v, "item") else v) for v in row]
            for row in table.itertuples(index=False, name=None)]
    return columns, rows


def render_csv(export) -> str:
    """The data rows only, so ``pandas.read_csv`` reads exactly them; the provenance goes to
    the ``FILE.provenance.json`` sidecar."""
    columns, rows = _records(export.table)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([neutralise_csv(c) for c in columns])
    for row in rows:
        writer.writerow([_plain(v) if _is_number(v) or v is None else neutralise_csv(str(v))
                         for v in row])
    return out.getvalue()


def _md_table(head, groups) -> list[str]:
    lines = ["| " + " | ".join(escape_md(c) for c in head) + " |", "|" + "---|" * len(head)]
    for (corpus, cls), members in groups:
        for run, n, cells in members:
            lines.append("| " + " | ".join(escape_md(str(v)) for v in
                                           [run, corpus, cls, n, *cells]) + " |")
    return lines


def render_md(export) -> str:
    """The table as the Results page shows it (same cells), its provenance beneath; an
    internal export starts with its stamp."""
    provenance = export.provenance
    columns, groups = presentation(export)
    head = ["run", "corpus", "class", "n", *columns]
    lines = [f"**{INTERNAL_STAMP}**", ""] if export.view != "publishable" else []
    rows = export.rows
    if "group" in rows.columns and rows["group"].nunique() > 1:
        # one table per comparability group: their numbers never share a column
        from types import SimpleNamespace

        for label in dict.fromkeys(rows["group"]):
            part = SimpleNamespace(rows=rows[rows["group"] == label], control=export.control)
            part_columns, part_groups = presentation(part)
            lines += [f"**{escape_md(label)}**", ""]
            lines += _md_table(["run", "corpus", "class", "n", *part_columns], part_groups)
            lines.append("")
        lines.pop()
    else:
        lines += _md_table(head, groups)
    legend = legend_lines(rows, export.control is not None)
    if legend:
        lines += ["", *legend]
    lines += ["", "**Provenance**", ""]
    lines += [f"- {escape_md(line)}" for line in provenance_lines(provenance)]
    return "\n".join(lines) + "\n"


#: the measures a table shows when none are chosen (the dashboard's default selection too)
DEFAULT_MEASURES = ("nDCG@10", "R@10", "MRR@10", "Success@1")


def source_note(provenance: dict) -> str:
    """One line: corpora (tier, licence, query count), metric engine and version."""
    counts = provenance.get("query_counts", {})
    corpora = ", ".join(
        f"{c['name']} (tier {c['tier']}, {c['licence'] or 'licence unknown'}"
        + (f", {counts[c['name']]} queries" if c["name"] in counts else "") + ")"
        for c in provenance["corpora"])
    engines = sorted({f"{r['metric_engine']} {r['metric_engine_version']}"
                      for r in provenance["runs"]})
    methods = provenance.get("interval_methods") or []
    note = f"Source: {corpora}; metric engine {', '.join(engines)}"
    if methods:
        note += f"; intervals: {', '.join(methods)}"
    return note + "."


def latex_measures(export) -> tuple[list[str], bool]:
    """The measures a LaTeX table shows: those chosen, else the default set that the exported
    rows hold (``DEFAULT_MEASURES``; all of them when none of the defaults is there).  The
    flag says whether the default set was used (the caption then names it)."""
    held = list(dict.fromkeys(export.rows["measure"]))
    if export.provenance["filters"].get("measures"):
        return held, False
    chosen = [m for m in DEFAULT_MEASURES if m in held]
    return (chosen or held[:len(DEFAULT_MEASURES)]), True


def latex_caption(export, measures: list[str], default: bool) -> str:
    """The caption: ``--caption`` (or "Retrieval results on CORPORA."), the default measure
    set named when it was used, the internal stamp first on an internal export."""
    corpora = sorted(set(export.rows["corpus"]))
    caption = export.caption or f"Retrieval results on {', '.join(corpora)}."
    if default:
        caption = (caption.rstrip().rstrip(".")
                   + f". Measures: {', '.join(measures)} (the default set).")
    if export.view != "publishable":
        caption = f"{INTERNAL_STAMP}. {caption}"
    return caption


def latex_note(export) -> str:
    """The line under a LaTeX table: the interval's level, then :func:`source_note`."""
    levels = sorted({float(c) for c in export.rows["confidence"] if not missing(c)})
    level = ("Means with their " + "/".join(f"{100 * c:g}%" for c in levels)
             + " intervals. ") if levels else ""
    dropped = dropped_note(export.rows)
    return level + source_note(export.provenance) + (" " + dropped if dropped else "")


def latex_render(export):
    """:class:`warehouse.latex.Rendered`: the text and what to say on stderr."""
    from warehouse.latex import render_tables

    measures, default = latex_measures(export)
    return render_tables(export, measures, latex_caption(export, measures, default),
                         export.label or "tab:results", latex_note(export),
                         getattr(export, "columns", 1))


def render_latex(export) -> str:
    """Paste-ready tables (:mod:`warehouse.latex`): the first lines name the packages
    (``booktabs``, ``siunitx``), one table per corpus fitting the text width, the classes as
    row groups, means aligned on the decimal point with their intervals, the best in bold;
    an internal export is stamped in its first line and its caption."""
    return latex_render(export).text


def render_parquet(export) -> bytes:
    """Parquet with the provenance JSON in the file's key-value metadata ("provenance")."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.Table.from_pandas(export.table, preserve_index=False)
    meta = dict(arrow.schema.metadata or {})
    meta.pop(b"pandas", None)
    meta[b"provenance"] = json.dumps(export.provenance, sort_keys=True).encode("utf-8")
    arrow = arrow.replace_schema_metadata(meta)
    sink = io.BytesIO()
    pq.write_table(arrow, sink)
    return sink.getvalue()


RENDERERS: dict[str, Callable] = {
    "csv": render_csv,
    "md": render_md,
    "latex": render_latex,
    "parquet": render_parquet,
}
