"""Shared test fixtures: the repository root, the optional real data beside it, and a real
OpenSearch node (started once per session when its tests run); and the test tiers.

The tiers are pytest markers (registered in pytest.ini): ``model`` (loads a real embedding
model), ``service`` (starts a real server: OpenSearch, PostgreSQL, S3, OIDC), ``browser``
(drives Chromium), ``slow``.  ``make test-fast`` runs everything else; ``make test`` runs
every tier.  A test that uses a fixture of :data:`FIXTURE_TIERS` (directly or through
another fixture) is marked here at collection; and a test outside the ``model`` tier that
imports a model library fails, naming the marker it lacks (:data:`MODEL_LIBRARIES`)."""

from __future__ import annotations

import os
import sys
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
def fixture_warehouse(tmp_path_factory):
    """The dashboard's fixture warehouse (:mod:`tests.pages.fixture_warehouse`), built once per
    session for every test that only reads it (the pages, the exports); a test that writes
    to a warehouse builds its own."""
    from tests.pages.fixture_warehouse import build

    return build(tmp_path_factory.mktemp("fixture-warehouse"))


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


#: fixture -> the tier of every test that uses it, directly or through another fixture
FIXTURE_TIERS = {
    "opensearch_node": "service",       # a real OpenSearch node (tests/servers/opensearch.py)
    "postgres": "service",              # a real PostgreSQL server (initdb on 127.0.0.1)
    "minilm_path": "model",             # the packaged MiniLM weights
    "random_cross_encoder": "model",    # a cross-encoder built from them with torch
    "migrate": "model",                 # `harness migrate` embedding with MiniLM
    "s3_server": "service",             # a real S3 API (moto's server on 127.0.0.1)
}

#: libraries only a ``model`` test may import (each takes seconds; model2vec alone does not
#: load torch, so a tiny random static model is not a model test)
MODEL_LIBRARIES = ("torch", "sentence_transformers", "transformers", "onnxruntime")


def pytest_collection_modifyitems(items):
    for item in items:
        for tier in sorted({FIXTURE_TIERS[f] for f in item.fixturenames if f in FIXTURE_TIERS}):
            item.add_marker(tier)


_LOADED_BEFORE = pytest.StashKey[set]()


def _model_libraries() -> set[str]:
    return {name for name in MODEL_LIBRARIES if name in sys.modules}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    item.stash[_LOADED_BEFORE] = _model_libraries()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    result = yield
    new = _model_libraries() - item.stash.get(_LOADED_BEFORE, set())
    if new and item.get_closest_marker("model") is None:
        pytest.fail(f"{item.nodeid} imported {sorted(new)} (its fixtures or the test) without "
                    "the `model` marker: mark it @pytest.mark.model (or give its fixture a "
                    "tier in tests/conftest.py FIXTURE_TIERS)", pytrace=False)
    return result


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
