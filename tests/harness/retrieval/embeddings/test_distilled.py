"""The hard-drift pair: MiniLM -> a static model distilled from it with model2vec (384 ->
256).  The distillation (about 40 s on two cores) runs once and is kept in pytest's cache
directory (a temporary one without the cache plugin), keyed by the base weights, the
parameters and the model2vec version."""

from __future__ import annotations

import json

import pytest

from harness.retrieval.embeddings.encoders import weights_sha256
from harness.retrieval.embeddings.profiles import resolve_profile
from harness.studies.embedding_migration.decision import decide
from harness.retrieval.embeddings.models import MODELS_DIR, distilled_dir, ensure_distilled


@pytest.mark.slow
def test_the_distilled_pair_has_no_unadapted_baseline(request, migrate, migration_cache, tmp_path,
                                                       tmp_path_factory):
    cache = getattr(request.config, "cache", None)       # None under -p no:cacheprovider
    models = (cache.mkdir("migration-models") if cache is not None
              else tmp_path_factory.mktemp("migration-models"))
    profile = resolve_profile("minilm-static-256")
    built = ensure_distilled(profile, models)
    assert ensure_distilled(profile, models) == built                    # built once, reused
    link = migration_cache / MODELS_DIR
    if not link.exists():
        link.symlink_to(models, target_is_directory=True)
    assert migrate("minilm", "minilm-static-256", tmp_path / "static") == 0
    doc = json.loads((tmp_path / "static" / "migration.json").read_text(encoding="utf-8"))
    new = doc["models"]["new"]
    assert new["dimension"] == 256 and new["kind"] == "distilled"
    assert new["weights_sha256"] == weights_sha256(built)                 # the real files
    assert new["built_as"] == built.name
    assert built == distilled_dir(profile, doc["models"]["old"]["weights_sha256"], models)
    assert "hard drift" in new["situation"]
    for tier in ("T0", "T1"):
        t = doc["tiers"][tier]
        assert t["unadapted"] is None and "256 dimensions and OLD 384" in t["unadapted_reason"]
        assert t["arr"]["lower"] <= t["arr"]["estimate"] <= t["arr"]["upper"]
        # the decision follows from the numbers the report states
        gain = t["gain"]["estimate"] if t["gain"] else None
        assert decide(t["arr"]["estimate"], t["old_retention"]["estimate"], gain,
                      thresholds=doc["thresholds"]).decision == t["decision"]["decision"]
