"""harness.evaluation.run_export writes TREC files with the formats writers
(:func:`harness.core.formats.trec_run_text`, :func:`~harness.core.formats.trec_qrels_text`):
byte for byte the files expected here, written by hand from examples/toy."""

from __future__ import annotations

from harness.cli import main
from harness.evaluation.run_export import write_export

from tests.harness.api.helpers import TOY

# examples/toy/run.txt scored: each list by score, ties by (doc_type, file_id, chunk_index)
# (chunk 3 before chunk 4; a chunk before its file's digest); scores as repr of the float
EXPECTED_RUN = """\
q1 Q0 ES2006a_3 1 0.9 toy
q1 Q0 ES2006a_4 2 0.9 toy
q1 Q0 ES2006a_10 3 0.5 toy
q2 Q0 Bed002_7 1 0.033 toy
q2 Q0 Bed002_digest 2 0.033 toy
q2 Q0 Bed002_11 3 0.032 toy
q3 Q0 covid_2_1 1 12.5 toy
q3 Q0 covid_2_0 2 11.0 toy
"""
# examples/toy/qrels.txt as qrels.jsonl holds it: by query, then document id as text
EXPECTED_QRELS = """\
q1 0 ES2006a_10 1
q1 0 ES2006a_3 2
q1 0 ES2006a_4 0
q2 0 Bed002_7 2
q2 0 Bed002_digest 1
q3 0 covid_2_0 1
q3 0 covid_2_1 -1
q4 0 ES2006b_5 1
"""


def test_trec_exports_are_the_files_written_by_hand(tmp_path):
    toy = tmp_path / "toy"
    assert main(["score", "--qrels", str(TOY / "qrels.txt"), "--run", str(TOY / "run.txt"),
                 "--out", str(toy), "--no-warehouse", "--corpus-name", "toy",
                 "--licence", "CC0-1.0"]) == 0
    _, run = write_export(toy, tmp_path / "toy.run")
    _, qrels = write_export(toy, tmp_path / "toy.qrels", "qrels")
    assert (tmp_path / "toy.run").read_bytes() == EXPECTED_RUN.encode()
    assert (tmp_path / "toy.qrels").read_bytes() == EXPECTED_QRELS.encode()
    assert (run["lines"], qrels["lines"]) == (8, 8)
    write_export(toy, tmp_path / "tagged.run", tag="mine")
    assert (tmp_path / "tagged.run").read_text() == EXPECTED_RUN.replace(" toy\n", " mine\n")
