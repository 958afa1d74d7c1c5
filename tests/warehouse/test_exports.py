"""Exports: publishable means tier A or refuse; provenance; cells that cannot attack a reader."""

from __future__ import annotations

import csv
import io
import json
import math

import pyarrow.parquet as pq
import pytest

from tests.warehouse.builders import build_results
from tests.warehouse.conftest import tier_b_numbers
from warehouse import ingest_results
from warehouse.cli import main
from warehouse.errors import ExportRefused
from warehouse.exports import build_export, export_table
from harness.core.latex import escape_latex
from warehouse.render import escape_md, neutralise_csv

FORMATS = ("csv", "md", "latex", "parquet")


def _text(data) -> str:
    if isinstance(data, bytes):
        table = pq.read_table(io.BytesIO(data))
        return table.to_pandas().to_csv() + table.schema.metadata[b"provenance"].decode()
    return data


def test_publishable_export_refuses_tier_b_naming_the_corpora(mixed):
    db, _ = mixed
    for fmt in FORMATS:
        with pytest.raises(ExportRefused) as info:
            export_table("publishable", fmt, db_path=db)
        message = str(info.value)
        assert "secretcorpus (tier B" in message and "CC-BY-NC-4.0" in message
        assert "pub+secretcorpus" in message  # the pooled row is named too
    with pytest.raises(ExportRefused, match="secretcorpus"):
        export_table("publishable", "csv", corpora=["secretcorpus"], classes=["all"], db_path=db)
    # pub's own rows of a run whose index also held secretcorpus: refused, naming why
    with pytest.raises(ExportRefused) as info:
        export_table("publishable", "csv", corpora=["pub"], runs=["control"], db_path=db)
    assert "pub (tier A; secretcorpus (tier B, licence CC-BY-NC-4.0, in the run's shared " \
           "index)" in str(info.value)


PUB_RUNS = ["pub-control", "pub-candidate"]


def test_publishable_export_of_tier_a_rows_carries_no_tier_b_value(mixed):
    db, ids = mixed
    tier_b = tier_b_numbers()
    full = (ids["pub-control"], ids["pub-candidate"], "MIT", "pytrec_eval_terrier", "0.5.10",
            "0" * 64)
    for fmt in FORMATS:
        text = _text(export_table("publishable", fmt, runs=PUB_RUNS, db_path=db))
        assert "secretcorpus" not in text
        assert "CC-BY-NC" not in text
        # the long provenance: in Markdown and Parquet; CSV keeps it in the sidecar, LaTeX
        # has a one-line source note (no hash ids)
        needed = {"md": full, "parquet": full, "csv": full[:2],
                  "latex": ("MIT", "pytrec\\_eval\\_terrier 0.5.10", "2 queries")}[fmt]
        for item in needed:
            assert item in text, (fmt, item)
        assert ids["control"] not in text and ids["candidate"] not in text
    provenance = build_export("publishable", runs=PUB_RUNS, db_path=db).provenance
    assert {r["run_id"] for r in provenance["runs"]} == {ids["pub-control"], ids["pub-candidate"]}
    assert [c["sha256"] for c in provenance["corpora"]] == ["0" * 64]
    rows = list(csv.reader(io.StringIO(export_table("publishable", "csv", runs=PUB_RUNS,
                                                    db_path=db))))
    header, body = rows[0], rows[1:]
    assert header == ["view", "run", "run_id", "corpus", "tier", "class", "n",
                      "nDCG@10", "nDCG@10 lower", "nDCG@10 upper", "nDCG@10 interval_method",
                      "MRR", "MRR lower", "MRR upper", "MRR interval_method",
                      "unanswered", "dropped", "group", "backend", "mode", "model", "fusion",
                      "fusion_k", "bm25_k1", "bm25_b", "rerank", "granularity", "scope"]
    assert len(body) == 2 * 3 and {r[4] for r in body} == {"A"}
    assert {r[0] for r in body} == {"publishable"}
    for row in body:
        for cell in (row[7], row[11]):
            assert not any(math.isclose(float(cell), b, abs_tol=1e-9) for b in tier_b)
    control_all = [r for r in body if r[1] == "pub-control" and r[5] == "all"][0]
    assert float(control_all[7]) == pytest.approx((0.5 + 0.3) / 2)
    # the all class first within each run
    assert [r[5] for r in body if r[1] == "pub-control"][0] == "all"


