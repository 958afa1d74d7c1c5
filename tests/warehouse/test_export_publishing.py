"""Exports carry what the Results page shows (value, interval and method; with a control the
delta, its interval, Holm-adjusted p and mark), load cleanly in pandas, and the LaTeX
compiles (issue #17).

Expected numbers come from the fixture's hand-chosen per-query values
(:mod:`tests.pages.fixture_warehouse`): on pub and alt the control's nDCG@10 of query i is
i / 10 (i = 1..6, mean 0.35); arm-one adds 0.1 on odd and 0.05 on even queries (delta
+0.075), arm-two adds 0.1 on pub only (delta +0.1 on pub, 0 on alt).
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess

import pandas as pd
import pyarrow.parquet as pq
import pytest

from harness.stats.best import tied_with_best
from warehouse import queries
from warehouse.cli import main
from warehouse.errors import ExportRefused
from warehouse.exports import build_export, export_table
from warehouse.render import INTERNAL_STAMP

TIER_A = ["control", "arm-one", "arm-two"]


@pytest.fixture
def fixture(fixture_warehouse):
    """The session's fixture warehouse (tests/conftest.py): the exports only read it."""
    return fixture_warehouse


def _tier_a_ids(fixture):
    return [fixture["ids"][name] for name in TIER_A]


def test_csv_loads_in_pandas_as_exactly_the_data_rows_with_deltas_and_tests(fixture):
    db, ids = fixture["db"], fixture["ids"]
    runs, control = _tier_a_ids(fixture), ids["control"]
    text = export_table("publishable", "csv", runs=runs, corpora=["pub", "alt"],
                        measures=["nDCG@10"], control=control, db_path=db)
    frame = pd.read_csv(io.StringIO(text))
    # 3 runs x 2 corpora x (all, lookup, summarize): every line a data row, nothing else
    assert len(frame) == 3 * 2 * 3 == len(text.splitlines()) - 1
    assert not frame["run"].astype(str).str.startswith("#").any()
    for column in ("nDCG@10", "nDCG@10 lower", "nDCG@10 upper", "nDCG@10 interval_method",
                   "nDCG@10 delta", "nDCG@10 delta_lower", "nDCG@10 delta_upper",
                   "nDCG@10 p_holm", "nDCG@10 mark"):
        assert column in frame.columns, column
    assert pd.api.types.is_float_dtype(frame["nDCG@10"])
    assert pd.api.types.is_float_dtype(frame["nDCG@10 p_holm"])
    # the all class first within each run x corpus
    assert frame.groupby(["run", "corpus"], sort=False)["class"].first().eq("all").all()

    def cell(run, corpus, column):
        hit = frame[(frame["run"] == run) & (frame["corpus"] == corpus)
                    & (frame["class"] == "all")]
        assert len(hit) == 1, (run, corpus)
        return hit.iloc[0][column]

    assert cell("control", "pub", "nDCG@10") == pytest.approx(0.35)
    assert cell("arm-one", "pub", "nDCG@10") == pytest.approx(0.425)
    assert cell("arm-one", "pub", "nDCG@10 delta") == pytest.approx(0.075)
    assert cell("arm-two", "pub", "nDCG@10 delta") == pytest.approx(0.1)
    assert cell("arm-two", "alt", "nDCG@10 delta") == pytest.approx(0.0)
    assert cell("control", "pub", "nDCG@10 mark") == "control"
    assert pd.isna(cell("control", "pub", "nDCG@10 delta"))
    # intervals bracket their value and name their method
    assert cell("control", "pub", "nDCG@10 lower") <= 0.35 <= cell("control", "pub",
                                                                  "nDCG@10 upper")
    assert isinstance(cell("control", "pub", "nDCG@10 interval_method"), str)
    # the Holm-adjusted p and the mark are the stored paired test's
    stored = queries.comparisons("publishable", control_run=control, corpora=["pub"],
                                 classes=["all"], measures=["nDCG@10"], db_path=db)
    for r in stored.itertuples(index=False):
        name = "arm-one" if r.arm_run_id == ids["arm-one"] else "arm-two"
        assert cell(name, "pub", "nDCG@10 p_holm") == pytest.approx(r.p_holm)
        assert cell(name, "pub", "nDCG@10 delta_lower") == pytest.approx(r.delta_lower)
        expected = {"significant": "*", "not significant": "n.s.",
                    "cannot be significant": "floor"}[r.verdict]
        assert cell(name, "pub", "nDCG@10 mark") == expected
    assert len(stored) == 2


