"""Fixtures of the transcript-store tests: a loaded synthetic corpus and a PostgreSQL server."""

from __future__ import annotations

import pytest

from tests.ingestion.transcripts import postgres_server


@pytest.fixture(scope="session")
def synthetic_corpus(synthetic_dir):
    """The session's synthetic corpus (tests/ingestion/conftest.py), loaded."""
    from ingestion import load_corpus

    return load_corpus(f"synthetic:{synthetic_dir}")


@pytest.fixture(scope="session")
def postgres():
    """A PostgreSQL server on 127.0.0.1 for the session (skips when the binaries are absent)."""
    reason = postgres_server.why_unavailable()
    if reason:
        pytest.skip(reason)
    server = postgres_server.acquire()
    try:
        yield server
    finally:
        postgres_server.release()
