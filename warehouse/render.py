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

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

_LATEX = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
    "\n": " ", "\r": " ",
}


def neutralise_csv(text: str) -> str:
    """A text cell no spreadsheet will evaluate."""
    return "'" + text if text.startswith(FORMULA_PREFIXES) else text


def escape_latex(text: str) -> str:
    return "".join(_LATEX.get(ch, ch) for ch in text)


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


def _short(value, decimals: int = 4) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    return str(value)


def provenance_lines(provenance: dict) -> list[str]:
    """The provenance as short human-readable lines (the same facts as the JSON sidecar)."""
    lines = [f"view: {provenance['view']}; rows: {provenance['rows']} "
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


#: run ids are shortened to this many characters in tables for reading (md, latex); the
#: provenance beside them gives them in full
SHORT_ID = 12


def _records(table, short_ids: bool = False) -> tuple[list[str], list[list]]:
    columns = [str(c) for c in table.columns]
    rows = [[None if (isinstance(v, float) and math.isnan(v)) else
             (v.item() if hasattr(v, "item") else v) for v in row]
            for row in table.itertuples(index=False, name=None)]
    if short_ids and "run_id" in columns:
        at = columns.index("run_id")
        for row in rows:
            row[at] = str(row[at])[:SHORT_ID]
    return columns, rows


def render_csv(table, provenance: dict) -> str:
    columns, rows = _records(table)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([neutralise_csv(c) for c in columns])
    for row in rows:
        writer.writerow([_plain(v) if _is_number(v) or v is None else neutralise_csv(str(v))
                         for v in row])
    for line in ["provenance"] + provenance_lines(provenance):
        writer.writerow([f"# {line}"])
    return out.getvalue()


def render_md(table, provenance: dict) -> str:
    columns, rows = _records(table, short_ids=True)
    lines = ["| " + " | ".join(escape_md(c) for c in columns) + " |",
             "|" + "---|" * len(columns)]
    for row in rows:
        lines.append("| " + " | ".join(_short(v) if _is_number(v) or v is None
                                       else escape_md(str(v)) for v in row) + " |")
    lines += ["", "**Provenance**", ""]
    lines += [f"- {escape_md(line)}" for line in provenance_lines(provenance)]
    return "\n".join(lines) + "\n"


def render_latex(table, provenance: dict) -> str:
    columns, rows = _records(table, short_ids=True)
    numeric = [all(_is_number(r[i]) or r[i] is None for r in rows) for i in range(len(columns))]
    spec = "".join("r" if n else "l" for n in numeric)
    lines = ["\\begin{table}[ht]", "\\centering", f"\\begin{{tabular}}{{{spec}}}", "\\hline",
             " & ".join(escape_latex(c) for c in columns) + " \\\\", "\\hline"]
    for row in rows:
        lines.append(" & ".join(_short(v) if _is_number(v) or v is None
                                else escape_latex(str(v)) for v in row) + " \\\\")
    lines += ["\\hline", "\\end{tabular}", "\\par\\smallskip",
              "{\\footnotesize Provenance: " + escape_latex("; ".join(provenance_lines(provenance)))
              + "}", "\\end{table}"]
    return "\n".join(lines) + "\n"


def render_parquet(table, provenance: dict) -> bytes:
    """Parquet with the provenance JSON in the file's key-value metadata ("provenance")."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrow = pa.Table.from_pandas(table, preserve_index=False)
    meta = dict(arrow.schema.metadata or {})
    meta.pop(b"pandas", None)
    meta[b"provenance"] = json.dumps(provenance, sort_keys=True).encode("utf-8")
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
