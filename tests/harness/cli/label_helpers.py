"""The small BEIR corpus and run the labelling commands' tests share."""

from __future__ import annotations

import json
import subprocess
import sys

RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq2 Q0 d3 1 1.0 r\n"
CORPUS = [{"_id": "d1", "title": "", "text": "recording equipment set up"},
          {"_id": "d2", "title": "", "text": "lunch menu"},
          {"_id": "d3", "title": "", "text": "budget for the recording"}]


def _beir(tmp_path):
    root = tmp_path / "beir"
    (root / "qrels").mkdir(parents=True)
    (root / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in CORPUS))
    (root / "queries.jsonl").write_text('{"_id": "q1", "text": "recording equipment"}\n'
                                        '{"_id": "q2", "text": "recording budget"}\n')
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return root


def _harness(*args, cwd, stdin=""):
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=300)
