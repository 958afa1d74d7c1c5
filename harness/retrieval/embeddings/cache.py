"""The on-disk embedding cache: a second run over unchanged texts embeds nothing.

One SQLite file (``embeddings.sqlite``) in the cache directory (``--cache-dir``, else
``$HARNESS_CACHE``, else ``./cache``).  A vector is keyed by
``(model_id, weights_sha256, text_sha256)`` where the text is exactly what the model read
(prefix included) and the weights column holds the encoder's ``embedding_sha256`` (its
weights digest, folded with device, precision and runtime off the CPU:
:func:`harness.retrieval.embeddings.encoders.embedding_digest`), so a different model,
weights, device or prefix can never be served another's vector.  Vectors are stored as
little-endian float32 bytes and written in committed blocks: an interrupted run keeps
every block it finished and no partial row.

A vector is trusted only as it was written: each row carries the sha256 of its key, its
dimension and its bytes (``checksum``), and a row whose checksum does not match, whose
bytes are not ``dimension`` floats (truncated) or hold a value that is not finite, or that
was written before checksums (NULL) is a damaged row: it is a miss, deleted, embedded
again, and counted (``cache.damaged_vectors`` in the run's ``embedding`` block).  A file
SQLite cannot read (not a database, or a malformed page) is set aside and the cache rebuilt
empty (``cache.rebuilt``), never an error on every later run.  A full disk stops the cache's
writes with one warning (``cache.writes_stopped``); the run goes on, embedding what it needs.
"""

from __future__ import annotations

import hashlib
import logging
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from harness.core import settings
from harness.retrieval.embeddings.progress import BATCH, encode_with_progress, longest_first

import numpy as np

log = logging.getLogger(__name__)

CACHE_FILE = "embeddings.sqlite"
_LOOKUP_BATCH = 500

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    model_id TEXT NOT NULL,
    weights_sha256 TEXT NOT NULL,
    text_sha256 TEXT NOT NULL,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL,
    checksum BLOB,
    PRIMARY KEY (model_id, weights_sha256, text_sha256)
) WITHOUT ROWID
"""
#: SQLite result codes (primary): the file is damaged, or the disk is full
_CORRUPT, _FULL, _NOTADB = 11, 13, 26


def default_cache_dir() -> Path:
    return settings.cache_dir()


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def vector_checksum(model_id: str, weights: str, sha: str, dimension: int, blob: bytes) -> bytes:
    """sha256 of a row's key, dimension and vector bytes (what ``checksum`` holds)."""
    digest = hashlib.sha256(f"{model_id}\0{weights}\0{sha}\0{dimension}\0".encode("utf-8"))
    digest.update(blob)
    return digest.digest()


def _code(exc: sqlite3.Error) -> int:
    return (getattr(exc, "sqlite_errorcode", None) or 0) & 0xFF


def _damaged_file(exc: sqlite3.Error) -> bool:
    return _code(exc) in (_CORRUPT, _NOTADB) or "malformed" in str(exc) \
        or "not a database" in str(exc)


def _disk_full(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error):
        return _code(exc) == _FULL or "disk is full" in str(exc)
    return isinstance(exc, OSError) and exc.errno == 28  # ENOSPC


