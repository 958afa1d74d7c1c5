"""One request body per leg, and the hits turned back into the harness's scores.

* **bm25**: a ``match`` query on the text field (``OR`` of the analysed query terms, Lucene's
  BM25; Robertson & Zaragoza 2009): the same sum over query terms as the embedded backend.
  OpenSearch's ``BM25`` similarity is Lucene's ``LegacyBM25Similarity``, which multiplies
  every score by ``k1 + 1``; :func:`hits` divides it out, so both backends report one scale.
* **dense, hnsw**: a ``knn`` query on the Lucene HNSW graph (Malkov & Yashunin, TPAMI 2020)
  with ``k`` candidates and ``method_parameters.ef_search``: approximate.
* **dense, exact**: ``script_score`` with the k-NN plugin's ``knn_score`` script over every
  document (or every document of the query's files): exact, so HNSW recall is measured
  against it, never assumed.
* **hybrid** (server-side fusion): neural-search's ``hybrid`` query holding the two legs,
  run through a search pipeline (:mod:`.pipelines`); never with an aggregation.

The k-NN plugin reports an inner product ``ip`` as ``ip + 1`` when ``ip >= 0`` and
``1 / (1 - ip)`` when ``ip < 0`` (scores must be positive); :func:`inner_product` inverts that,
so the dense leg's scores are the raw inner products the embedded backend returns and every
score-based fusion normalises the same numbers on both backends.
"""

from __future__ import annotations

from typing import Sequence

from harness.core.doc_ids import rank_key
from harness.retrieval.backends.opensearch.mapping import SPACE_TYPE, TEXT, VECTOR


def inner_product(score: float) -> float:
    """The inner product behind a k-NN ``innerproduct`` score (inverse of the transform)."""
    return score - 1.0 if score >= 1.0 else 1.0 - 1.0 / score


def _files_filter(files: Sequence[str] | None) -> list[dict]:
    return [] if files is None else [{"terms": {"file_id": sorted(files)}}]


def bm25_query(text: str, files: Sequence[str] | None = None) -> dict:
    match = {"match": {TEXT: {"query": text}}}
    if files is None:
        return match
    return {"bool": {"must": [match], "filter": _files_filter(files)}}


def knn_query(vector: Sequence[float], k: int, ef_search: int,
              files: Sequence[str] | None = None) -> dict:
    """``k`` vectors nearest by HNSW; with ``files``, only vectors whose group has a
    document in them (``vector_files``)."""
    clause = {"vector": [float(x) for x in vector], "k": int(k),
              "method_parameters": {"ef_search": int(ef_search)}}
    if files is not None:
        clause["filter"] = {"bool": {"filter": [{"terms": {"vector_files": sorted(files)}}]}}
    return {"knn": {VECTOR: clause}}


def exact_query(vector: Sequence[float], files: Sequence[str] | None = None) -> dict:
    """Every held vector (or those of ``files``' groups) scored by the k-NN script."""
    where = [{"exists": {"field": VECTOR}}]
    if files is not None:
        where.append({"terms": {"vector_files": sorted(files)}})
    return {"script_score": {"query": {"bool": {"filter": where}}, "script": {
        "source": "knn_score", "lang": "knn",
        "params": {"field": VECTOR, "query_value": [float(x) for x in vector],
                   "space_type": SPACE_TYPE}}}}


def body(query: dict, size: int, members: bool = False) -> dict:
    """A search body returning ids and scores only (and, for the dense leg, the documents
    sharing each hit's vector).  Ids come from doc values: fetching the stored ``_id`` of
    each hit decompresses a stored-fields block per hit, which measured about 10 ms of a
    192-hit search on two cores; doc values cost almost nothing."""
    fields = ["doc_id", "vector_members"] if members else ["doc_id"]
    return {"size": int(size), "query": query, "stored_fields": "_none_",
            "docvalue_fields": fields}


def hybrid_body(lexical: dict, dense: dict, size: int) -> dict:
    return {"size": int(size), "query": {"hybrid": {"queries": [lexical, dense]}},
            "stored_fields": "_none_", "docvalue_fields": ["doc_id"]}


def doc_id(hit: dict) -> str:
    """A hit's document id (from doc values; ``_id`` when a caller asked for it)."""
    fields = hit.get("fields") or {}
    return fields["doc_id"][0] if "doc_id" in fields else hit["_id"]


def hits(response: dict, dense: bool = False, scale: float = 1.0) -> list[tuple[str, float]]:
    """``[(doc_id, score)]`` in the harness's total order (the node's order already is, the
    index being sorted by document structure; sorting again makes it a guarantee).  Dense
    scores become inner products; others are multiplied by ``scale``."""
    out = []
    for hit in response.get("hits", {}).get("hits", []):
        score = float(hit["_score"])
        out.append((doc_id(hit), inner_product(score) if dense else score * scale))
    out.sort(key=lambda p: rank_key(p[0], p[1]))
    return out


def expanded_hits(response: dict, k: int, keep=None) -> list[tuple[str, float]]:
    """Dense hits with every document sharing a hit's vector at its score, restricted to
    documents ``keep(doc_id)`` accepts, in the harness's total order, cut at ``k``.

    Exact: the top ``k`` documents hold at most ``k`` distinct vectors, and the node was
    asked for the ``k`` best vectors."""
    out = []
    for hit in response.get("hits", {}).get("hits", []):
        score = inner_product(float(hit["_score"]))
        for member in [doc_id(hit), *hit.get("fields", {}).get("vector_members", [])]:
            if keep is None or keep(member):
                out.append((member, score))
    out.sort(key=lambda p: rank_key(p[0], p[1]))
    return out[:k]
