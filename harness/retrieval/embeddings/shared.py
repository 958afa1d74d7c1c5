"""Shared vectors: embeddings pushed to the team store once, pulled by digest anywhere.

A vector is named by what the embedding cache keys it on: the encoder's
``embedding_sha256`` (:func:`harness.retrieval.embeddings.encoders.embedding_digest`: the
weights digest, folded with device, precision and runtime off the CPU; a CPU profile whose
arithmetic differs, such as ``bf16`` or ``onnx``, names its ISA path or runtime in its
weights digest already) and the sha256 of the exact text the model read.  In the store
(:mod:`harness.core.store`, put-if-absent only):

```
vectors/<embedding_sha256>/blocks/<block sha256>        one block of vectors
vectors/<embedding_sha256>/index/<block sha256>.json    its index: the block's text digests
```

A block is one canonical JSON header line (model id, embedding digest, dimension, the text
digests in order) and then ``len(texts) x dimension`` little-endian float32s; it is named
by the sha256 of its bytes.  The index object is written after its block, so a listed
block is a whole one.  Blocks hold sorted text digests in fixed-size runs, so two machines
pushing the same vectors write the same keys with the same bytes.

Nothing pulled is trusted on its own: a block is refused (its texts embedded locally, and
counted) when its bytes do not hash to its name, its header disagrees with its index or
with the model asking, its length is not the header's, or a value is not finite.  Every
read is bounded (:data:`MAX_INDEX_BYTES`, :data:`MAX_BLOCK_BYTES`).  A store that cannot be
reached while pulling is a store that holds nothing: one warning, recorded
(``unreachable``), and the run embeds what it needs.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from harness.core.canonical import canonical_line
from harness.core.store import ObjectTooLarge, Store, StoreError

log = logging.getLogger(__name__)

#: texts per pushed block
BLOCK_TEXTS = 1024
#: the largest index object read (1,024 digests are about 70 KB)
MAX_INDEX_BYTES = 1 << 20
#: the largest block read (1,024 texts of 4,096 float32s plus the header: about 17 MB)
MAX_BLOCK_BYTES = 64 << 20
_SHA = re.compile(r"[0-9a-f]{64}")


def _prefix(digest: str) -> str:
    if not _SHA.fullmatch(digest):
        raise ValueError(f"not an embedding digest: {digest!r}")
    return f"vectors/{digest}"


def encode_block(model_id: str, digest: str, shas: Sequence[str],
                 vectors: np.ndarray) -> bytes:
    """A block's bytes: the header line, then the vectors as little-endian float32."""
    vectors = np.asarray(vectors, dtype="<f4")
    header = canonical_line({"dimension": int(vectors.shape[1]), "embedding_sha256": digest,
                             "model_id": model_id, "texts": list(shas)})
    return header.encode("utf-8") + b"\n" + vectors.tobytes()


def decode_block(data: bytes, name: str, model_id: str, digest: str, texts: list[str],
                 dimension: int) -> np.ndarray:
    """The vectors of a block read back, or :class:`ValueError` saying why it is refused."""
    if hashlib.sha256(data).hexdigest() != name:
        raise ValueError("its bytes do not hash to its name")
    line, sep, body = data.partition(b"\n")
    if not sep:
        raise ValueError("no header line")
    try:
        header = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("its header is not JSON") from None
    want = {"dimension": dimension, "embedding_sha256": digest, "model_id": model_id,
            "texts": texts}
    if header != want:
        raise ValueError("its header disagrees with its index or with the model")
    if len(body) != 4 * dimension * len(texts):
        raise ValueError(f"{len(body)} vector bytes, expected {4 * dimension * len(texts)}")
    vectors = np.frombuffer(body, dtype="<f4").reshape(len(texts), dimension)
    if not np.isfinite(vectors).all():
        raise ValueError("a value is not finite")
    return vectors


@dataclass
class _Entry:
    name: str
    texts: list[str]
    size: int


