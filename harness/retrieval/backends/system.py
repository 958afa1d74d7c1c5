"""A retrieval system under test: it owns its index, the harness sends it queries.

The shared part of ``--backend http`` and ``--backend command``.  ``index`` stores nothing
in the system; it records the corpus's document ids, so every returned id can be checked
against the qrels' id space.  ``search`` asks the system for each query's top ``k`` once
(one request per query, retried per :mod:`harness.retrieval.backends.retry`), reads the
ranking through the field map (:mod:`harness.retrieval.backends.fieldmap`) and puts it in
the harness's total order (score, then document structure) unless ``preserve_order`` keeps
the system's own order.

Ids unknown to the corpus are counted (an unjudged id is fine: it is simply not relevant);
when more than half the returned ids are unknown the run is refused with three examples and
the likely mismatch, before anything is written.
"""

from __future__ import annotations

import random
import threading
from typing import Sequence

from harness.core import interrupts
from harness.core.doc_ids import file_of, rank_key
from harness.retrieval.backends.base import (
    Backend,
    Candidates,
    EmbeddingSurvey,
    IndexDoc,
    SearchQuery,
)
from harness.retrieval.backends.fieldmap import FieldMap, ResponseError
from harness.retrieval.backends.retry import RequestLog, RetryPolicy, SystemFailure, call
from harness.retrieval.backends.templates import redact