def test_long_layout_and_parquet_metadata(fixture):
    db, ids = fixture["db"], fixture["ids"]
    runs = _tier_a_ids(fixture)
    long = pd.read_csv(io.StringIO(export_table(
        "publishable", "csv", runs=runs, corpora=["pub"], control=ids["control"],
        layout="long", db_path=db)))
    assert {"measure", "value", "lower", "upper", "interval_method", "delta", "delta_lower",
            "delta_upper", "p_holm", "mark", "control"} <= set(long.columns)
    assert set(long["measure"]) == {"nDCG@10", "MRR"}
    assert len(long) == 3 * 3 * 2  # runs x classes x measures
    assert set(long["control"]) == {"control"}
    data = export_table("publishable", "parquet", runs=runs, corpora=["pub"],
                        control=ids["control"], layout="long", db_path=db)
    table = pq.read_table(io.BytesIO(data))
    provenance = json.loads(table.schema.metadata[b"provenance"])
    assert provenance["control"]["run_id"] == ids["control"]
    assert provenance["layout"] == "long"
    assert {r["run_id"] for r in provenance["runs"]} == set(runs)
    back = table.to_pandas()
    assert back["value"].tolist() == pytest.approx(long["value"].tolist())


def test_an_internal_only_control_never_reaches_a_publishable_export(fixture):
    db, ids = fixture["db"], fixture["ids"]
    # the later control run's index held the tier-B corpus: nothing of it is publishable
    with pytest.raises(ExportRefused, match="secretcorpus"):
        export_table("publishable", "csv", runs=_tier_a_ids(fixture), corpora=["pub"],
                     control=ids["control-2"], db_path=db)
    # internally the same export works and is stamped in every format
    csv_text = export_table("internal", "csv", runs=_tier_a_ids(fixture), corpora=["pub"],
                            control=ids["control-2"], db_path=db)
    assert set(pd.read_csv(io.StringIO(csv_text))["view"]) == {INTERNAL_STAMP}
    md = export_table("internal", "md", runs=_tier_a_ids(fixture), db_path=db)
    assert md.splitlines()[0] == f"**{INTERNAL_STAMP}**"
    latex = export_table("internal", "latex", runs=_tier_a_ids(fixture), db_path=db)
    assert latex.splitlines()[0] == f"% {INTERNAL_STAMP}"
    assert f"\\caption{{{INTERNAL_STAMP}." in latex
    publishable = export_table("publishable", "latex", runs=_tier_a_ids(fixture), db_path=db)
    assert INTERNAL_STAMP not in publishable


def _latex(fixture, **kwargs) -> str:
    return export_table("publishable", "latex", runs=_tier_a_ids(fixture),
                        corpora=["pub", "alt"], measures=["nDCG@10", "MRR"],
                        tie_test=tied_with_best, db_path=fixture["db"], **kwargs)


