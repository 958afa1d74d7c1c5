"""Shared test fixtures: the repository root, the optional real data beside it, and a real
OpenSearch node (started once per session when its tests run)."""

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


@pytest.fixture(scope="session")
def opensearch_node():
    """A real single-node OpenSearch 2.19 (``tests.servers.opensearch``) on 127.0.0.1:
    started once, waited for until yellow (at most 60 s), stopped by process at teardown.

    Skips with the reason when Java or the built node is missing, unless
    ``$REQUIRE_OPENSEARCH`` is 1 (``.ci/run`` sets it): then the tests fail instead."""
    from tests.servers import opensearch

    ok, why = opensearch.available()
    if not ok:
        opensearch.unavailable(why)
    node = opensearch.start_node(timeout=opensearch.START_TIMEOUT)
    try:
        yield node
    finally:
        node.stop()
