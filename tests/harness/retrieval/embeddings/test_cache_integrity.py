"""The embedding cache serves only vectors as they were written.

Each case damages ``embeddings.sqlite`` the way the issue did (random unit vectors in place
of the stored ones, NaN, truncated rows, a file that is not a database, a malformed page, a
cache from before checksums) or fills the disk under it; the second pass must return exactly
the first pass's vectors (the texts re-embedded by the model), say what it dropped, and never
fail on a later run.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3

import numpy as np
import pytest

from harness.retrieval.embeddings.cache import CACHE_FILE, CachedEncoder, EmbeddingCache, \
    vector_checksum
from tests.harness.retrieval.stand_in_encoder import StandInEncoder

TEXTS = [f"text number {i}" for i in range(40)]


class _HashEncoder(StandInEncoder):
    """Unit vectors made from the text's sha256; records what it was asked to embed."""

    def __init__(self, dimension=8):
        super().__init__("fake/model", "q: ", "d: ", dimension, "w" * 64)

    def vectors(self, texts):
        rows = np.stack([np.frombuffer(hashlib.sha256(t.encode()).digest()[:self.dimension],
                                       dtype=np.uint8).astype(np.float32) + 1 for t in texts])
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _first_pass(cache_dir):
    encoder = _HashEncoder()
    with EmbeddingCache(cache_dir) as cache:
        vectors = CachedEncoder(encoder, cache, progress=False).encode_documents(TEXTS)
    assert len(encoder.encoded) == len(TEXTS)
    return vectors


def _second_pass(cache_dir):
    encoder = _HashEncoder()
    with EmbeddingCache(cache_dir) as cache:
        cached = CachedEncoder(encoder, cache, progress=False)
        vectors = cached.encode_documents(TEXTS)
    return vectors, encoder.encoded, cached.stats.block()


def _rows(cache_dir, limit):
    with sqlite3.connect(cache_dir / CACHE_FILE) as conn:
        return conn.execute("SELECT model_id, weights_sha256, text_sha256, dimension, vector "
                            "FROM embeddings ORDER BY text_sha256 LIMIT ?", (limit,)).fetchall()


def _set(cache_dir, rows):
    """``[(key..., dimension, vector blob, checksum)]`` written over the stored rows."""
    with sqlite3.connect(cache_dir / CACHE_FILE) as conn:
        conn.executemany("UPDATE embeddings SET dimension = ?, vector = ?, checksum = ? "
                         "WHERE model_id = ? AND weights_sha256 = ? AND text_sha256 = ?",
                         [(d, v, c, m, w, t) for m, w, t, d, v, c in rows])


def _random_unit(dimension, seed):
    v = np.random.default_rng(seed).normal(size=dimension).astype("<f4")
    return (v / np.linalg.norm(v)).astype("<f4").tobytes()


def test_random_unit_vectors_in_place_of_the_stored_ones_are_re_embedded(tmp_path):
    first = _first_pass(tmp_path)
    rows = _rows(tmp_path, 10)
    # the issue's edit: other vectors, the rows' checksums left as they were
    with sqlite3.connect(tmp_path / CACHE_FILE) as conn:
        conn.executemany("UPDATE embeddings SET vector = ? WHERE text_sha256 = ?",
                         [(_random_unit(d, i), t) for i, (_, _, t, d, _) in enumerate(rows)])
    vectors, embedded, stats = _second_pass(tmp_path)
    assert np.array_equal(vectors, first)
    assert len(embedded) == 10
    assert stats["cache"] == {"damaged_vectors": 10}
    again, embedded, stats = _second_pass(tmp_path)  # replaced: whole again
    assert np.array_equal(again, first) and embedded == [] and "cache" not in stats


