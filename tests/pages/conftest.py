"""Fixtures for the dashboard tests: an AppTest factory reading the fixture warehouse (built
once per session, ``tests/conftest.py``), and a way to read what a download button would
hand over."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


class _RecordingStorage:
    """Every in-memory media store AppTest creates, so a download's bytes can be read."""

    stores: list = []


@pytest.fixture
def app(monkeypatch, fixture_warehouse):
    """``app(db=None)`` -> a fresh AppTest of app.py reading ``db`` (default: the fixture)."""
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    from streamlit.testing.v1 import AppTest
    import streamlit.testing.v1.app_test as app_test

    class Recording(MemoryMediaFileStorage):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            _RecordingStorage.stores.append(self)

    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", Recording)
    monkeypatch.chdir(REPO)

    def make(db=None):
        monkeypatch.setenv("HARNESS_WAREHOUSE", str(db or fixture_warehouse["db"]))
        return AppTest.from_file(str(REPO / "app.py"), default_timeout=120)

    return make


def download_bytes(button) -> bytes:
    """The bytes a rendered ``st.download_button`` serves."""
    from streamlit.runtime.media_file_storage import MediaFileStorageError

    file_id = Path(button.proto.url).stem
    for store in reversed(_RecordingStorage.stores):
        try:
            return store.get_file(file_id).content
        except MediaFileStorageError:  # another run's store: look further back
            continue
    raise AssertionError(f"no stored media file for {button.proto.url}")
