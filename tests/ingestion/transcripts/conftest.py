"""Fixtures of the transcript-store tests: a loaded synthetic corpus and a PostgreSQL server."""

from __future__ import annotations

import pytest

from tests.ingestion.transcripts.postgres_server import postgres  # noqa: F401 (fixture)


@pytest.fixture(scope="session")
def synthetic_corpus(synthetic_dir):
    """The session's synthetic corpus (tests/ingestion/conftest.py), loaded."""
    from ingestion import load_corpus

    return load_corpus(f"synthetic:{synthetic_dir}")