def check_max_bytes(value, flag: str = "--max-response-bytes") -> int:
    """A byte cap: a positive integer (ValueError naming ``flag`` otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{flag} must be a positive number of bytes, got {value!r}")
    return value

#: refuse a run when more than this share of the returned ids is unknown to the corpus
UNKNOWN_LIMIT = 0.5
DEFAULT_CONCURRENCY = 4
#: the cap on one answer (an HTTP body, a command's answer line): ``--max-response-bytes``
DEFAULT_MAX_BYTES = 64 << 20


class SystemBackend(Backend):
    """Base of the backends that query a system under test (module docstring)."""

    name = "system"
    kind = "system"

    def __init__(self, *, k1=None, b=None, encoder=None, progress: bool = True,
                 field_map: str | None = None, retries: int | None = None,
                 timeout: float | None = None, budget: int | None = None,
                 concurrency: int | None = None, preserve_order: bool = False,
                 repeat: int = 1, max_bytes: int | None = None):
        self.field_map = FieldMap.parse(field_map)
        self.max_bytes = check_max_bytes(DEFAULT_MAX_BYTES if max_bytes is None else max_bytes)
        #: resolved secrets (header values, {env:VAR}): removed from every message
        self.secrets: tuple[str, ...] = ()
        kwargs = {k: v for k, v in (("retries", retries), ("timeout", timeout)) if v is not None}
        self.policy = RetryPolicy(**kwargs)
        self.log = RequestLog(budget)
        self.concurrency = DEFAULT_CONCURRENCY if concurrency is None else int(concurrency)
        if self.concurrency < 1:
            raise ValueError(f"--http-concurrency must be a positive integer, got {concurrency!r}")
        self.preserve_order = bool(preserve_order)
        self.repeat = int(repeat)
        if self.repeat < 1:
            raise ValueError(f"--repeat must be a positive integer, got {repeat!r}")
        self.progress = progress
        self._rng = random.Random()
        self._known: frozenset[str] = frozenset()
        self._files: frozenset[str] = frozenset()
        self.documents = 0
        self._ids_lock = threading.Lock()
        self.returned = 0
        self.unknown: set[str] = set()
        self.unknown_returned = 0
        #: the first failure: once a query failed, no further request is sent
        self._failure: SystemFailure | None = None

    # ------------------------------------------------------------------ subclasses

    def fetch(self, query: SearchQuery, k: int) -> tuple[object, object]:
        """One attempt: ``(parsed response, status)``; raises
        :class:`~harness.retrieval.backends.retry.Transient` or :class:`ResponseError`."""
        raise NotImplementedError

    def target(self) -> dict:
        """The kind-specific part of ``system_under_test`` (no secrets)."""
        raise NotImplementedError

    # ------------------------------------------------------------------ Backend

    def index(self, docs: Sequence[IndexDoc], legs: Sequence[str]) -> None:
        self._known = frozenset(d.doc_id for d in docs)
        self._files = frozenset(d.file_id for d in docs)
        self.documents = len(docs)

    def search(self, leg: str, queries: Sequence[SearchQuery], k: int) -> Candidates:
        out: Candidates = {}
        for q in queries:
            def attempt(q=q):
                response, status = self.fetch(q, k)
                return self.field_map.ranking(response, q.query_id), status

            if self._failure is not None:
                raise SystemFailure(str(self._failure))
            if interrupts.received():  # Ctrl-C: the queued queries are never sent
                raise KeyboardInterrupt
            try:
                ranking = call(q.query_id, attempt, self.policy, self.log, self._rng)[:k]
            except SystemFailure as exc:
                self._failure = self._failure or SystemFailure(redact(str(exc), self.secrets))
                raise self._failure from None
            self._count(ranking)
            if not self.preserve_order:
                ranking.sort(key=lambda pair: rank_key(pair[0], pair[1]))
            out[q.query_id] = ranking
        return out

    def _count(self, ranking) -> None:
        with self._ids_lock:
            self.returned += len(ranking)
            for doc_id, _ in ranking:
                if doc_id not in self._known:
                    self.unknown.add(doc_id)
                    self.unknown_returned += 1

    def start_repeat(self, repeat: int) -> None:
        """Requests from now on belong to repeat ``repeat`` (0-based) of the query set."""
        self.log.repeat = repeat

    def end_measurement(self) -> None:
        if self.returned and self.unknown_returned > UNKNOWN_LIMIT * self.returned:
            examples = sorted(self.unknown)[:3]
            known = sorted(self._known)[:3]
            if all(e in self._files for e in examples):
                hint = ("the system returns file (meeting) ids where the corpus is chunked: "
                        "return the chunk ids, or bench with --granularity file")
            elif all(file_of(e) in self._known for e in examples):
                hint = ("the system returns chunk ids where the corpus is indexed by whole "
                        "file: bench with --granularity chunk")
            else:
                hint = ("the system indexes another id scheme or another corpus: index the "
                        "corpus's own doc ids")
            raise SystemFailure(redact(
                f"{self.unknown_returned} of {self.returned} returned document ids "
                f"({100.0 * self.unknown_returned / self.returned:.0f}%) are not in the corpus "
                f"(e.g. {', '.join(map(repr, examples))}; corpus ids look like "
                f"{', '.join(map(repr, known))}); likely mismatch: {hint}", self.secrets))

    def embedding_survey(self) -> EmbeddingSurvey:
        return EmbeddingSurvey(counts={}, dimension=None)

    def system_block(self) -> dict:
        return {
            "kind": self.kind,
            **self.target(),
            "field_map": self.field_map.describe(),
            "preserve_order": self.preserve_order,
            "order": "the system's own (preserve_order)" if self.preserve_order
            else "the harness's tie rule (score, then document structure)",
            "retry": self.policy.describe(),
            "max_response_bytes": self.max_bytes,
            "request_budget": self.log.budget,
            "repeat": self.repeat,
            "returned_ids": {"returned": self.returned,
                             "unknown_to_corpus": self.unknown_returned},
        }

    def describe(self) -> dict:
        return {"name": self.name, "documents": self.documents,
                "system_under_test": self.system_block()}

    def run_stats(self) -> dict:
        stats = self.log.stats()
        stats["concurrency"] = self.concurrency
        stats["returned_ids"] = self.returned
        stats["unknown_ids"] = self.unknown_returned
        return stats


__all__ = ["SystemBackend", "SystemFailure", "ResponseError", "UNKNOWN_LIMIT"]