def test_latex_is_paste_ready(fixture):
    ids = fixture["ids"]
    latex = _latex(fixture, control=ids["control"], caption="Fusion arms against the control",
                   label="tab:fusion")
    for needed in ("\\toprule", "\\midrule", "\\bottomrule", "\\label{tab:fusion}",
                   "\\caption{Fusion arms against the control}"):
        assert needed in latex, needed
    assert "\\hline" not in latex
    assert latex.splitlines()[1] == "% \\usepackage{booktabs,siunitx}"
    # short run names, never hash ids
    for rid in ids.values():
        assert rid[:8] not in latex
    # one table: measures as columns (mean and delta under each name), the corpus x class
    # slices as row groups (all first, corpora in order); 6 slices x 3 runs on two lines each
    # are taller than a page, so the table continues once, pointing back to the first
    assert latex.count("\\begin{table}") == 2
    assert latex.count("\\caption{Continued from Table~\\ref{tab:fusion}.}") == 1
    assert "Corpus pub." not in latex and "Corpus alt." not in latex
    assert "run & \\multicolumn{2}{c}{nDCG@10} & \\multicolumn{2}{c}{MRR} \\\\" in latex
    groups = re.findall(r"\\multicolumn\{5\}\{@\{\}l\}\{\\textit\{(\w+), (\w+) \(n = (\d+)\)\}\}",
                        latex)
    # (a slice cut by the continuation repeats its heading in the next float)
    assert list(dict.fromkeys(groups)) == [
        (c, cls, n) for c in ("alt", "pub")
        for cls, n in (("all", "6"), ("lookup", "3"), ("summarize", "3"))]
    # the control's pub mean 0.35 to 3 decimals (they separate every two means); arm-one's
    # delta +0.075 with its interval on the line beneath; arm-two's pub mean 0.35 + 0.1 =
    # 0.45 is the best (bold)
    pub_all = latex[latex.index("\\textit{pub, all"):latex.index("\\textit{pub, lookup")]
    # tied with the best (arm-two), Holm over two paired sign-flip tests against it: the
    # control differs by -0.1 on all 6 queries (p = 2 / 2^6 = 0.03125, Holm 2 x 0.03125 =
    # 0.0625 > 0.05), arm-one by -0.05 on the 3 even ones (p = 2 / 2^3 = 0.25): both tied
    assert re.search(r"\ncontrol & 0\.350\$\^\{\\dagger\}\$ & \{--\} & ", pub_all)
    assert re.search(r"\narm-one & 0\.425\$\^\{\\dagger\}\$ & \+0\.075\S* & ", pub_all)
    assert "not significantly different from the best" in latex
    # the bounds to the screen's precision: 2 decimals, every interval here being wider
    # than 0.02
    assert re.search(r"\n & \{\{\\footnotesize \[\d\.\d{2}, \d\.\d{2}\]\}\} & "
                     r"\{\{\\footnotesize \[[+-]\d\.\d{2}, [+-]\d\.\d{2}\]\}\}", pub_all)
    assert re.search(r"\narm-two & \\bfseries 0\.450 & ", pub_all)
    # the notes once, under the first float: corpora with tier and query count, engine and
    # version; the continuation points back to them
    notes = [line for line in latex.splitlines() if line.startswith("{\\footnotesize")]
    assert len(notes) == 2 and notes[1] == \
        "{\\footnotesize\\raggedright Notes as in Table~\\ref{tab:fusion}.\\par}"
    assert "pub (tier A, MIT, 6 queries)" in notes[0] and "alt (tier A, CC0-1.0, 6 queries)" \
        in notes[0]
    assert "pytrec\\_eval\\_terrier 0.5.10" in notes[0]
    # without a control the same export is one float, its caption once
    plain = _latex(fixture)
    assert plain.count("\\begin{table}") == 1 and plain.count("\\caption{") == 1


