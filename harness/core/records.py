"""Records shared by every part of the product.

Field names follow the IR ecosystem (ir_datasets, ir_measures): always ``query_id`` /
``doc_id``, never ``qid``.  Records are frozen so a value read from a file cannot be
changed behind the scorer's back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

class Qrel(NamedTuple):
    """One relevance judgement.  Negative relevance means judged non-relevant."""

    query_id: str
    doc_id: str
    relevance: int


class ScoredDoc(NamedTuple):
    """One retrieved document with the score the system gave it."""

    query_id: str
    doc_id: str
    score: float


class RankedDocs(NamedTuple):
    """One query's run list as two columns: ``doc_ids[i]`` was scored ``scores[i]``, in
    the list's order.  What :func:`harness.core.formats.read_run_columns` returns per
    query, and the form the scorer takes fastest (no record per document)."""

    doc_ids: list[str]
    scores: list[float]


class RunColumns(dict[str, RankedDocs]):
    """``query_id -> RankedDocs`` as a run reader returns them, holding beside each list the
    ``{doc_id: score}`` the reader built to find a repeated document: the form the scorer
    hands trec_eval, so it is not built a second time (:meth:`take_mappings`)."""

    __slots__ = ("_mappings",)

    def __init__(self, lists: dict[str, RankedDocs],
                 mappings: dict[str, dict[str, float]]) -> None:
        super().__init__(lists)
        self._mappings = mappings

    def take_mappings(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}`` for each list still as it was read (its ids and
        scores in the same order), handed over once: this run no longer holds them, so they
        live no longer than the scorer does (a later scoring builds its own)."""
        mappings, self._mappings = self._mappings, {}
        taken = {}
        for query_id, pairs in mappings.items():
            docs = self.get(query_id)
            if (type(docs) is RankedDocs and list(pairs) == docs.doc_ids
                    and list(pairs.values()) == docs.scores):
                taken[query_id] = pairs
        return taken


@dataclass(frozen=True)
class Chunk:
    """One indexed unit: a speaker turn (or part of a long one), a digest, or a document.

    ``doc_id`` is ``{file_id}_{chunk_index}`` for chunks, ``{file_id}_digest`` for digests;
    a whole-file or BEIR document keeps its own id and ``doc_type`` ``"doc"``.
    """

    doc_id: str
    file_id: str
    chunk_index: int
    doc_type: str
    speaker: str | None
    start: float | None
    end: float | None
    text: str
    #: indexes (into the file's turns) of the turns this chunk was cut from
    turn_indexes: tuple[int, ...] = ()
    #: per turn in ``turn_indexes``: the share of that turn's words inside this chunk
    turn_fractions: tuple[float, ...] = ()
    title: str | None = None


@dataclass(frozen=True)
class Query:
    """One query of a corpus, with its class and whatever gold the corpus provides.

    ``gold_spans`` are inclusive turn ranges ``(file_id, first_turn, last_turn)`` (QMSum's
    convention, shared by the synthetic corpus); ``gold_docs`` are direct document
    judgements (BEIR / TREC); ``gold_files`` are the files the query needs.
    """

    query_id: str
    text: str
    query_class: str | None
    corpus: str
    gold_spans: tuple[tuple[str, int, int], ...] = ()
    gold_docs: tuple[tuple[str, int], ...] = ()
    gold_files: tuple[str, ...] = ()
    scored_on: str = "rank"
    answer: object = None
    extra: tuple[tuple[str, object], ...] = field(default=())
