"""A migration report built by hand (independent of the study that writes real ones)."""

from __future__ import annotations


def migration_document(*, corpus="meetings", licence="CC-BY-NC-4.0", tier="B") -> dict:
    """A minimal migration report, built by hand: one tier (T1) and its decision."""
    def iv(estimate):
        return {"estimate": estimate, "lower": estimate - 0.05, "upper": estimate + 0.05}

    decision = {"decision": "no_upgrade_needed", "rule": "gain below the floor",
                "reason": "r", "flags": [], "straddles": []}
    model = {"model_id": "m", "weights_sha256": "0" * 64, "label": "m", "dimension": 8}
    return {
        "kind": "migration", "schema_version": 1, "corpus": corpus, "tier": tier,
        "corpora": [{"name": corpus, "version": "1", "licence": licence, "tier": tier,
                     "evidence": f"licence {licence} declared (test)", "sha256": "1" * 64,
                     "registry_source": None, "files": 3, "chunks": 30}],
        "models": {"old": model, "new": {**model, "model_id": "n", "label": "n"}},
        "pair": {"situation": "upgrade"}, "settings": {"k": 10, "confidence": 0.95,
                                                     "resamples": 100, "seed": 0},
        "adapter": {"chosen": "identity", "parameters": 0},
        "tiers": {"T1": {"n": 20, "index_documents": 30, "recall": {"oracle": 0.8},
                         "arr": iv(0.95), "old_retention": iv(0.9), "bridge_minus_old": iv(0.0),
                         "unadapted": None, "gain": iv(1.0), "decision": decision}},
        "decision": {"tier": "T1", **decision},
        "thresholds": {"gain_floor": 1.03},
    }
