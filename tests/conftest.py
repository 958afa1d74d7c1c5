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


@pytest.fixture(scope="session")
def s3_server():
    """A real S3 API (moto's server, ``tests.servers.s3``) on 127.0.0.1 for the session."""
    from tests.servers import s3

    ok, why = s3.available()
    if not ok:
        pytest.skip(why)
    server = s3.start_server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3_bucket(s3_server, monkeypatch, request):
    """A fresh bucket on the session's S3 server, its ``s3://`` URL returned; the AWS
    variables point this process (and the subprocesses it starts) at the server."""
    import re
    import secrets

    for name, value in s3_server.env.items():
        monkeypatch.setenv(name, value)
    name = re.sub(r"[^a-z0-9-]", "-", request.node.name.lower())[:40].strip("-")
    bucket = f"{name}-{secrets.token_hex(4)}"
    s3_server.create_bucket(bucket)
    return f"s3://{bucket}/team"
