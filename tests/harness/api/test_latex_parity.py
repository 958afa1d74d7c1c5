"""One LaTeX renderer: the Python API (``Comparison.to_latex``), the CLI (``python -m
warehouse export --format latex``) and the dashboard's download give the same bytes for the
same runs, control and measures (issue 29)."""

from __future__ import annotations

import harness
from dashboard.downloads import export_files
from tests.harness.api.helpers import make_family
from warehouse import ingest_results
from warehouse.cli import main

MEASURES = ["nDCG@10", "MRR"]


def test_api_cli_and_dashboard_latex_are_the_same_bytes(tmp_path):
    qrels, runs = make_family(tmp_path / "in", queries=30)
    result = harness.compare({n: str(p) for n, p in runs.items()}, str(qrels),
                             measures=MEASURES, control="bm25", corpus="corpus<a>|b",
                             licence="MIT", tier="A", resamples=300, permutations=300)
    out = result.write(tmp_path / "results")
    db = tmp_path / "w.duckdb"
    for name in ("bm25", "dense", "hybrid"):  # the order the API shows them in
        assert ingest_results(out / name, db_path=db).inserted
    api = result.to_latex(caption="Three systems", label="tab:three")

    target = tmp_path / "t.tex"
    args = ["export", "--view", "publishable", "--format", "latex", "--out", str(target),
            "--db", str(db), "--control", "bm25", "--caption", "Three systems",
            "--label", "tab:three", "--run", "bm25", "--run", "dense", "--run", "hybrid"]
    for m in MEASURES:
        args += ["--measure", m]
    assert main(args) == 0
    cli = target.read_text(encoding="utf-8")
    assert cli == api
    # the hostile corpus name is escaped, never raw
    assert "corpus<a>|b" not in api and "corpus\\textless{}a\\textgreater{}\\textbar{}b" in api

    ok, files = export_files(str(db), "publishable", ("bm25", "dense", "hybrid"), (), (),
                             tuple(MEASURES), "bm25")
    assert ok
    # the dashboard has no caption or label fields: the CLI's defaults give its bytes
    default = tmp_path / "d.tex"
    assert main([a for a in args[:args.index("--caption")]] + ["--out", str(default)]
                + args[args.index("--run"):]) == 0
    assert files["latex"] == default.read_text(encoding="utf-8")


def test_one_class_of_the_api_is_the_cli_with_that_class(tmp_path):
    qrels, runs = make_family(tmp_path / "in", queries=20)
    classes = tmp_path / "classes.tsv"
    classes.write_text("".join(f"q{i:02d}\t{'lookup' if i < 12 else 'summarize'}\n"
                               for i in range(20)))
    result = harness.compare({n: str(p) for n, p in runs.items()}, str(qrels),
                             measures=["MRR"], control="bm25", licence="MIT", tier="A",
                             resamples=300, permutations=300, query_classes=str(classes))
    out = result.write(tmp_path / "results")
    db = tmp_path / "w.duckdb"
    for name in ("bm25", "dense", "hybrid"):
        assert ingest_results(out / name, db_path=db).inserted
    api = result.to_latex(query_class="lookup")
    target = tmp_path / "t.tex"
    assert main(["export", "--view", "publishable", "--format", "latex", "--out", str(target),
                 "--db", str(db), "--control", "bm25", "--class", "lookup", "--measure", "MRR",
                 "--run", "bm25", "--run", "dense", "--run", "hybrid"]) == 0
    assert target.read_text(encoding="utf-8") == api and "summarize" not in api


def test_one_run_of_the_api_is_the_cli_export_of_that_run(tmp_path):
    """``Evaluation.to_latex`` is the warehouse's renderer too: the bytes of ``warehouse
    export --format latex --run NAME`` (with the run's measures) after ``write`` and
    ingest."""
    from tests.harness.api.helpers import TOY, TOY_ARGS

    ev = harness.evaluate(TOY / "run.txt", TOY / "qrels.txt", **TOY_ARGS)
    assert ingest_results(ev.write(tmp_path / ev.name), db_path=tmp_path / "w.duckdb").inserted
    api = ev.to_latex(caption="Toy: 4 queries & 1 unanswered", label="tab:toy")
    target = tmp_path / "t.tex"
    assert main(["export", "--view", "publishable", "--format", "latex", "--out", str(target),
                 "--db", str(tmp_path / "w.duckdb"), "--run", ev.name,
                 "--caption", "Toy: 4 queries & 1 unanswered", "--label", "tab:toy",
                 *[a for m in ev.measures for a in ("--measure", m)]]) == 0
    assert target.read_text(encoding="utf-8") == api