def test_internal_export_holds_everything_and_exports_are_deterministic(mixed):
    db, _ = mixed
    first = export_table("internal", "csv", db_path=db)
    assert "secretcorpus" in first and "pub+secretcorpus" in first
    for fmt in FORMATS:
        assert export_table("internal", fmt, db_path=db) == export_table("internal", fmt,
                                                                         db_path=db)
    with pytest.raises(ValueError, match=r"unknown export format 'xlsx'.*'csv'"):
        export_table("internal", "xlsx", db_path=db)


def test_escaping_rules():
    for bad in ("=1+2", "+cmd", "-2+3", "@SUM(A1)", "\tx", "\rx"):
        assert neutralise_csv(bad) == "'" + bad
    assert neutralise_csv("plain=fine") == "plain=fine"
    assert escape_latex(r"a_b&c%$#{}~^\x") == (
        r"a\_b\&c\%\$\#\{\}\textasciitilde{}\textasciicircum{}\textbackslash{}x")
    assert escape_md("a|b\nc") == "a\\|b c"


def test_one_latex_escaper_for_the_api_and_the_exports():
    """``corpus<a>|b`` once broke the Python API's LaTeX: its own escaper left ``<``, ``>``
    and ``|`` (printed as other glyphs in OT1, ``|`` a rule in a tabular spec)."""
    from pathlib import Path

    import harness

    toy = Path(__file__).resolve().parents[2] / "examples" / "toy"
    assert escape_latex("corpus<a>|b") == r"corpus\textless{}a\textgreater{}\textbar{}b"
    text = harness.evaluate(toy / "run.txt", toy / "qrels.txt", corpus="corpus<a>|b").to_latex()
    assert r"Retrieval results on corpus\textless{}a\textgreater{}\textbar{}b" in text
    assert "corpus<a>|b" not in text


@pytest.fixture
def hostile(tmp_path):
    db = tmp_path / "w.duckdb"
    values = {("@evil", "q1"): {"MRR": 1.0}, ("@evil", "q2"): {"MRR": 0.5}}
    out = build_results(tmp_path / "r", values, corpora={"@evil": ("A", "MIT")},
                        classes={"q1": "-2+3", "q2": "=cmd|x"},
                        control_name='=HYPERLINK("http://x.test","a_b&c|d")')
    ingest_results(out, db)
    return db


def test_formula_injection_cells_are_neutralised(hostile):
    text = export_table("publishable", "csv", db_path=hostile)
    rows = list(csv.reader(io.StringIO(text)))
    body = rows[1:]
    assert len(body) == 3
    for row in [rows[0], *body]:
        for cell in row:
            try:
                float(cell)
                continue  # a number is never a formula
            except ValueError:
                pass
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    assert body[0][1] == "'" + '=HYPERLINK("http://x.test","a_b&c|d")'
    assert {r[3] for r in body} == {"'@evil"}
    assert {r[5] for r in body} == {"'-2+3", "'=cmd|x", "all"}
    assert len({len(r) for r in rows}) == 1  # no trailer lines: every line is a data row


def test_latex_and_markdown_cells_are_escaped(hostile):
    latex = export_table("publishable", "latex", db_path=hostile)
    assert r'=HYPERLINK("http://x.test","a\_b\&c\textbar{}d")' in latex
    assert "a_b&c" not in latex
    md = export_table("publishable", "md", db_path=hostile)
    lines = [line for line in md.splitlines() if line.startswith("| ")]
    head = lines[0]
    for line in lines:
        unescaped = line.replace("\\|", "")
        assert unescaped.count("|") == head.count("|"), line
    assert "=cmd\\|x" in md


