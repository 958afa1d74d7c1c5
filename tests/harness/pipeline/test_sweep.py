"""``harness sweep``: a family of arms in one process whose every arm writes what a
separate ``harness bench`` of the same flags writes."""

from __future__ import annotations

import pytest

from harness.cli import main
from harness.pipeline.sweep import FUSION_FAMILY, fusion_family

from tests.harness.retrieval.tiny import write_beir, write_qmsum
from tests.harness.retrieval.cache.helpers import claims, runinfo

ARMS = {
    "rrf-30": ["--mode", "hybrid", "--fusion", "rrf", "--rank-constant", "30"],
    "norm-zscore": ["--mode", "hybrid", "--fusion", "normalization",
                    "--normalization-technique", "z_score"],
    "bm25-k09": ["--mode", "bm25", "--k1", "0.9"],
}


@pytest.fixture(autouse=True)
def _no_env_cache(monkeypatch):
    monkeypatch.delenv("HARNESS_PREPARED_CACHE", raising=False)


@pytest.fixture
def specs(tmp_path):
    root = tmp_path / "corpora"
    return [f"qmsum:{write_qmsum(root / 'qmsum')}", f"beir:{write_beir(root / 'beir')}"]


def _shared(specs, cache):
    argv = ["--cache-dir", str(cache), "--no-warehouse", "--no-progress", "--size", "12"]
    for spec in specs:
        argv += ["--corpus", spec]
    return argv


def _arms_file(path, arms):
    path.write_text("# name then flags\n" + "".join(
        f"{name} {' '.join(flags)}\n" for name, flags in arms.items()), encoding="utf-8")
    return path


@pytest.mark.model  # the hybrid arms embed with MiniLM
def test_each_sweep_arm_is_byte_identical_to_its_own_bench(specs, tmp_path):
    shared = _shared(specs, tmp_path / "cache")
    arms = _arms_file(tmp_path / "arms.txt", ARMS)
    assert main(["sweep", "--arms", str(arms), "--out", str(tmp_path / "sweep"), *shared]) == 0
    for name, flags in ARMS.items():
        alone = tmp_path / "alone" / name
        assert main(["bench", "--out", str(alone), "--control-name", name, *shared,
                     *flags]) == 0
        assert claims(tmp_path / "sweep" / name) == claims(alone), name
    info = {name: runinfo(tmp_path / "sweep" / name)["sweep"] for name in ARMS}
    # the two hybrid arms share one index and one search of the legs; BM25 alone has its own
    assert info["rrf-30"]["index_shared"] is False and info["rrf-30"]["legs_from"] is None
    assert info["norm-zscore"]["index_shared"] is True
    assert info["norm-zscore"]["legs_from"] == "rrf-30"
    assert info["bm25-k09"]["index_shared"] is False
    method = runinfo(tmp_path / "sweep" / "norm-zscore")["retrieval_latency_ms"]["method"]
    assert "fusion (and rerank) only" in method


@pytest.mark.model  # the hybrid arms embed with MiniLM
def test_without_shared_legs_every_arm_searches_its_own(specs, tmp_path):
    arms = _arms_file(tmp_path / "arms.txt", {k: ARMS[k] for k in ("rrf-30", "norm-zscore")})
    assert main(["sweep", "--arms", str(arms), "--out", str(tmp_path / "sweep"),
                 "--no-share-legs", *_shared(specs, tmp_path / "cache")]) == 0
    info = runinfo(tmp_path / "sweep" / "norm-zscore")
    assert info["sweep"]["legs_from"] is None and info["sweep"]["index_shared"] is True
    assert "fusion (and rerank) only" not in info["retrieval_latency_ms"]["method"]


def test_the_fusion_family_is_24_distinct_arms_whose_flags_name_them():
    from harness.cli import build_parser, _available
    from harness.pipeline.config import from_args

    arms = fusion_family()
    assert len(FUSION_FAMILY) == 24 and len(arms) == 24  # 8 RRF + 7 unweighted + 9 weighted
    parser = build_parser(_available())
    for spec in FUSION_FAMILY:
        args = parser.parse_args(["bench", "--corpus", "qmsum:x", "--out", "o",
                                  *arms[spec.arm_id]])
        assert from_args(args).fusion == spec


@pytest.mark.parametrize("line, message", [
    ("bad/name --mode bm25\n", "arms.txt:2: arm name 'bad/name'"),
    ("a --mode bm25 --corpus qmsum:x\n", "arm 'a': --corpus belong to the sweep"),
    ("a --mode bm25 --rank-constant 3\n", "arm 'a': fusion flags apply to --mode hybrid"),
    ("a --mode bm25 --no-such-flag\n", "arm 'a': unknown flags --no-such-flag"),
    ("a --mode bm25\na --mode vector\n", "arms.txt:3: arm 'a' is named twice"),
])
def test_a_bad_arms_file_is_refused_with_its_line_before_any_work(line, message, specs,
                                                                  tmp_path, capsys):
    arms = tmp_path / "arms.txt"
    arms.write_text("# arms\n" + line, encoding="utf-8")
    code = main(["sweep", "--arms", str(arms), "--out", str(tmp_path / "sweep"),
                 *_shared(specs, tmp_path / "cache")])
    assert code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "sweep").exists() and not (tmp_path / "cache").exists()


def test_an_arm_directory_a_user_owns_is_refused_before_any_work(specs, tmp_path, capsys):
    arms = _arms_file(tmp_path / "arms.txt", {"bm25-k09": ARMS["bm25-k09"]})
    mine = tmp_path / "sweep" / "bm25-k09"
    mine.mkdir(parents=True)
    (mine / "notes.txt").write_text("my notes\n", encoding="utf-8")
    code = main(["sweep", "--arms", str(arms), "--out", str(tmp_path / "sweep"),
                 *_shared(specs, tmp_path / "cache")])
    assert code == 2
    assert "this product did not write" in capsys.readouterr().err
    assert (mine / "notes.txt").read_text(encoding="utf-8") == "my notes\n"
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    assert not (tmp_path / "cache").exists()
