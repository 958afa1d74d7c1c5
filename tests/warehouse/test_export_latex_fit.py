"""Every shape of LaTeX export compiles in a plain ``article`` with only the packages its
first line names, and fits: no ``Overfull \\hbox`` over 1 pt, no float too large (issue 29).

Shapes: publishable and internal, with and without a control, 1 to 12 measures, 1 to 20 runs,
short and long run names, names full of LaTeX specials, one column (345 pt) and a column of
a two-column page.  All tables of a group are compiled in one document (one pdflatex run).
"""

from __future__ import annotations

import pytest

from tests.warehouse.latex_shapes import compile_tables, pdflatex, shape
from warehouse.render import latex_render, render_latex

MEASURE_COUNTS = (1, 2, 3, 5, 8, 12)
RUN_COUNTS = (1, 2, 7, 20)


def _matrix(columns: int) -> dict[str, str]:
    tables = {}
    for control in (False, True):
        for m in MEASURE_COUNTS:
            for r in RUN_COUNTS:
                view = "internal" if (m + r) % 2 else "publishable"
                key = f"c{columns}-{'ctl' if control else 'plain'}-{view}-m{m}-r{r}"
                tables[key] = render_latex(shape(view=view, control=control, measures=m,
                                                 runs=r, columns=columns))
    for names in ("long", "specials"):
        for control in (False, True):
            for m, r in ((1, 1), (4, 5), (12, 20)):
                key = f"c{columns}-{names}-{'ctl' if control else 'plain'}-m{m}-r{r}"
                tables[key] = render_latex(shape(control=control, measures=m, runs=r,
                                                 names=names, columns=columns,
                                                 caption="50% of 100_000 & more {x}"))
    return tables


@pytest.mark.slow
@pytest.mark.parametrize("columns", [1, 2])
def test_every_shape_compiles_and_fits(tmp_path, columns):
    pdflatex()
    tables = _matrix(columns)
    problems = compile_tables(tmp_path, f"matrix{columns}", tables, columns=columns)
    assert problems == {}


def test_a_small_table_fits_without_scaling_or_splitting(tmp_path):
    """The dashboard's default selection (4 measures, 3 runs) with a control: no
    ``\\resizebox``, nothing said on stderr."""
    rendered = latex_render(shape(control=True, measures=4, runs=3))
    assert rendered.warnings == []
    assert "\\resizebox" not in rendered.text
    assert rendered.text.count("\\begin{table}") >= 1
    first = rendered.text.splitlines()[:3]
    assert first[0] == "% publishable (tier A only)"
    assert first[1] == "% \\usepackage{booktabs,siunitx}"
    pdflatex()
    assert compile_tables(tmp_path, "small", {"small": rendered.text}) == {}


def test_specials_are_escaped_everywhere(tmp_path):
    text = render_latex(shape(control=True, measures=2, runs=2, names="specials"))
    assert "corpus<a>|b" not in text and "\\textless{}a\\textgreater{}" in text
    assert "\\textbar{}" in text and "\\textasciitilde{}" in text


def test_the_best_mean_is_bold_and_numbers_align_on_the_decimal_point():
    text = render_latex(shape(measures=1, runs=3))
    # S columns (siunitx) align every mean on its decimal point
    assert "S[table-format=1.3" in text
    # values of run i, measure 0: 0.1 + 0.8 * (7 i mod 11) / 10 -> 0.1, 0.66, 0.42 (i = 0..2)
    assert "\\bfseries 0.660" in text and "\\bfseries 0.420" not in text


def test_two_columns_choose_a_narrower_layout_than_one():
    one = render_latex(shape(control=True, measures=3, runs=3, columns=1))
    two = render_latex(shape(control=True, measures=3, runs=3, columns=2))
    assert one != two
    assert "\\begin{table*}" in two or two.count("\\begin{table}") > one.count("\\begin{table}")


def test_two_runs_and_four_measures_are_one_float_with_one_caption_and_one_note(tmp_path):
    """Classes as rows of one table; with fewer runs than measures the runs become the
    columns before anything is split; the notes are written once."""
    for control in (False, True):
        text = render_latex(shape(control=control, measures=4, runs=2))
        assert text.count("\\begin{table}") == 1, control
        assert text.count("\\caption{") == 1
        assert text.count("\\footnotesize\\raggedright") == 1
        assert "Continued" not in text
    pdflatex()
    assert compile_tables(tmp_path, "two", {"two": text}) == {}


def test_abbreviated_runs_are_numbered_once_across_the_tables_of_an_export():
    """Runs in another comparability group continue the numbering (R1 never names two)."""
    import re

    import pandas as pd

    export = shape(measures=12, runs=7)
    rows = export.rows.assign(group=["g2" if r == "arm-6" else "g1" for r in export.rows["run"]])
    text = render_latex(type(export)(export.view, rows, export.provenance, rows=rows,
                                     labels=export.labels))
    legend = re.search(r"Runs: (.*?)\.\\par", text, re.S)
    assert legend, "the runs are abbreviated at this width"
    pairs = re.findall(r"(R\d+) = ([^;]+)", legend.group(1))
    assert [short for short, _ in pairs] == [f"R{i}" for i in range(1, 8)]
    assert pd.Series([run for _, run in pairs]).is_unique