class EmbeddingCache:
    """Get and put vectors by ``(model_id, weights_sha256, text_sha256)``; thread-safe.

    ``events`` says what the cache did besides serving rows: damaged rows dropped, a damaged
    file rebuilt, writes stopped by a full disk (module docstring)."""

    def __init__(self, cache_dir=None):
        self.dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / CACHE_FILE
        self._lock = threading.Lock()
        self.events: dict = {}
        try:
            self._conn = self._connect()
        except sqlite3.DatabaseError as exc:
            if not _damaged_file(exc):
                raise
            self._rebuild(exc)

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=60)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(_SCHEMA)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(embeddings)")}
            if "checksum" not in columns:  # a cache written before checksums: rows re-checked
                conn.execute("ALTER TABLE embeddings ADD COLUMN checksum BLOB")
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def _rebuild(self, exc: sqlite3.Error) -> None:
        """Set the unreadable file aside (``embeddings.sqlite.damaged``) and start afresh."""
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
        aside = self.path.with_name(self.path.name + ".damaged")
        log.warning("embedding cache %s cannot be read (%s): set aside as %s and rebuilt "
                    "empty; its texts are embedded again", self.path, exc, aside.name)
        if self.path.exists():
            self.path.replace(aside)
        for suffix in ("-wal", "-shm"):
            self.path.with_name(self.path.name + suffix).unlink(missing_ok=True)
        self.events["rebuilt"] = f"{exc} (the damaged file was set aside as {aside.name})"
        self._conn = self._connect()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get(self, model_id: str, weights: str, shas: Sequence[str],
            dimension: int) -> dict[str, np.ndarray]:
        """Cached vectors for the given text digests (missing and damaged ones are absent)."""
        with self._lock:
            try:
                return self._get(model_id, weights, shas, dimension)
            except sqlite3.DatabaseError as exc:
                if not _damaged_file(exc):
                    raise
                self._rebuild(exc)
                return {}

    def _get(self, model_id: str, weights: str, shas: Sequence[str],
             dimension: int) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = sorted(set(shas))
        damaged: list[str] = []
        for start in range(0, len(unique), _LOOKUP_BATCH):
            batch = unique[start:start + _LOOKUP_BATCH]
            marks = ",".join("?" * len(batch))
            rows = self._conn.execute(
                f"SELECT text_sha256, dimension, vector, checksum FROM embeddings "
                f"WHERE model_id = ? AND weights_sha256 = ? AND text_sha256 IN ({marks})",
                (model_id, weights, *batch),
            ).fetchall()
            whole, blobs = [], []
            for sha, dim, blob, checksum in rows:
                if not isinstance(dim, int) or not isinstance(blob, bytes) \
                        or len(blob) != 4 * dim \
                        or checksum != vector_checksum(model_id, weights, sha, dim, blob):
                    damaged.append(sha)
                    continue
                if dim != dimension:  # a whole row: the model's profile contradicts it
                    raise ValueError(
                        f"embedding cache {self.path}: vector for text {sha} under "
                        f"{model_id} has dimension {dim}, expected {dimension}"
                    )
                whole.append(sha)
                blobs.append(blob)
            if whole:
                vectors = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(whole), dimension)
                finite = np.isfinite(vectors).all(axis=1)
                for sha, vector, ok in zip(whole, vectors, finite.tolist()):
                    if ok:
                        found[sha] = vector
                    else:
                        damaged.append(sha)
        if damaged:
            log.warning("embedding cache %s: %d damaged vectors under %s (checksum, length or "
                        "values); embedding their texts again", self.path, len(damaged), model_id)
            self.events["damaged_vectors"] = self.events.get("damaged_vectors", 0) + len(damaged)
            self._delete(model_id, weights, damaged)
        return found

    def _delete(self, model_id: str, weights: str, shas: list[str]) -> None:
        try:
            with self._conn:
                self._conn.executemany(
                    "DELETE FROM embeddings WHERE model_id = ? AND weights_sha256 = ? "
                    "AND text_sha256 = ?", [(model_id, weights, sha) for sha in shas])
        except sqlite3.DatabaseError as exc:
            if not _disk_full(exc):
                raise
            self._stop_writes(exc)  # (the rows are replaced when written again)

    def _stop_writes(self, exc: BaseException) -> None:
        if "writes_stopped" not in self.events:
            log.warning("embedding cache %s: %s; no more vectors are stored in it this run "
                        "(the run goes on; free space to cache them again)", self.path, exc)
            self.events["writes_stopped"] = str(exc)

    def put(self, model_id: str, weights: str, shas: Sequence[str], vectors: np.ndarray) -> None:
        """Store one block of vectors in one transaction (a vector that is not finite is not
        stored: it would be a damaged row)."""
        vectors = np.asarray(vectors, dtype="<f4")
        if len(shas) != len(vectors):
            raise ValueError(f"{len(shas)} digests for {len(vectors)} vectors")
        dim = int(vectors.shape[1]) if vectors.ndim == 2 else 0
        finite = np.isfinite(vectors).all(axis=1).tolist() if len(vectors) else []
        rows = []
        for i, sha in enumerate(shas):
            if finite[i]:
                blob = vectors[i].tobytes()
                rows.append((model_id, weights, sha, dim, blob,
                             vector_checksum(model_id, weights, sha, dim, blob)))
        with self._lock:
            if "writes_stopped" in self.events or not rows:
                return
            for attempt in (1, 2):
                try:
                    with self._conn:
                        self._conn.executemany(
                            "INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?, ?)", rows)
                    return
                except (sqlite3.DatabaseError, OSError) as exc:
                    if _disk_full(exc):
                        self._stop_writes(exc)
                        return
                    if attempt == 2 or not isinstance(exc, sqlite3.DatabaseError) \
                            or not _damaged_file(exc):
                        raise
                    self._rebuild(exc)

    def count(self, model_id: str | None = None) -> int:
        with self._lock:
            if model_id is None:
                return self._conn.execute("SELECT count(*) FROM embeddings").fetchone()[0]
            return self._conn.execute("SELECT count(*) FROM embeddings WHERE model_id = ?",
                                      (model_id,)).fetchone()[0]


