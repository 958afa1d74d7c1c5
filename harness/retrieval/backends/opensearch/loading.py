"""Loading an index: created, bulk-loaded in a fixed order, sealed.

* The index is created with ``refresh_interval -1`` (no refresh while loading) and every
  document is sent with ``op_type create`` in the harness's structural order through
  ``opensearchpy.helpers.streaming_bulk``, so a document id can never be overwritten and the
  load order is the same on every run.  Rejected items (HTTP 429) are retried by
  ``streaming_bulk`` with backoff and counted.  A progress bar shows documents and rate from
  the first batch.
* Refresh, force-merge to one segment, refresh (:func:`.settling.merge`), then the node's
  ``max_seq_no`` is written into the mapping's ``_meta`` as ``sealed_seq_no``: from then on
  any write (an index, an update, a delete) moves ``max_seq_no`` past it, and a run that
  finds it moved refuses the index.
* An interrupted or failed load deletes the index it created (nothing half-loaded stays).
"""

from __future__ import annotations

import logging
import time
from typing import Iterable

from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.opensearch.client import Node

log = logging.getLogger(__name__)

BULK_CHUNK = 500
BULK_BYTES = 20 * 1024 * 1024


class _CountingClient:
    """What ``streaming_bulk`` calls (``transport`` and ``bulk``), with every bulk request
    sent through :meth:`Node.call` and rejected items counted."""

    def __init__(self, node: Node):
        self._node = node
        self.transport = node.client.transport

    def bulk(self, *args, **kwargs):
        response = self._node.call("bulk loading", self._node.client.bulk, *args,
                                   request_timeout=max(self._node.timeout, 120.0), **kwargs)
        rejected = sum(1 for item in response.get("items", [])
                       if next(iter(item.values())).get("status") == 429)
        if rejected:
            self._node.count("bulk_items_rejected_429", rejected)
        return response


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc="loading into OpenSearch", unit="doc", unit_scale=True,
                dynamic_ncols=True)


def load(node: Node, name: str, body: dict, total: int, sources: Iterable[tuple[str, dict]],
         progress: bool) -> dict:
    """Create ``name`` and load ``(doc_id, _source)`` pairs (``total`` of them, already in
    index order).  Returns ``{documents, seconds, docs_per_second}``."""
    from opensearchpy import helpers

    node.call(f"creating index {name}", node.client.indices.create, index=name, body=body)
    started = time.perf_counter()
    bar = _progress(total, progress)
    try:
        actions = ({"_op_type": "create", "_index": name, "_id": doc_id, "_source": source}
                   for doc_id, source in sources)
        loaded = 0
        for _ok, _item in helpers.streaming_bulk(
                _CountingClient(node), actions, chunk_size=BULK_CHUNK,
                max_chunk_bytes=BULK_BYTES, max_retries=node.retries, initial_backoff=0.25,
                max_backoff=8, raise_on_error=True):
            loaded += 1
            if bar is not None:
                bar.update(1)
        seconds = time.perf_counter() - started
    except helpers.BulkIndexError as exc:
        _drop(node, name, exc)
        first = exc.errors[0] if exc.errors else {}
        raise BackendError(f"OpenSearch at {node.url} refused {len(exc.errors)} documents of "
                           f"the load into {name} (the index was deleted again); first: "
                           f"{first}") from None
    except BaseException as exc:
        _drop(node, name, exc)
        raise
    finally:
        if bar is not None:
            bar.close()
    return {"documents": loaded, "seconds": seconds,
            "docs_per_second": loaded / seconds if seconds > 0 else None}


def seal(node: Node, name: str, index_meta: dict) -> dict:
    """Record the load as complete: ``_meta.sealed_seq_no`` = the shard's ``max_seq_no``;
    automatic refreshes back to the default.  Returns the new ``_meta``."""
    from harness.retrieval.backends.opensearch.settling import stats

    try:
        sealed = dict(index_meta, sealed_seq_no=stats(node, name)["max_seq_no"])
        node.call(f"sealing index {name}", node.client.indices.put_mapping, index=name,
                  body={"_meta": sealed})
        node.call(f"restoring the refresh interval of {name}", node.client.indices.put_settings,
                  index=name, body={"index": {"refresh_interval": None}})
    except BaseException as exc:
        _drop(node, name, exc)
        raise
    return sealed


def _drop(node: Node, name: str, exc: BaseException) -> None:
    """Delete the index this run created and failed to finish (best effort: the node may be
    the reason the load failed)."""
    try:
        node.client.indices.delete(index=name, request_timeout=30)
        log.warning("deleted the partly loaded index %s (%s)", name, type(exc).__name__)
    except Exception as cleanup:  # the node is gone or refuses: say so, keep the first error
        log.warning("could not delete the partly loaded index %s: %s", name, cleanup)
