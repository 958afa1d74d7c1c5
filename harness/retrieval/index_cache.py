"""The BM25 index cache: an unchanged set of documents is tokenised and indexed once.

One directory per index under ``<prepared cache>/bm25/<key>``: ``bm25s``'s own saved index
(``BM25.save``: the score matrix as ``.npy`` arrays, its parameters, its vocabulary) and the
harness's vocabulary (``vocab.json``, token -> id as the tokeniser assigned them).  Keyed by
the sha256 of the indexed documents in index order (id and lexical text of each), ``k1``,
``b``, the variant, the tokeniser's description, the ``bm25s`` and numpy versions and the
code revision (the backend, the tokeniser and this cache), so any change to any of them
is a miss.  Published whole and built once under a per-key lock
(:mod:`harness.retrieval.cache_store`).  The writer records the sha256 of every file of the
entry (``contents.json``); a hit first checks that the entry holds exactly those files with
those digests, so a shuffled array or a vocabulary with swapped ids, which every structural
check would pass, is a damaged entry.  It then reads the arrays with ``allow_pickle=False``
and checks them (:class:`harness.retrieval.backends.bm25_scores.BM25Scores`: shapes, dtypes,
column bounds, document range, finite values; a vocabulary numbered 0 .. n-1 matching the
columns), so an unreadable, damaged or inconsistent entry is a miss and is rebuilt (the
report says why: ``discarded``), never a wrong score; it does not import bm25s.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import logging
from itertools import chain, repeat
from pathlib import Path
from typing import Callable, Sequence

from harness.retrieval.cache_store import KeyedStore, get_or_build, key_digest, source_files, \
    source_revision

log = logging.getLogger(__name__)

INDEX_FORMAT = 2
REVISION_SOURCES = ("harness/retrieval/backends/embedded.py",
                    "harness/retrieval/backends/bm25_scores.py",
                    "harness/retrieval/backends/tokenizer.py",
                    "harness/retrieval/index_cache.py", "harness/retrieval/cache_store.py")
VOCAB_FILE = "vocab.json"
CONTENTS_FILE = "contents.json"  # {"files": {name: sha256}} of every other file of the entry
_EMPTY = "empty"  # marker file: no document had a token, the leg matches nothing


@functools.lru_cache(maxsize=1)
def code_revision() -> str:
    return source_revision(source_files(*REVISION_SOURCES))


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover
        return "unknown"


def documents_sha256(docs: Sequence) -> str:
    """sha256 over ``doc_id NUL text LF`` of every document, in index order."""
    from harness.retrieval.backends.documents import column

    ids, texts = column(docs, "doc_id"), column(docs, "text")
    joined = "".join(chain.from_iterable(zip(ids, repeat("\0"), texts, repeat("\n"))))
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()


def index_key(docs: Sequence, k1: float, b: float, tokenizer: dict) -> dict:
    return {"entry": "bm25", "format": INDEX_FORMAT, "documents": documents_sha256(docs),
            "count": len(docs), "k1": k1, "b": b, "variant": "lucene", "tokenizer": tokenizer,
            "bm25s": _version("bm25s"), "numpy": _version("numpy"), "revision": code_revision()}


class BM25IndexCache:
    """``fetch(docs, k1, b, tokenizer, build) -> (vocab, model)``: from the cache or
    ``build(docs)``; the outcome goes to ``report["bm25_index"]``."""

    def __init__(self, root, report: dict | None = None):
        self.store = KeyedStore(Path(root), "bm25")
        self.report = report if report is not None else {}

    def fetch(self, docs: Sequence, k1: float, b: float, tokenizer: dict,
              build: Callable[[Sequence], tuple]) -> tuple[dict, object]:
        key = index_key(docs, k1, b, tokenizer)
        digest = key_digest(key)

        def write(value) -> None:
            vocab, model = value

            def fill(tmp: Path) -> None:
                if model is None:
                    (tmp / _EMPTY).write_text("", encoding="utf-8")
                else:
                    model.save(str(tmp), show_progress=False)
                (tmp / VOCAB_FILE).write_text(json.dumps(vocab, ensure_ascii=False),
                                              encoding="utf-8")
                (tmp / "key.json").write_text(json.dumps(key, sort_keys=True),
                                              encoding="utf-8")
                (tmp / CONTENTS_FILE).write_text(json.dumps({"files": _digests(tmp)},
                                                            sort_keys=True), encoding="utf-8")
            self.store.publish_directory(digest, fill)

        discarded: list[str] = []
        value, outcome = get_or_build(self.store, digest, functools.partial(_read, key),
                                      lambda: build(docs), write, on_discard=discarded.append)
        self.report["bm25_index"] = {"outcome": outcome, "key": digest,
                                     **({"discarded": discarded[0]} if discarded else {})}
        return value


def _digests(folder: Path) -> dict[str, str]:
    """sha256 of every file of an entry but the contents file itself."""
    out = {}
    for path in sorted(folder.iterdir()):
        if path.name == CONTENTS_FILE:
            continue
        if not path.is_file() or path.is_symlink():
            raise ValueError(f"{path.name} is not a plain file")
        with open(path, "rb") as handle:
            out[path.name] = hashlib.file_digest(handle, "sha256").hexdigest()
    return out


def _check_contents(path: Path) -> None:
    """ValueError unless the entry holds exactly the files its writer recorded, each with
    the recorded sha256."""
    try:
        recorded = json.loads((path / CONTENTS_FILE).read_text(encoding="utf-8"))["files"]
        found = _digests(path)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"its contents record is unreadable: {exc}") from None
    if found != recorded:
        changed = sorted(n for n in set(found) | set(recorded) if found.get(n) != recorded.get(n))
        raise ValueError(f"its files do not match their recorded sha256 ({', '.join(changed)}): "
                         "damaged or changed after it was written")


def _read(key: dict, path: Path):
    if not path.is_dir():
        return None
    _check_contents(path)
    try:
        stored = json.loads((path / "key.json").read_text(encoding="utf-8"))
        vocab = json.loads((path / VOCAB_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"not a readable index: {exc}") from None
    if stored != key:
        raise ValueError("its key does not match its name")
    if not isinstance(vocab, dict) or sorted(vocab.values()) != list(range(len(vocab))):
        raise ValueError("its vocabulary does not number its tokens 0 .. n-1")
    if (path / _EMPTY).exists():
        return vocab, None
    from harness.retrieval.backends.bm25_scores import BM25Scores

    # bm25s's saved arrays, read and checked without importing bm25s (numba, scipy)
    return vocab, BM25Scores.load(path, len(vocab))
