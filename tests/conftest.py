"""Shared test fixtures: the repository root and the optional real data beside it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
QMSUM_VAL = SHARED / "data" / "qmsum-val"

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO


@pytest.fixture(scope="session")
def qmsum_val() -> Path:
    """The real QMSum validation split, when it lies beside the repository."""
    if not (QMSUM_VAL / "data").is_dir():
        pytest.skip(f"real QMSum validation split not found at {QMSUM_VAL} "
                    "(it lies beside the repository on development machines only)")
    return QMSUM_VAL
