"""``harness label`` in the terminal (issue 38 item 3): label, skip, undo, quit, driven on
stdin; the labels file is whole after every answer and read back strictly; a tier-B corpus is
refused to an annotator limited to tier A."""

from __future__ import annotations


from harness.claims.labels import read_labels

from tests.harness.cli.label_helpers import RUN, _beir, _harness


def test_label_skip_undo_quit(tmp_path):
    beir = _beir(tmp_path)
    (tmp_path / "run.trec").write_text(RUN)
    assert _harness("pool", "run.trec", "--out", "pool.jsonl", cwd=tmp_path).returncode == 0
    # the BEIR loader keeps the judged queries only: the rest come from --queries
    args = ["label", "--pool", "pool.jsonl", "--corpus", f"beir:{beir}", "--queries",
            str(beir / "queries.jsonl"), "--rater", "ana", "--out", "ana.jsonl", "--overlap", "0"]
    # the queue: q1 d1, q2 d3 (rank 1 of one run each), then q1 d2
    done = _harness(*args, cwd=tmp_path, stdin="2\nx\ns\n0\nu\n1\nq\n")
    # 2: q1 d1; x: unknown; s: skip q2 d3; 0: q1 d2; only q2 d3 (skipped) is left, shown
    # again; u: undo q1 d2, which is shown next; 1: q1 d2; q: quit at q2 d3
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "0 labelled by you, 3 left for you; pool 0 of 3 pairs done" in out
    assert "document d1:\n[recording] [equipment] set up" in out  # terms marked
    assert "unknown answer 'x'" in out
    assert "only the 1 pair(s) you skipped are left: showing them again" in out
    assert "undone: your label of (q1, d2)" in out
    after_undo = out.split("undone: your label of (q1, d2)")[1]
    assert after_undo.index("document d2:") < after_undo.index("document d3:")
    labels = read_labels([tmp_path / "ana.jsonl"])
    # 2 for q1 d1; 0 for q1 d2 undone and relabelled 1; q2 d3 not labelled
    assert [(x.query_id, x.doc_id, x.label) for x in labels] == [("q1", "d1", 2), ("q1", "d2", 1)]
    again = _harness(*args, cwd=tmp_path, stdin="3\n")
    assert "2 labelled by you, 1 left for you" in again.stdout
    assert "nothing left in your queue" in again.stdout
    assert len(read_labels([tmp_path / "ana.jsonl"])) == 3
    # bo's queue skips what ana finished (one label each needed)
    bo = _harness("label", "--pool", "pool.jsonl", "--corpus", f"beir:{beir}", "--rater", "bo",
                  "--queries", str(beir / "queries.jsonl"), "--out", "bo.jsonl", "--others", "ana.jsonl",
                  "--overlap", "0", cwd=tmp_path)
    assert "nothing left in your queue" in bo.stdout and not (tmp_path / "bo.jsonl").exists()


def test_refusals(tmp_path):
    beir = _beir(tmp_path)
    (tmp_path / "run.trec").write_text(RUN)
    assert _harness("pool", "run.trec", "--out", "pool.jsonl", cwd=tmp_path).returncode == 0
    (tmp_path / "notes.txt").write_text("mine\n")
    base = ["label", "--pool", "pool.jsonl", "--corpus", f"beir:{beir}", "--rater", "ana"]
    kept = _harness(*base, "--out", "notes.txt", cwd=tmp_path, stdin="1\n")
    assert kept.returncode == 2 and (tmp_path / "notes.txt").read_text() == "mine\n"
    # a BEIR corpus with no licence given is tier B: not shown to a tier-A-only annotator
    outside = _harness(*base, "--out", "a.jsonl", "--max-tier", "A", cwd=tmp_path, stdin="1\n")
    assert outside.returncode == 2 and "is tier B" in outside.stderr
    assert not (tmp_path / "a.jsonl").exists()
