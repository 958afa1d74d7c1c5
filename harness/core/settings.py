"""Every environment variable the product reads, with its default: read here and nowhere else.

==========================  ==========================================  ===========================
variable                    what                                        default
==========================  ==========================================  ===========================
``HARNESS_WAREHOUSE``       the DuckDB warehouse file                   ``./warehouse.duckdb``
``HARNESS_CACHE``           embedding cache                             ``./cache``
``HARNESS_PREPARED_CACHE``  prepared corpora and BM25 indexes           ``prepared`` in the cache dir
``HARNESS_MODELS``          models built once per machine (distilled,   ``~/.cache/retrieval-eval/models``
                            ONNX exports)
``HARNESS_RERANKER``        cross-encoder weights for the rerank stage  none (rerank refuses)
``INGESTION_DATA_DIR``      where ``ingestion fetch`` puts corpora      ``~/.cache/retrieval-eval/corpora``
``OPENSEARCH_URL``          the OpenSearch node ``--backend opensearch``  none
``GITHUB_STEP_SUMMARY``     CI step summary a gate appends to           none
``HARNESS_SIGNING_KEY``     Ed25519 private key (PEM file) that signs   none (unsigned)
                            every results directory written
==========================  ==========================================  ===========================

Each is read when asked for (never at import), so a test or a command can set it first.
"""

from __future__ import annotations

import os
from pathlib import Path

WAREHOUSE = "HARNESS_WAREHOUSE"
WAREHOUSE_DEFAULT = "warehouse.duckdb"
CACHE = "HARNESS_CACHE"
CACHE_DEFAULT = "cache"
PREPARED_CACHE = "HARNESS_PREPARED_CACHE"
PREPARED_CACHE_DEFAULT = "prepared"
MODELS = "HARNESS_MODELS"
RERANKER = "HARNESS_RERANKER"
DATA_DIR = "INGESTION_DATA_DIR"
OPENSEARCH_URL = "OPENSEARCH_URL"
STEP_SUMMARY = "GITHUB_STEP_SUMMARY"
SIGNING_KEY = "HARNESS_SIGNING_KEY"

#: model libraries never reach a hub: weights come from packages or local folders
OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def _get(name: str) -> str | None:
    return os.environ.get(name) or None


def warehouse_path() -> Path:
    """``$HARNESS_WAREHOUSE`` if set, else ``warehouse.duckdb`` in the working directory."""
    return Path(_get(WAREHOUSE) or WAREHOUSE_DEFAULT)


def cache_dir() -> Path:
    """``$HARNESS_CACHE`` if set, else ``./cache``."""
    return Path(_get(CACHE) or CACHE_DEFAULT)


def prepared_cache_dir(base: str | Path | None = None) -> Path:
    """``$HARNESS_PREPARED_CACHE`` if set, else ``prepared`` inside ``base`` (a command's
    ``--cache-dir``) or, without one, inside :func:`cache_dir`."""
    env = _get(PREPARED_CACHE)
    if env:
        return Path(env)
    return Path(base if base else cache_dir()) / PREPARED_CACHE_DEFAULT


def models_dir() -> Path:
    """``$HARNESS_MODELS`` if set, else ``~/.cache/retrieval-eval/models``: one folder per
    user, so a model derived from packaged weights is built once per machine, whatever
    cache folder a run uses."""
    env = _get(MODELS)
    return Path(env) if env else Path.home() / ".cache" / "retrieval-eval" / "models"


def reranker() -> str | None:
    return _get(RERANKER)


def data_dir() -> Path:
    """``$INGESTION_DATA_DIR`` or ``~/.cache/retrieval-eval/corpora``."""
    env = _get(DATA_DIR)
    return Path(env) if env else Path.home() / ".cache" / "retrieval-eval" / "corpora"


def opensearch_url() -> str | None:
    return _get(OPENSEARCH_URL)


def step_summary() -> str | None:
    return _get(STEP_SUMMARY)


def signing_key() -> Path | None:
    """``$HARNESS_SIGNING_KEY``: the PEM file of the key that signs results directories."""
    env = _get(SIGNING_KEY)
    return Path(env) if env else None


def go_offline() -> None:
    """Keep model libraries off the hub (a value the user set is kept)."""
    for name, value in OFFLINE.items():
        os.environ.setdefault(name, value)
