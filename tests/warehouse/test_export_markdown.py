"""The Markdown export escapes HTML and inline markup in every cell and provenance line
(issue #16: ``<script>`` and ``<img onerror>`` went through raw)."""

from __future__ import annotations

from tests.markdown_check import HOSTILE, assert_inert
from tests.warehouse.builders import build_results
from warehouse import ingest_results
from warehouse.exports import export_table


def test_hostile_corpus_and_run_names_stay_text_in_the_markdown_export(tmp_path):
    db = tmp_path / "w.duckdb"
    for i, name in enumerate(HOSTILE):
        values = {(name, f"q{j}"): {"MRR": 1 / j} for j in range(1, 4)}
        out = build_results(tmp_path / f"r{i}", values, corpora={name: ("A", "MIT")},
                            control_name=HOSTILE[-1 - i],
                            corpus_fields={name: {"version": HOSTILE[i - 1]}})
        ingest_results(out, db)
    for view in ("internal", "publishable"):
        text = export_table(view, "md", db_path=db)
        assert "<script>" not in text and "<img" not in text
        assert_inert(text, *HOSTILE)
    # the other formats keep their own neutralisation
    latex = export_table("internal", "latex", db_path=db)
    assert "<script>" not in latex and "\\textless{}script\\textgreater{}" in latex
