"""Exports of every shape for the LaTeX compile tests, built in memory (no warehouse): the
long rows :func:`warehouse.exports.build_export` makes, with hand-set values."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from harness.core.measures import MEASURES
from warehouse.exports import Export, VIEW_CELLS

CLASSES = ("all", "lookup", "summarize")
SPECIALS = r"corpus<a>|b _ & % # $ { } ~ ^ \ end"
LONG = "hybrid-rrf-60-file-bge-small-en-v1.5-k1-0.9-b-0.4-rerank-minilm-l6-v2-top100"


def run_names(style: str, count: int) -> list[str]:
    if style == "long":
        return [f"{LONG}-{i}" for i in range(count)]
    if style == "specials":
        return [f"{SPECIALS} {i}" for i in range(count)]
    return [f"arm-{i}" for i in range(count)]


def shape(*, view="publishable", control=False, measures=4, runs=3, names="short",
          corpus="pub", columns=1, caption=None) -> Export:
    """An export of ``runs`` runs x ``measures`` measures x three classes on one corpus;
    with ``control`` the first run is the control and every other run has a delta."""
    chosen = list(MEASURES)[:measures]
    labels = run_names(names, runs)
    corpus = SPECIALS if names == "specials" else corpus
    records = []
    for i, run in enumerate(labels):
        for cls in CLASSES:
            for j, m in enumerate(chosen):
                value = round(0.1 + 0.8 * ((i * 7 + j * 3) % 11) / 10, 4)
                row = {"view": VIEW_CELLS[view], "run": run, "run_id": f"id{i:03d}",
                       "corpus": corpus, "tier": "A" if view == "publishable" else "B",
                       "class": cls, "n": 50 if cls == "all" else 25, "measure": m,
                       "value": value, "lower": max(0.0, value - 0.0812),
                       "upper": min(1.0, value + 0.0634), "interval_method": "bca",
                       "confidence": 0.95, "tied": i % 2 == 1}
                if control:
                    delta = 0.0 if i == 0 else round(value - 0.1 - 0.8 * ((j * 3) % 11) / 10, 4)
                    row.update(control=labels[0], delta=float("nan") if i == 0 else delta,
                               delta_lower=float("nan") if i == 0 else delta - 0.0512,
                               delta_upper=float("nan") if i == 0 else delta + 0.0421,
                               p_holm=0.01 if i % 3 == 1 else 0.4,
                               mark="control" if i == 0 else
                               "not comparable" if i % 5 == 4 else "*" if i % 3 == 1
                               else "n.s.",
                               not_comparable_because="granularity chunk vs file"
                               if i % 5 == 4 else "")
                records.append(row)
    rows = pd.DataFrame(records)
    provenance = {
        "view": view, "filters": {"measures": chosen, "runs": [], "corpora": [],
                                  "classes": []},
        "query_counts": {corpus: 50}, "interval_methods": ["bca"],
        "runs": [{"run_id": f"id{i:03d}", "control_name": n, "metric_engine":
                  "pytrec_eval_terrier", "metric_engine_version": "0.5.10"}
                 for i, n in enumerate(labels)],
        "corpora": [{"name": corpus, "tier": "A", "licence": "MIT"}],
    }
    return Export(view, rows, provenance, rows=rows, control="id000" if control else None,
                  labels={f"id{i:03d}": n for i, n in enumerate(labels)}, caption=caption,
                  columns=columns)


def pdflatex() -> str:
    found = shutil.which("pdflatex")
    if found is None:
        if os.environ.get("REQUIRE_LATEX") == "1":
            pytest.fail("REQUIRE_LATEX=1 but pdflatex is missing: install Debian's "
                        "texlive-latex-base, texlive-latex-recommended, texlive-latex-extra "
                        "and texlive-science (`.ci/run` does)")
        pytest.skip("pdflatex is missing (Debian: texlive-latex-base, "
                    "texlive-latex-recommended, texlive-latex-extra, texlive-science; set "
                    "REQUIRE_LATEX=1 to make this fail)")
    return found


OVERFULL = re.compile(r"Overfull \\hbox \(([\d.]+)pt too wide\)")


def compile_tables(tmp: Path, name: str, tables: dict[str, str], columns: int = 1) -> dict:
    """Compile ``tables`` (label -> LaTeX) in one ``article`` (two-column with ``columns=2``)
    with only the packages their first lines name; returns ``{label: [problems]}`` read from
    the log: an overfull box over 1 pt, a float too large, an error."""
    packages = set()
    for text in tables.values():
        found = re.search(r"^% \\usepackage\{([^}]*)\}", text, re.MULTILINE)
        assert found, "the export does not name its packages in a first-line comment"
        packages |= set(found.group(1).split(","))
    body = []
    for label, text in tables.items():
        body += [f"\\typeout{{SHAPE {label}}}", text, "\\clearpage"]
    option = "[twocolumn]" if columns == 2 else ""
    doc = (f"\\documentclass{option}{{article}}\n\\usepackage{{{','.join(sorted(packages))}}}\n"
           "\\begin{document}\n" + "\n".join(body) + "\\typeout{SHAPE end}\n\\end{document}\n")
    (tmp / f"{name}.tex").write_text(doc, encoding="utf-8")
    done = subprocess.run([pdflatex(), "-interaction=nonstopmode", "-halt-on-error",
                           f"{name}.tex"], cwd=tmp, capture_output=True, text=True, timeout=1500)
    log = (tmp / f"{name}.log").read_text(encoding="latin-1")
    problems: dict[str, list[str]] = {}
    current = "preamble"
    for line in log.splitlines():
        if line.startswith("SHAPE "):
            current = line[6:].strip()
            continue
        over = OVERFULL.search(line)
        if over and float(over.group(1)) > 1.0:
            problems.setdefault(current, []).append(line.strip())
        if "Float too large" in line or line.startswith("!"):
            problems.setdefault(current, []).append(line.strip())
    if done.returncode != 0:
        problems.setdefault(current, []).append(f"pdflatex exit {done.returncode}")
    return problems
