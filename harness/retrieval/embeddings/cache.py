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
    PRIMARY KEY (model_id, weights_sha256, text_sha256)
) WITHOUT ROWID
"""


def default_cache_dir() -> Path:
    return settings.cache_dir()


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class EmbeddingCache:
    """Get and put vectors by ``(model_id, weights_sha256, text_sha256)``; thread-safe."""

    def __init__(self, cache_dir=None):
        self.dir = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.dir.mkdir(parents=True, exist_ok=True)
        self.path = self.dir / CACHE_FILE
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.path), check_same_thread=False, timeout=60)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(_SCHEMA)
        self._conn.commit()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get(self, model_id: str, weights: str, shas: Sequence[str],
            dimension: int) -> dict[str, np.ndarray]:
        """Cached vectors for the given text digests (missing ones are absent)."""
        found: dict[str, np.ndarray] = {}
        unique = sorted(set(shas))
        with self._lock:
            for start in range(0, len(unique), _LOOKUP_BATCH):
                batch = unique[start:start + _LOOKUP_BATCH]
                marks = ",".join("?" * len(batch))
                rows = self._conn.execute(
                    f"SELECT text_sha256, dimension, vector FROM embeddings "
                    f"WHERE model_id = ? AND weights_sha256 = ? AND text_sha256 IN ({marks})",
                    (model_id, weights, *batch),
                ).fetchall()
                for sha, dim, blob in rows:
                    if dim != dimension or len(blob) != 4 * dimension:
                        raise ValueError(
                            f"embedding cache {self.path}: vector for text {sha} under "
                            f"{model_id} has dimension {dim}, expected {dimension}"
                        )
                    found[sha] = np.frombuffer(blob, dtype="<f4")
        return found

    def put(self, model_id: str, weights: str, shas: Sequence[str], vectors: np.ndarray) -> None:
        """Store one block of vectors in one transaction."""
        vectors = np.asarray(vectors, dtype="<f4")
        if len(shas) != len(vectors):
            raise ValueError(f"{len(shas)} digests for {len(vectors)} vectors")
        rows = [(model_id, weights, sha, int(vectors.shape[1]), vectors[i].tobytes())
                for i, sha in enumerate(shas)]
        with self._lock:
            with self._conn:
                self._conn.executemany(
                    "INSERT OR IGNORE INTO embeddings VALUES (?, ?, ?, ?, ?)", rows)

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

    def block(self) -> dict:
        return {
            "texts_embedded": sum(self.embedded.values()),
            "texts_from_cache": sum(self.from_cache.values()),
            "by_role": {role: {"requested": self.requested.get(role, 0),
                               "unique": self.unique.get(role, 0),
                               "embedded": self.embedded.get(role, 0),
                               "from_cache": self.from_cache.get(role, 0)}
                        for role in sorted(self.requested)},
        }


def _max_tokens(enc) -> int | None:
    """The model's maximum sequence length when its profile has one (what it reads at most)."""
    profile = getattr(enc, "profile", None)
    return getattr(profile, "max_seq_length", None) or None


class CachedEncoder:
    """An encoder behind the cache: only texts the cache lacks reach the model.

    ``cache=None`` embeds everything (still counted).  Documents get an estimate before the
    first block and a bar from it (:mod:`harness.retrieval.embeddings.progress`, on stderr);
    query batches are small and silent.
    """

    def __init__(self, encoder, cache: EmbeddingCache | None, block_size: int = 1024,
                 progress: bool = True):
        self.encoder = encoder
        self.cache = cache
        self.block_size = block_size
        self.progress = progress
        self.stats = EmbedStats()

    @property
    def label(self) -> str:
        return self.encoder.label

    @property
    def dimension(self) -> int:
        return self.encoder.dimension

    def _progress_block(self, enc) -> int:
        """Texts per committed block: small enough that the bar moves from the first block
        (four model batches), at most ``block_size``."""
        batch = getattr(enc, "batch_size", None) or 64
        return max(1, min(self.block_size, 4 * int(batch)))

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
        missing = [sha for sha in first if sha not in vectors]
        # similar lengths per block keep padding (and so cost) low; the order is total
        missing.sort(key=lambda sha: (-len(texts[first[sha]]), sha))
        if missing:
            from harness.retrieval.embeddings.progress import encode_with_progress

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
                                 progress=progress)
        self.stats.add(role, len(texts), len(first), len(missing), len(first) - len(missing))
        if not texts:
            return np.zeros((0, enc.dimension), dtype=np.float32)
        return np.stack([vectors[sha] for sha in shas]).astype(np.float32, copy=False)