class SharedVectors:
    """Pull vectors from (and push them to) a team store into an embedding cache.

    ``counts`` is what runinfo.json records: texts pulled, blocks verified, texts and
    blocks refused."""

    def __init__(self, store: Store):
        self.store = store
        self.counts: dict = {"pulled": 0, "blocks_verified": 0, "refused": 0,
                             "blocks_refused": 0}
        self._indexes: dict[str, dict[str, _Entry]] = {}

    def block(self) -> dict:
        return {"store": self.store.url, **self.counts}

    def index(self, digest: str) -> dict[str, _Entry]:
        """Text digest -> the block holding it, from the store's index objects (read once)."""
        if digest in self._indexes:
            return self._indexes[digest]
        found: dict[str, _Entry] = {}
        base = f"{_prefix(digest)}/index/"
        for key in self.store.list(base):
            name = key[len(base):].removesuffix(".json")
            try:
                doc = json.loads(self.store.get(key, MAX_INDEX_BYTES))
                texts, size = doc["texts"], doc["bytes"]
                if not (_SHA.fullmatch(name) and isinstance(texts, list) and texts
                        and all(isinstance(t, str) and _SHA.fullmatch(t) for t in texts)
                        and isinstance(size, int) and 0 < size <= MAX_BLOCK_BYTES):
                    raise ValueError("malformed")
            except (ValueError, KeyError, TypeError, UnicodeDecodeError, ObjectTooLarge) as exc:
                log.warning("shared vectors %s: index %s refused (%s)", self.store.url, key,
                            exc)
                self.counts["blocks_refused"] += 1
                continue
            entry = _Entry(name, texts, size)
            for sha in texts:
                found.setdefault(sha, entry)
        self._indexes[digest] = found
        return found

    def pull(self, cache, model_id: str, digest: str, shas: Sequence[str],
             dimension: int) -> int:
        """Put into ``cache`` every vector the store holds for ``shas`` and that verifies;
        the number put (0 once the store could not be reached)."""
        if "unreachable" in self.counts:
            return 0
        try:
            return self._pull(cache, model_id, digest, shas, dimension)
        except StoreError as exc:
            log.warning("shared vectors: %s; embedding here what the cache lacks", exc)
            self.counts["unreachable"] = str(exc)
            return 0

    def _pull(self, cache, model_id: str, digest: str, shas: Sequence[str],
              dimension: int) -> int:
        index = self.index(digest)
        wanted: dict[str, list[str]] = defaultdict(list)
        entries: dict[str, _Entry] = {}
        for sha in shas:
            entry = index.get(sha)
            if entry is not None:
                wanted[entry.name].append(sha)
                entries[entry.name] = entry
        pulled = 0
        for name in sorted(wanted):
            entry, need = entries[name], wanted[name]
            key = f"{_prefix(digest)}/blocks/{name}"
            try:
                data = self.store.get(key, min(entry.size, MAX_BLOCK_BYTES))
                vectors = decode_block(data, name, model_id, digest, entry.texts, dimension)
            except (KeyError, ObjectTooLarge, ValueError) as exc:
                why = "absent" if isinstance(exc, KeyError) else exc
                log.warning("shared vectors %s: block %s refused (%s); its %d texts are "
                            "embedded here", self.store.url, key, why, len(need))
                self.counts["blocks_refused"] += 1
                self.counts["refused"] += len(need)
                continue
            row = {sha: i for i, sha in enumerate(entry.texts)}
            cache.put(model_id, digest, need, vectors[[row[sha] for sha in need]])
            self.counts["blocks_verified"] += 1
            pulled += len(need)
        self.counts["pulled"] += pulled
        return pulled

    def push(self, model_id: str, digest: str, shas: Sequence[str], vectors: np.ndarray,
             block_texts: int = BLOCK_TEXTS) -> int:
        """Put every vector the store lacks (``shas[i]`` -> ``vectors[i]``); the number
        written.  Idempotent: blocks of sorted digests, written put-if-absent, block first."""
        index = self.index(digest)
        rows = {sha: i for i, sha in enumerate(shas)}
        new = sorted(sha for sha in rows if sha not in index)
        for start in range(0, len(new), block_texts):
            part = new[start:start + block_texts]
            data = encode_block(model_id, digest, part, vectors[[rows[s] for s in part]])
            name = hashlib.sha256(data).hexdigest()
            self.store.put_if_absent(f"{_prefix(digest)}/blocks/{name}", data)
            doc = canonical_line({"block": name, "bytes": len(data), "texts": part})
            self.store.put_if_absent(f"{_prefix(digest)}/index/{name}.json",
                                     doc.encode("utf-8") + b"\n")
            entry = _Entry(name, part, len(data))
            for sha in part:
                index[sha] = entry
        return len(new)

