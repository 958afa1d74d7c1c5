"""The rerank stage: a cross-encoder over the head of the candidate pool, then diversity
sampling: what actually reaches a prompt.

Two rules keep the stage honest (both were once broken in the methodology this follows):

* **Two score scales are never sorted together.**  Only the first ``rerank_max_pairs``
  candidates get a cross-encoder score; they are ordered by it, and the un-reranked tail
  follows *below* them in its own (retrieval) order.  Cross-encoder scores and fusion
  scores are different quantities, so a sort across both would float the tail anywhere.
* **The metric ranks the prompt's order.**  :func:`diversity_sample` interleaves files by
  round-robin; the stage's list is scored with ``preserve_order=True``, never re-sorted by
  score, which would undo the interleaving.

:func:`diversity_sample` returns as soon as ``final_chunks`` items are taken, so its output
is prefix-invariant in that cap: raising it can only append.

A missing cross-encoder raises :class:`FileNotFoundError`; the stage never silently
degrades to the retrieval order.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Hashable, Sequence, TypeVar

from harness.core import heavy

log = logging.getLogger(__name__)

T = TypeVar("T")

DEFAULT_CANDIDATE_POOL = 48
DEFAULT_FINAL_CHUNKS = 12
DEFAULT_MAX_CHUNKS_PER_FILE = 4
DEFAULT_RERANK_MAX_PAIRS = 50

_WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")


def rerank_order(
    candidates: Sequence[tuple[str, float]],
    head_scores: Sequence[float],
) -> list[tuple[str, float, bool]]:
    """Reranked head (by cross-encoder score, ties by retrieval position) above the
    un-reranked tail (retrieval order).  ``head_scores[i]`` scores ``candidates[i]``.

    Returns ``(doc_id, score, reranked)``; ``score`` is the cross-encoder score for the
    head and the retrieval score for the tail (not comparable, hence never sorted together).
    """
    n = len(head_scores)
    if n > len(candidates):
        raise ValueError(f"{n} rerank scores for {len(candidates)} candidates")
    head = sorted(range(n), key=lambda i: (-float(head_scores[i]), i))
    out = [(candidates[i][0], float(head_scores[i]), True) for i in head]
    out += [(doc_id, float(score), False) for doc_id, score in candidates[n:]]
    return out


def diversity_sample(
    items: Sequence[T],
    file_of: Callable[[T], Hashable],
    max_chunks_per_file: int = DEFAULT_MAX_CHUNKS_PER_FILE,
    final_chunks: int = DEFAULT_FINAL_CHUNKS,
) -> list[T]:
    """Round-robin across files (in order of each file's first appearance): round ``r``
    takes each file's ``r``-th item, for ``r < max_chunks_per_file``, until
    ``final_chunks`` items are taken.  Prefix-invariant in ``final_chunks``."""
    if max_chunks_per_file < 1 or final_chunks < 1:
        raise ValueError("max_chunks_per_file and final_chunks must be positive, got "
                         f"{max_chunks_per_file} and {final_chunks}")
    groups: dict[Hashable, list[T]] = {}
    for item in items:
        groups.setdefault(file_of(item), []).append(item)
    out: list[T] = []
    for round_ in range(max_chunks_per_file):
        for members in groups.values():
            if round_ < len(members):
                out.append(members[round_])
                if len(out) == final_chunks:
                    return out
    return out


# --------------------------------------------------------------------------- cross-encoder


def _weights_present(path: Path) -> bool:
    return any((path / name).is_file() for name in _WEIGHT_FILES)


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` loaded from a local directory, offline."""

    def __init__(self, path, batch_size: int = 32):
        from harness.retrieval.embeddings.encoders import weights_sha256

        if path is None:
            raise FileNotFoundError("--stage rerank needs --reranker PATH (a local "
                                    "cross-encoder directory); no reranker is bundled")
        self.path = Path(path)
        if not self.path.is_dir():
            raise FileNotFoundError(f"reranker weights not found: {self.path} is not a directory")
        if not (self.path / "config.json").is_file() or not _weights_present(self.path):
            raise FileNotFoundError(
                f"reranker weights not found in {self.path}: expected config.json and one "
                f"of {list(_WEIGHT_FILES)}"
            )
        from harness.retrieval.embeddings.encoders import offline_transformers

        offline_transformers()
        CrossEncoder = heavy.load("sentence_transformers").CrossEncoder

        self.model = CrossEncoder(str(self.path), device="cpu", local_files_only=True)
        self.batch_size = batch_size
        self.name = self.path.name
        self.weights_sha256 = weights_sha256(self.path)

    def describe(self) -> dict:
        return {"name": self.name, "weights_sha256": self.weights_sha256,
                "kind": "sentence-transformers CrossEncoder"}

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        scores = self.model.predict([(query, t) for t in texts], batch_size=self.batch_size,
                                    show_progress_bar=False, convert_to_numpy=True)
        return [float(s) for s in scores]


def rerank_stage(
    query: str,
    candidates: Sequence[tuple[str, float]],
    text_of: Callable[[str], str],
    file_of: Callable[[str], Hashable],
    reranker,
    *,
    rerank_max_pairs: int = DEFAULT_RERANK_MAX_PAIRS,
    max_chunks_per_file: int = DEFAULT_MAX_CHUNKS_PER_FILE,
    final_chunks: int = DEFAULT_FINAL_CHUNKS,
) -> tuple[list[tuple[str, float, bool]], list[tuple[str, float, bool]]]:
    """One query through the stage: ``(reranked pool, prompt list)``.

    The pool is :func:`rerank_order` over all candidates; the prompt list is its
    :func:`diversity_sample`, in the order the prompt receives it.
    """
    if rerank_max_pairs < 1:
        raise ValueError(f"rerank_max_pairs must be positive, got {rerank_max_pairs}")
    head = candidates[:rerank_max_pairs]
    scores = reranker.score(query, [text_of(doc_id) for doc_id, _ in head])
    pool = rerank_order(candidates, scores)
    prompt = diversity_sample(pool, lambda item: file_of(item[0]), max_chunks_per_file,
                              final_chunks)
    return pool, prompt