def test_cli_export_refuses_loudly_and_writes_nothing(mixed, tmp_path, capsys):
    db, _ = mixed
    out = tmp_path / "table.csv"
    code = main(["export", "--view", "publishable", "--format", "csv", "--out", str(out),
                 "--db", str(db)])
    assert code != 0
    assert "secretcorpus" in capsys.readouterr().err
    assert not out.exists() and not (tmp_path / "table.csv.provenance.json").exists()
    code = main(["export", "--view", "publishable", "--format", "md", "--out", str(out),
                 "--corpus", "pub", "--class", "all", "--measure", "MRR", "--run", "pub-control",
                 "--db", str(db)])
    assert code == 0
    sidecar = json.loads((tmp_path / "table.csv.provenance.json").read_text())
    assert [r["control_name"] for r in sidecar["runs"]] == ["pub-control"]
    assert [c["name"] for c in sidecar["corpora"]] == ["pub"]
    assert sidecar["filters"]["measures"] == ["MRR"]
    table = out.read_text()
    assert table.count("\n| pub-control |") == 1


def test_embedding_model_named_in_provenance(tmp_path):
    db = tmp_path / "w.duckdb"
    index = {"embedding_models": ["all-MiniLM-L6-v2"], "embedding_verdict": "consistent",
             "embedding_dimension": 384, "configured_embedding_model": "all-MiniLM-L6-v2"}
    out = build_results(tmp_path / "r", {("pub", "q1"): {"MRR": 1.0}},
                        corpora={"pub": ("A", "MIT")}, index=index,
                        retrieval={"backend": "embedded", "mode": "vector"})
    ingest_results(out, db)
    text = export_table("publishable", "md", db_path=db)
    assert "embedding model all-MiniLM-L6-v2" in text


def test_the_tie_test_takes_as_reference_the_run_the_tables_mark_best():
    # X scores 0 on the 6 queries every run shares and 1 on 100 more: mean 100/106;
    # Y scores 1 on the shared 6 and 0 on 20 more: mean 6/26; Z scores only the shared 6, 0.
    # The tables star X (100/106 > 6/26 > 0), so X is the test's reference, although Y
    # leads over the shared queries.  Y against X: 6 discordant queries, exact p = 2/2^6 =
    # 0.03125; Z against X: no discordant query, p = 1; Holm over 2: 2 x 0.03125 = 0.0625
    # > 0.05, so Y is tied, and Z (p_holm = 1) too.  (With Y as reference, X would have been
    # "tied" while starred, and Y unmarked.)
    import pandas as pd

    from harness.stats.best import tied_with_best
    from warehouse.exports import mark_ties
    from warehouse.latex import mark_best
    from warehouse.render import BEST_MARK, TIED_MARK, _best_marks

    values = {"X": [0.0] * 6 + [1.0] * 100, "Y": [1.0] * 6 + [0.0] * 20, "Z": [0.0] * 6}
    per_query = pd.DataFrame(
        [dict(run_id=r, corpus="c", query_class="a", query_id=f"q{i:03d}", measure="MRR",
              value=v) for r, vs in values.items() for i, v in enumerate(vs)])
    rows = pd.DataFrame([dict(run_id=r, run=r, corpus="c", group="g", measure="MRR",
                              value=sum(vs) / len(vs), tier="A", **{"class": "all"})
                         for r, vs in values.items()])
    assert list(rows["value"]) == pytest.approx([100 / 106, 6 / 26, 0.0])
    marked = mark_ties(rows, per_query, tied_with_best)
    assert dict(zip(marked["run"], marked["tied"])) == {"X": False, "Y": True, "Z": True}
    assert _best_marks(marked) == {0: BEST_MARK, 1: TIED_MARK, 2: TIED_MARK}
    assert list(mark_best(marked)["best"]) == [True, False, False]
