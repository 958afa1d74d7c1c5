"""Fixtures of the answer tests: one small synthetic corpus, its filled SQLite store, and the
session's PostgreSQL server (shared with the transcript-store tests)."""

from __future__ import annotations

import pytest

from tests.ingestion.transcripts.postgres_server import postgres  # noqa: F401 (fixture)

SEED = 11
MEETINGS = 30


@pytest.fixture(scope="session")
def corpus_dir(tmp_path_factory):
    from ingestion.synthetic import generate

    return generate(SEED, MEETINGS, tmp_path_factory.mktemp("answers") / "synthetic")


@pytest.fixture(scope="session")
def corpus(corpus_dir):
    from ingestion import load_corpus

    return load_corpus(f"synthetic:{corpus_dir}")


@pytest.fixture(scope="session")
def store(corpus, tmp_path_factory):
    """A SQLite transcript store holding ``corpus`` (treat as read-only)."""
    from ingestion.transcripts import fill, open_store

    s = open_store("sqlite:///" + str(tmp_path_factory.mktemp("store") / "transcripts.sqlite"))
    fill(s, corpus, progress=False)
    yield s
    s.close()