@dataclass
class EmbedStats:
    """Texts embedded vs served from the cache, per role (documents / queries)."""

    requested: dict[str, int] = field(default_factory=dict)
    unique: dict[str, int] = field(default_factory=dict)
    embedded: dict[str, int] = field(default_factory=dict)
    from_cache: dict[str, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, role: str, requested: int, unique: int, embedded: int, cached: int) -> None:
        with self._lock:
            for counter, value in ((self.requested, requested), (self.unique, unique),
                                   (self.embedded, embedded), (self.from_cache, cached)):
                counter[role] = counter.get(role, 0) + value

    #: what the cache did besides serving rows (EmbeddingCache.events), when anything
    cache: dict = field(default_factory=dict)
    #: vectors pulled from a team store (SharedVectors.block), when one is given
    shared: dict = field(default_factory=dict)

    def block(self) -> dict:
        return {
            **({"cache": dict(self.cache)} if self.cache else {}),
            **({"shared_vectors": dict(self.shared)} if self.shared else {}),
            "texts_embedded": sum(self.embedded.values()),
            "texts_from_cache": sum(self.from_cache.values()),
            "by_role": {role: {"requested": self.requested.get(role, 0),
                               "unique": self.unique.get(role, 0),
                               "embedded": self.embedded.get(role, 0),
                               "from_cache": self.from_cache.get(role, 0)}
                        for role in sorted(self.requested)},
        }


def _batch(enc) -> int:
    """Texts per model batch of ``enc`` (the encoders' default when it does not say)."""
    return int(getattr(enc, "batch_size", None) or BATCH)


def _max_tokens(enc) -> int | None:
    """The model's maximum sequence length when its profile has one (what it reads at most)."""
    profile = getattr(enc, "profile", None)
    return getattr(profile, "max_seq_length", None) or None


class CachedEncoder:
    """An encoder behind the cache: only texts the cache lacks reach the model.

    ``cache=None`` embeds everything (still counted).  ``shared``
    (:class:`harness.retrieval.embeddings.shared.SharedVectors`) is asked for what the cache
    lacks before anything is embedded; what it pulls lands in the cache, verified.
    Documents get an estimate before the first block and a bar from it
    (:mod:`harness.retrieval.embeddings.progress`, on stderr); query batches are small and
    silent.
    """

    def __init__(self, encoder, cache: EmbeddingCache | None, block_size: int = 1024,
                 progress: bool = True):
        self.encoder = encoder
        self.cache = cache
        self.block_size = block_size
        self.progress = progress
        self.stats = EmbedStats()
        self.shared = None

    @property
    def label(self) -> str:
        return self.encoder.label

    @property
    def dimension(self) -> int:
        return self.encoder.dimension

    def _progress_block(self, enc) -> int:
        """Texts per committed block: small enough that the bar moves from the first block
        (four model batches), at most ``block_size``."""
        return max(1, min(self.block_size, 4 * _batch(enc)))

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(self.encoder.document_texts(texts), "documents", self.progress)

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(self.encoder.query_texts(texts), "queries", False)

    def _encode(self, texts: list[str], role: str, progress: bool) -> np.ndarray:
        enc = self.encoder
        shas = [text_sha256(t) for t in texts]
        first: dict[str, int] = {}
        for i, sha in enumerate(shas):
            first.setdefault(sha, i)
        vectors: dict[str, np.ndarray] = {}
        key = getattr(enc, "embedding_sha256", enc.weights_sha256)
        if self.cache is not None and first:
            vectors = self.cache.get(enc.model_id, key, list(first), enc.dimension)
            if self.shared is not None:
                lacking = [sha for sha in first if sha not in vectors]
                if lacking and self.shared.pull(self.cache, enc.model_id, key, lacking,
                                                enc.dimension):
                    vectors.update(self.cache.get(enc.model_id, key, lacking, enc.dimension))
                self.stats.shared = self.shared.block()
        missing = [sha for sha in first if sha not in vectors]
        # similar lengths per block keep padding (and so cost) low; the order is total
        missing.sort(key=lambda sha: longest_first(texts[first[sha]], sha))
        if missing:
            pending = [texts[first[sha]] for sha in missing]

            def encode_block(indices: list[int]) -> None:
                block = [missing[i] for i in indices]
                out = enc.encode([pending[i] for i in indices])
                if self.cache is not None:
                    self.cache.put(enc.model_id, key, block, out)
                for sha, vec in zip(block, out):
                    vectors[sha] = vec

            encode_with_progress(pending, encode_block, role=role, model=enc.model_id,
                                 cap=_max_tokens(enc), block=self._progress_block(enc),
                                 progress=progress, batch=_batch(enc),
                                 batch_tokens=getattr(enc, "max_batch_tokens", None),
                                 token_lengths=getattr(enc, "token_lengths", None))
        self.stats.add(role, len(texts), len(first), len(missing), len(first) - len(missing))
        if self.cache is not None and self.cache.events:
            self.stats.cache = dict(self.cache.events)
        if not texts:
            return np.zeros((0, enc.dimension), dtype=np.float32)
        return np.stack([vectors[sha] for sha in shas]).astype(np.float32, copy=False)
