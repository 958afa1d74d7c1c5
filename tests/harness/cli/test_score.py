"""``python -m harness score | compare | demo`` end to end."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path


from harness.cli import main

from tests.harness.cli.helpers import make_inputs

REPO = Path(__file__).resolve().parents[3]


def cli(args: list[str], seed: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=300)


CLAIM_FILES = ("metrics.json", "metrics.md", "per_query.jsonl", "rankings.jsonl")


def test_metrics_json_is_byte_identical_across_runs_and_hash_seeds(tmp_path):
    qrels, run, classes = make_inputs(tmp_path)
    outputs = []
    for i, seed in enumerate(["0", "4242"]):
        out = tmp_path / f"try{i}" / "ctl"
        proc = cli(["score", "--qrels", str(qrels), "--run", str(run), "--query-classes", str(classes),
                    "--corpus-name", "toy", "--licence", "CC0-1.0", "--tier", "A", "--out", str(out),
                    "--no-warehouse"], seed)
        assert proc.returncode == 0, proc.stderr
        outputs.append({name: (out / name).read_bytes() for name in CLAIM_FILES})
        assert json.loads((out / "runinfo.json").read_text())["elapsed_seconds"] >= 0
    assert outputs[0] == outputs[1]
    doc = json.loads(outputs[0]["metrics.json"])
    rows = {(r["corpus"], r["query_class"]): r for r in doc["rows"]}
    assert set(rows) == {("toy", "lookup"), ("toy", "summarize"), ("toy", "all")}
    assert rows[("toy", "all")]["queries_unanswered"] == 1
    assert rows[("toy", "all")]["queries_dropped_unjudgeable"] == 1
    assert rows[("toy", "all")]["n"] == 39
    assert doc["metric_engine"]["name"] == "pytrec_eval_terrier"
    assert doc["relevance_policy"]["binary"] is False
    assert doc["corpora"][0]["tier"] == "A"


def test_score_defaults_fail_closed_to_tier_b_and_measures_are_selectable(tmp_path, capsys):
    qrels, run, _ = make_inputs(tmp_path)
    out = tmp_path / "out"
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(out),
                 "--measures", "MRR", "nDCG@10", "--binary-relevance", "--no-warehouse"]) == 0
    doc = json.loads((out / "metrics.json").read_text())
    assert doc["corpora"][0]["tier"] == "B" and doc["corpora"][0]["name"] == "qrels"
    # Judged@10 is reported even though --measures leaves it out
    assert sorted(doc["rows"][0]["metrics"]) == ["Judged@10", "MRR", "nDCG@10"]
    assert doc["relevance_policy"]["binary"] is True
    assert "| qrels | B | all |" in capsys.readouterr().out


def test_bad_input_exits_2_naming_file_line_and_field(tmp_path, capsys):
    qrels, run, _ = make_inputs(tmp_path)
    run.write_text(run.read_text() + "q01 Q0 extra 99 nan sys\n")
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(tmp_path / "o"),
                 "--no-warehouse"]) == 2
    err = capsys.readouterr().err
    lines = run.read_text().count("\n")
    assert f"{run}:{lines}: field 'score': score must be finite" in err
    assert not (tmp_path / "o").exists()


def test_compare_prints_the_delta_table_and_flags_differing_n(tmp_path, capsys):
    qrels, run, classes = make_inputs(tmp_path)
    a, b = tmp_path / "a", tmp_path / "b"
    common = ["--query-classes", str(classes), "--corpus-name", "toy", "--licence", "CC0-1.0",
              "--tier", "A", "--no-warehouse"]
    assert main(["score", "--qrels", str(qrels), "--run", str(run), "--out", str(a), *common]) == 0
    # the candidate: the same run with one more lookup query in the qrels
    (tmp_path / "qrels2.txt").write_text(qrels.read_text() + "q99 0 m0_1 1\n")
    (tmp_path / "classes2.tsv").write_text(classes.read_text() + "q99\tlookup\n")
    assert main(["score", "--qrels", str(tmp_path / "qrels2.txt"), "--run", str(run), "--out", str(b),
                 "--query-classes", str(tmp_path / "classes2.tsv"), "--corpus-name", "toy",
                 "--licence", "CC0-1.0", "--tier", "A", "--no-warehouse"]) == 0
    capsys.readouterr()
    assert main(["compare", str(a / "metrics.json"), str(b)]) == 0
    text = capsys.readouterr().out
    ctl = {(r["corpus"], r["query_class"]): r for r in json.loads((a / "metrics.json").read_text())["rows"]}
    cand = {(r["corpus"], r["query_class"]): r for r in json.loads((b / "metrics.json").read_text())["rows"]}
    head = ("| corpus | class | n | nDCG@10 control | nDCG@10 candidate | Δ nDCG@10 | Δ nDCG@5 | Δ MRR "
            "| Δ R@10 |")
    assert head in text
    s = ctl[("toy", "summarize")]
    assert (f"| toy | summarize | {s['n']} | {s['metrics']['nDCG@10']:.4f} | "
            f"{s['metrics']['nDCG@10']:.4f} | +0.0000 |") in text
    n_a, n_b = ctl[("toy", "lookup")]["n"], cand[("toy", "lookup")]["n"]
    assert n_b == n_a + 1
    assert f"| toy | lookup | {n_a} vs {n_b} (differs) |" in text
    assert "- toy / lookup: different query counts; the delta is not paired" in text
    assert "- corpus toy: sha256 differs" in text  # a different qrels file


def test_demo_scores_the_bundled_example(tmp_path, capsys):
    assert main(["demo", "--toy", "--out", str(tmp_path / "toy")]) == 0
    text = capsys.readouterr().out
    # q1: chunk 3 (grade 2) before chunk 4 (0) at 0.9, chunk 10 (1) third
    q1 = (2 / math.log2(2) + 1 / math.log2(4)) / (2 / math.log2(2) + 1 / math.log2(3))
    q3 = 1 / math.log2(3)  # the negative label ranks first, the relevant second
    lookup = (q1 + q3 + 0) / 3  # q4 unanswered
    assert f"| toy | A | lookup | 3 | {lookup:.4f} |" in text
    assert "| toy | A | summarize | 1 | 1.0000 |" in text  # the chunk outranks the tied digest
    doc = json.loads((tmp_path / "toy" / "metrics.json").read_text())
    assert doc["judgements"]["negative_labels"] == 1


def test_score_loads_only_its_own_command_and_no_numpy(tmp_path):
    """``python -m harness score`` imports its own command module (and what it uses), not
    every command's, and not numpy: a short run's time is mostly start-up otherwise."""
    import subprocess
    import sys

    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 0.9 t\nq1 Q0 d2 2 0.5 t\nq2 Q0 d1 1 0.7 t\n")
    probe = (
        "import sys\n"
        "from harness.cli import main\n"
        "code = main(['score', '--qrels', 'qrels.txt', '--run', 'run.txt', '--out', 'out',"
        " '--no-warehouse'])\n"
        "print(code, sorted(m for m in sys.modules if m.startswith('harness.cli.')),"
        " 'numpy' in sys.modules, file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                          text=True, check=True)
    code, rest = done.stderr.strip().split(" ", 1)
    assert code == "0" and (tmp_path / "out" / "metrics.json").is_file()
    assert rest == "['harness.cli.ingest', 'harness.cli.score'] False", done.stderr


def test_help_still_lists_every_command():
    from harness.cli import COMMANDS, _available, build_parser

    text = build_parser(_available()).format_help()
    assert all(name in text for name in COMMANDS)


TOY = REPO / "examples" / "toy"


def _notes(capsys) -> list[str]:
    """The lines ``harness score`` prints after ``wrote DIR``."""
    lines = capsys.readouterr().out.splitlines()
    return lines[[i for i, line in enumerate(lines) if line.startswith("wrote ")][-1] + 1:]


def test_score_says_what_keeps_a_run_unpublishable_and_where_its_corpus_name_came_from(
        tmp_path, capsys):
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes((TOY / "qrels.txt").read_bytes())
    assert main(["score", "--qrels", str(qrels), "--run", str(TOY / "run.txt"),
                 "--out", str(tmp_path / "a"), "--no-warehouse"]) == 0
    # the toy run ties q1 (0.9, 0.9) and q2 (0.033, 0.033): two queries, one line
    assert _notes(capsys) == [
        "tier B: no licence given (--licence); the run is hidden from the publishable view",
        "corpus name 'qrels' was taken from the qrels file name; give --corpus-name NAME to "
        "call it something else",
        "2 queries had tied scores (equal as the single-precision floats trec_eval's engine "
        "reads), ranked by the full scores, then (doc_type, file_id, chunk_index); trec_eval "
        "alone would have ordered each tie by document id",
    ]


def test_a_named_publishable_untied_run_prints_no_note(tmp_path, capsys):
    run = tmp_path / "run.txt"
    run.write_text("q1 Q0 ES2006a_4 1 0.9 t\nq1 Q0 ES2006a_3 2 0.8 t\n"
                   "q3 Q0 covid_2_1 1 12.5 t\n")
    assert main(["score", "--qrels", str(TOY / "qrels.txt"), "--run", str(run),
                 "--corpus-name", "toy", "--licence", "CC0-1.0", "--out", str(tmp_path / "a"),
                 "--no-warehouse"]) == 0
    assert _notes(capsys) == []
    # a licence that is not publishable, and a tie only single precision sees
    run.write_text("q1 Q0 ES2006a_4 1 0.50000000001 t\nq1 Q0 ES2006a_3 2 0.5 t\n")
    assert main(["score", "--qrels", str(TOY / "qrels.txt"), "--run", str(run),
                 "--corpus-name", "toy", "--licence", "CC-BY-NC-4.0", "--out",
                 str(tmp_path / "b"), "--no-warehouse"]) == 0
    notes = _notes(capsys)
    assert notes[0] == ("tier B: licence CC-BY-NC-4.0 is not publishable; the run is hidden "
                        "from the publishable view")
    assert notes[1].startswith("1 query had tied scores") and len(notes) == 2
