"""The Results page's downloads: every format of one export, and file names that say what
the file holds.  No streamlit here (``dashboard.common.export_files`` caches it), so the
bytes are tested beside the CLI's and the Python API's (one renderer, :mod:`warehouse.render`)."""

from __future__ import annotations

import re

from warehouse import exports
from warehouse.errors import ExportRefused

#: (format, label, MIME type, file extension)
FORMATS = (("csv", "CSV", "text/csv", "csv"), ("md", "Markdown", "text/markdown", "md"),
           ("latex", "LaTeX", "application/x-tex", "tex"),
           ("parquet", "Parquet", "application/vnd.apache.parquet", "parquet"))
#: a file name part holds at most this many names before it says how many
NAMES_SHOWN = 3
_UNSAFE = re.compile(r"[^A-Za-z0-9@.+_-]+")


def export_files(path: str, view: str, runs=(), corpora=(), classes=(), measures=(),
                 control=None, columns: int = 1):
    """``(True, {format: content, "provenance": json})`` or ``(False, why it was
    refused)``: the export ``python -m warehouse export`` writes for the same selection."""
    from harness.core.canonical import canonical_json
    from harness.stats.best import tied_with_best

    try:
        built = exports.build_export(view, list(runs) or None, list(corpora) or None,
                                     list(classes) or None, list(measures) or None,
                                     control=control, columns=columns,
                                     tie_test=tied_with_best, db_path=path)
    except ExportRefused as exc:
        return False, str(exc)
    files = {fmt: exports.render(built, fmt) for fmt, *_ in FORMATS}
    files["provenance"] = canonical_json(built.provenance)
    return True, files


def _part(names, what: str) -> str:
    names = [str(n) for n in names]
    if len(names) > NAMES_SHOWN:
        return f"{len(names)}-{what}"
    # a pooled corpus is itself named a+b: names are joined with commas
    return ",".join(_UNSAFE.sub("_", n).strip("._") or "_" for n in names)


def file_name(view: str, corpora, measures, control_label: str | None, ext: str) -> str:
    """``results-publishable-pub-nDCG@10,MRR-vs-bm25.tex``: the view, the corpora, the
    measures and the control (``4-measures`` when more than three), in characters every
    file system takes."""
    parts = ["results", view, _part(corpora, "corpora"), _part(measures, "measures")]
    if control_label:
        parts.append("vs-" + _part([control_label], "runs"))
    return "-".join(p for p in parts if p)[:150] + f".{ext}"
