"""Document ids and the total order that keeps score ties away from trec_eval.

trec_eval breaks score ties by document id *descending*, so at equal scores a document's
name decides its rank: a ``{file}_digest`` sorts above ``{file}_0`` .. ``{file}_11`` and
``{file}_10`` above ``{file}_9``.  The harness sorts by :func:`rank_key` instead, which
depends on the score and on the document's *structure* (type, file, integer chunk index),
and then hands trec_eval rank-derived scores, so no tie ever reaches it.
"""

from __future__ import annotations

DOC_TYPES = ("chunk", "digest", "doc")


def chunk_id(file_id: str, chunk_index: int) -> str:
    return f"{file_id}_{chunk_index}"


def parse_doc_id(doc_id: str) -> tuple[str, str, int]:
    """``{file}_{n}`` -> ("chunk", file, n); ``{file}_digest`` -> ("digest", file, -1);
    anything else -> ("doc", doc_id, 0)."""
    file_id, sep, tail = doc_id.rpartition("_")
    if sep and file_id:
        if tail == "digest":
            return ("digest", file_id, -1)
        if tail.isdigit() and tail.isascii():
            return ("chunk", file_id, int(tail))
    return ("doc", doc_id, 0)


def file_of(doc_id: str) -> str:
    """The file a document belongs to (the id itself for a plain document)."""
    return parse_doc_id(doc_id)[1]


def rank_key(doc_id: str, score: float) -> tuple[float, str, str, int, str]:
    """Sort key: ``(-score, doc_type, file_id, chunk_index, doc_id)``.

    The trailing ``doc_id`` only separates ids that parse identically (``f_7`` / ``f_07``),
    so the order is total and never depends on input order.
    """
    doc_type, file_id, index = parse_doc_id(doc_id)
    return (-score, doc_type, file_id, index, doc_id)
