"""metrics.md escapes every name a user gives (issue #16): a run name through ``harness
bench`` and ``harness score``, a corpus name through ``score`` (bench names a corpus after its
folder, cleaned to letters, digits and dashes)."""

from __future__ import annotations

from harness.cli import main
from tests.harness.cli.helpers import make_inputs
from tests.ingestion.helpers import write_beir
from tests.markdown_check import assert_inert

FOLDER = "<img src=x onerror=alert(1)>"
RUN = "<script>alert(1)</script>`](javascript:x)"


def test_bench_metrics_md_shows_a_hostile_folder_and_run_name_as_text(tmp_path):
    folder = write_beir(tmp_path / FOLDER)
    out = tmp_path / "out"
    assert main(["bench", "--corpus", f"beir:{folder}", "--mode", "bm25", "--granularity", "file",
                 "--no-progress", "--no-warehouse", "--control-name", RUN, "--out", str(out)]) == 0
    text = (out / "metrics.md").read_text()
    assert "<img" not in text and "<script>" not in text
    assert_inert(text, "beir-img-src-x-onerror-alert-1", RUN)


def test_score_metrics_md_shows_a_hostile_run_name_as_text(tmp_path):
    qrels, run, _ = make_inputs(tmp_path)
    out = tmp_path / "out"
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--corpus-name", FOLDER,
                 "--control-name", RUN, "--out", str(out), "--no-warehouse"]) == 0
    assert_inert((out / "metrics.md").read_text(), FOLDER, RUN)
