"""Aggregations read from the index: what it holds, counted by the node.

* :func:`model_survey`: documents per ``embedding_model`` label (and those with none): the
  provenance survey is taken from the indexed documents, never from configuration;
* :func:`files_with_phrase`: the files whose documents contain a phrase, by ``match_phrase``
  on ``text.exact`` and a ``terms`` aggregation on ``file_id`` (reference 000, R3/R4).  A
  bucket list that reaches its size limit raises instead of returning a list that only looks
  complete.  Neither is ever sent with a hybrid query (:meth:`.client.Node.search` refuses).
"""

from __future__ import annotations

from harness.retrieval.backends.opensearch.client import Node
from harness.retrieval.backends.opensearch.mapping import TEXT

#: distinct model labels one survey reads (more is not a survey but a defect)
MODEL_BUCKETS = 1000


class BucketLimit(RuntimeError):
    """A terms aggregation reached its size limit: the list may be incomplete."""


def model_survey(node: Node, name: str) -> dict[str | None, int]:
    body = {"size": 0, "track_total_hits": True,
            "aggs": {"models": {"terms": {"field": "embedding_model", "size": MODEL_BUCKETS}},
                     "silent": {"missing": {"field": "embedding_model"}}}}
    aggs = node.search(f"surveying the embedding models of {name}", name, body)["aggregations"]
    if aggs["models"].get("sum_other_doc_count", 0):
        raise BucketLimit(f"index {name!r} names more than {MODEL_BUCKETS} embedding models")
    counts: dict[str | None, int] = {b["key"]: b["doc_count"] for b in aggs["models"]["buckets"]}
    if aggs["silent"]["doc_count"]:
        counts[None] = aggs["silent"]["doc_count"]
    return counts


def phrase_body(phrase: str, limit: int, files: list[str] | None = None) -> dict:
    """``match_phrase`` on ``text.exact`` + terms on ``file_id`` (``limit + 1`` buckets, so
    reaching the limit is visible), optionally only within ``files``."""
    query: dict = {"match_phrase": {f"{TEXT}.exact": {"query": phrase}}}
    if files is not None:
        query = {"bool": {"must": [query], "filter": [{"terms": {"file_id": sorted(files)}}]}}
    return {"size": 0, "track_total_hits": True, "query": query,
            "aggs": {"files": {"terms": {"field": "file_id", "size": int(limit) + 1,
                                         "order": {"_key": "asc"}}}}}


def files_with_phrase(node: Node, name: str, phrase: str, limit: int) -> list[str]:
    """Sorted file ids whose documents contain ``phrase``; raises :class:`BucketLimit` when
    more than ``limit`` files (or an incomplete bucket list) would be returned."""
    aggs = node.search(f"aggregating files mentioning {phrase!r}", name,
                       phrase_body(phrase, limit))["aggregations"]["files"]
    buckets = [b["key"] for b in aggs["buckets"]]
    if len(buckets) > limit or aggs.get("sum_other_doc_count", 0):
        raise BucketLimit(
            f"index {name!r}: more than {limit} files contain {phrase!r}; the terms "
            "aggregation reached its size limit, so no count is returned (raise the row limit)")
    return sorted(buckets)