def test_latex_compiles_with_pdflatex(fixture, tmp_path):
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        if os.environ.get("REQUIRE_LATEX") == "1":
            pytest.fail("REQUIRE_LATEX=1 but pdflatex is missing: install Debian's "
                        "texlive-latex-base and texlive-latex-recommended (`.ci/run` does)")
        pytest.skip("pdflatex is missing (Debian: texlive-latex-base, "
                    "texlive-latex-recommended; set REQUIRE_LATEX=1 to make this fail)")
    for name, kwargs in (("plain", {}), ("control", {"control": fixture["ids"]["control"],
                                                     "caption": "50% of 100_000 & more"})):
        table = _latex(fixture, **kwargs)
        (tmp_path / f"{name}.tex").write_text(
            "\\documentclass{article}\n\\usepackage[T1]{fontenc}\n\\usepackage{booktabs,siunitx}\n"
            "\\usepackage[margin=1cm,landscape]{geometry}\n"
            f"\\begin{{document}}\n{table}\\end{{document}}\n", encoding="utf-8")
        done = subprocess.run([pdflatex, "-interaction=nonstopmode", "-halt-on-error",
                               f"{name}.tex"], cwd=tmp_path, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stdout[-3000:]
        assert (tmp_path / f"{name}.pdf").stat().st_size > 1000
        assert "Undefined control sequence" not in done.stdout


def test_cli_export_with_control_and_layout(fixture, tmp_path, capsys):
    db, ids = fixture["db"], fixture["ids"]
    out = tmp_path / "t.csv"
    args = ["export", "--view", "publishable", "--format", "csv", "--out", str(out),
            "--db", str(db), "--corpus", "pub", "--control", ids["control"],
            "--layout", "long", "--measure", "nDCG@10"]
    for name in TIER_A[1:]:
        args += ["--run", ids[name]]
    assert main(args) == 0
    frame = pd.read_csv(out)
    # the control is added to the runs it is compared with
    assert set(frame["run"]) == {"control", "arm-one", "arm-two"}
    sidecar = json.loads((tmp_path / "t.csv.provenance.json").read_text())
    assert sidecar["control"]["name"] == "control" and sidecar["layout"] == "long"
    latex = tmp_path / "t.tex"
    assert main(["export", "--view", "publishable", "--format", "latex", "--out", str(latex),
                 "--db", str(db), "--run", ids["control"], "--corpus", "pub",
                 "--caption", "Main", "--label", "tab:main"]) == 0
    # no measure chosen: the default set, named in the caption
    assert "\\caption{Main. Measures: nDCG@10 (the default set).}" in latex.read_text()
    assert "\\label{tab:main}" in latex.read_text() and "MRR" not in latex.read_text()
    with pytest.raises(SystemExit) as info:
        main(["export", "--view", "publishable", "--format", "csv", "--out", str(out),
              "--db", str(db), "--layout", "diagonal"])
    assert info.value.code == 2 and "diagonal" in capsys.readouterr().err


def test_build_export_rows_are_the_screen_rows(fixture):
    """The export's long rows hold the same numbers as the queries the Results page reads."""
    db, ids = fixture["db"], fixture["ids"]
    runs = _tier_a_ids(fixture)
    export = build_export("publishable", runs=runs, control=ids["control"], db_path=db)
    screen = queries.metric_intervals("publishable", runs=runs, db_path=db)
    merged = export.rows.merge(screen, left_on=["run_id", "corpus", "class", "measure"],
                               right_on=["run_id", "corpus", "query_class", "measure"])
    assert len(merged) == len(screen) == len(export.rows)
    assert merged["value_x"].tolist() == merged["value_y"].tolist()
    tested = queries.deltas_tested(ids["control"], runs, "publishable", db_path=db)
    both = export.rows.merge(tested, left_on=["run_id", "corpus", "class", "measure"],
                             right_on=["run_id", "corpus", "query_class", "measure"])
    assert len(both) == len(tested) > 0
    assert both["delta_x"].tolist() == pytest.approx(both["delta_y"].tolist(), nan_ok=True)


def test_csv_marks_the_runs_tied_with_the_best(fixture):
    """pub, all, nDCG@10: arm-two is the best; the control (p = 2 / 2^6, Holm x 2 = 0.0625)
    and arm-one (p = 2 / 2^3 = 0.25) are tied with it at 0.05."""
    text = export_table("publishable", "csv", runs=_tier_a_ids(fixture), corpora=["pub"],
                        measures=["nDCG@10"], tie_test=tied_with_best, db_path=fixture["db"])
    frame = pd.read_csv(io.StringIO(text))
    tied = frame[frame["class"] == "all"].set_index("run")["nDCG@10 tied_with_best"]
    assert tied.to_dict() == {"control": True, "arm-one": True, "arm-two": False}