@pytest.mark.parametrize("damage", ["nan", "infinite", "truncated", "no checksum"])
def test_nan_truncated_and_unchecked_rows_are_damaged_rows(tmp_path, damage):
    first = _first_pass(tmp_path)
    model, weights, sha, dim, blob = _rows(tmp_path, 1)[0]
    if damage in ("nan", "infinite"):
        values = np.frombuffer(blob, "<f4").copy()
        values[3] = np.nan if damage == "nan" else np.inf
        blob = values.tobytes()
    elif damage == "truncated":
        blob = blob[:4 * dim - 6]
    # a checksum that matches what is stored: only the length or values give it away
    checksum = None if damage == "no checksum" else vector_checksum(model, weights, sha, dim, blob)
    _set(tmp_path, [(model, weights, sha, dim, blob, checksum)])
    vectors, embedded, stats = _second_pass(tmp_path)
    assert np.array_equal(vectors, first)
    assert len(embedded) == 1 and stats["cache"] == {"damaged_vectors": 1}


def test_a_cache_written_before_checksums_is_read_and_its_rows_re_embedded(tmp_path):
    with sqlite3.connect(tmp_path / CACHE_FILE) as conn:  # the former schema
        conn.execute("CREATE TABLE embeddings (model_id TEXT NOT NULL, weights_sha256 TEXT NOT "
                     "NULL, text_sha256 TEXT NOT NULL, dimension INTEGER NOT NULL, vector BLOB "
                     "NOT NULL, PRIMARY KEY (model_id, weights_sha256, text_sha256)) WITHOUT ROWID")
        conn.execute("INSERT INTO embeddings VALUES (?, ?, ?, ?, ?)",
                     ("fake/model", "w" * 64, hashlib.sha256(b"d: " + TEXTS[0].encode()).hexdigest(),
                      8, _random_unit(8, 1)))
    vectors, embedded, stats = _second_pass(tmp_path)
    assert np.array_equal(vectors, _HashEncoder().vectors(["d: " + t for t in TEXTS]))
    assert len(embedded) == len(TEXTS) and stats["cache"] == {"damaged_vectors": 1}


@pytest.mark.parametrize("how", ["not a database", "malformed page"])
def test_a_damaged_file_is_set_aside_and_rebuilt_not_an_error_forever(tmp_path, how, caplog):
    first = _first_pass(tmp_path)
    path = tmp_path / CACHE_FILE
    with sqlite3.connect(path) as conn:  # fold the write-ahead log into the file
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(path.read_bytes())
    if how == "not a database":
        data[:100] = bytes(range(100))  # the header gone
    else:
        page = int.from_bytes(data[16:18], "big")
        assert len(data) >= 3 * page
        data[page:len(data)] = bytes([0xA5]) * (len(data) - page)  # every page after the first
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING):
        vectors, embedded, stats = _second_pass(tmp_path)
    assert np.array_equal(vectors, first)
    assert len(embedded) == len(TEXTS)
    assert "set aside" in stats["cache"]["rebuilt"]
    assert (tmp_path / (CACHE_FILE + ".damaged")).read_bytes() == bytes(data)  # kept, not lost
    assert "cannot be read" in caplog.text
    again, embedded, stats = _second_pass(tmp_path)
    assert np.array_equal(again, first) and embedded == [] and "cache" not in stats


def test_a_full_disk_stops_the_cache_writes_and_the_run_goes_on(tmp_path, caplog):
    encoder = _HashEncoder()
    with EmbeddingCache(tmp_path) as cache:
        # SQLite's own limit: no page beyond those the file holds now (SQLITE_FULL, as a
        # full disk gives)
        pages = cache._conn.execute("PRAGMA page_count").fetchone()[0]
        cache._conn.execute(f"PRAGMA max_page_count = {pages}")
        cached = CachedEncoder(encoder, cache, block_size=4, progress=False)
        with caplog.at_level(logging.WARNING):
            vectors = cached.encode_documents(TEXTS)
        stats = cached.stats.block()
    assert np.array_equal(vectors, _HashEncoder().vectors(["d: " + t for t in TEXTS]))
    assert "full" in stats["cache"]["writes_stopped"]
    assert caplog.text.count("no more vectors are stored") == 1  # one warning, not one a block
