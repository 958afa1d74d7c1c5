"""Settling (reference 000): an index is measured only once it is provably the one loaded.

:func:`merge` refreshes, force-merges to one segment and refreshes again: deleted documents
leave tombstones whose term statistics still count toward IDF, so without it two runs over
the same corpus could score differently depending on how much re-indexing happened between.

:func:`await_settled` then polls until three conditions hold together, and refuses (raises
:class:`~harness.retrieval.backends.base.BackendError`) when they do not within the timeout:

1. every expected file has its chunks (per-file counts equal the corpus's, no other file):
   a re-index deletes a file's documents before writing new ones, so a mid-run poll sees a
   corpus that is merely smaller;
2. ``(files, chunks)`` is identical on two consecutive polls: a plateau in a rising count is
   not the end of a load;
3. nothing predates the run's load: every document carries the load id the index records.

:func:`stats` is what metrics.json records before and after the measurement: ``docs.count``,
``docs.deleted``, ``indexing.index_total`` and the segment count (all of the primary shard),
plus the shard's ``max_seq_no``, which every write moves and which survives a node restart
(``indexing.index_total`` counts since the node started).
"""

from __future__ import annotations

import time
from collections import Counter

from harness.retrieval.backends.base import BackendError
from harness.retrieval.backends.opensearch.client import LONG_TIMEOUT, Node

DEFAULT_POLL_SECONDS = 0.5
DEFAULT_TIMEOUT = 60.0
#: composite aggregation page (files per request)
PAGE = 1000


def merge(node: Node, name: str) -> None:
    """Refresh -> force-merge to one segment -> refresh."""
    indices = node.client.indices
    node.call(f"refreshing {name}", indices.refresh, index=name)
    node.call(f"force-merging {name} to one segment", indices.forcemerge, index=name,
              max_num_segments=1, request_timeout=LONG_TIMEOUT)
    node.call(f"refreshing {name}", indices.refresh, index=name)


def stats(node: Node, name: str) -> dict:
    """The primary shard's counters (module docstring)."""
    response = node.call(f"reading the stats of {name}", node.client.indices.stats, index=name,
                         metric="docs,indexing,segments", level="shards")
    index = response["indices"][name]
    primaries = index["primaries"]
    shards = [copy for copies in index.get("shards", {}).values() for copy in copies
              if copy.get("routing", {}).get("primary", True)]
    return {
        "docs_count": int(primaries["docs"]["count"]),
        "docs_deleted": int(primaries["docs"]["deleted"]),
        "indexing_total": int(primaries["indexing"]["index_total"]),
        "segments": int(primaries["segments"]["count"]),
        "max_seq_no": max(int(s["seq_no"]["max_seq_no"]) for s in shards),
    }


def observe(node: Node, name: str) -> tuple[dict[str, int], Counter]:
    """``({file_id: documents}, Counter(load ids))`` from the index itself (exact: a
    composite aggregation paged over every file, a terms aggregation over load ids)."""
    files: dict[str, int] = {}
    after = None
    while True:
        composite = {"size": PAGE, "sources": [{"file": {"terms": {"field": "file_id"}}}]}
        if after is not None:
            composite["after"] = after
        body = {"size": 0, "track_total_hits": True,
                "aggs": {"files": {"composite": composite},
                         **({} if after is not None else {
                             "loads": {"terms": {"field": "load_id", "size": 100}},
                             "no_load": {"missing": {"field": "load_id"}}})}}
        response = node.search(f"counting the files of {name}", name, body)
        aggs = response["aggregations"]
        if after is None:
            loads = Counter({b["key"]: b["doc_count"] for b in aggs["loads"]["buckets"]})
            if aggs["no_load"]["doc_count"]:
                loads[None] = aggs["no_load"]["doc_count"]
            other = aggs["loads"].get("sum_other_doc_count", 0)
            if other:
                loads["(more load ids)"] = other
        buckets = aggs["files"]["buckets"]
        for b in buckets:
            files[b["key"]["file"]] = b["doc_count"]
        after = aggs["files"].get("after_key")
        if not buckets or after is None:
            return files, loads


def problems(files: dict[str, int], loads: Counter, expected: dict[str, int],
             load_id: str) -> list[str]:
    """What keeps the observation from being the loaded corpus (empty: settled)."""
    out = []
    missing = sorted(set(expected) - set(files))
    if missing:
        out.append(f"{len(missing)} of {len(expected)} expected files have no chunks "
                   f"(first: {', '.join(missing[:3])})")
    extra = sorted(set(files) - set(expected))
    if extra:
        out.append(f"{len(extra)} files that are not in this corpus (first: "
                   f"{', '.join(extra[:3])})")
    short = sorted(f for f in set(files) & set(expected) if files[f] != expected[f])
    if short:
        f = short[0]
        out.append(f"{len(short)} files hold a different number of chunks than the corpus "
                   f"(first: {f} has {files[f]}, expected {expected[f]})")
    foreign = {k: n for k, n in loads.items() if k != load_id}
    if foreign:
        out.append(f"{sum(foreign.values())} documents predate this index's load (load ids "
                   f"{sorted(map(str, foreign))}, expected only {load_id})")
    return out


def await_settled(node: Node, name: str, expected: dict[str, int], load_id: str, *,
                  poll_seconds: float = DEFAULT_POLL_SECONDS,
                  timeout: float = DEFAULT_TIMEOUT, sleep=time.sleep) -> int:
    """Poll until the three conditions of the module docstring hold; returns the number of
    polls.  Raises :class:`BackendError` naming what was wrong at the last poll."""
    deadline = time.monotonic() + timeout
    previous = None
    polls = 0
    while True:
        files, loads = observe(node, name)
        polls += 1
        wrong = problems(files, loads, expected, load_id)
        key = (tuple(sorted(files.items())), sum(files.values()))
        if not wrong:
            if key == previous:
                return polls
            if previous is not None:
                wrong = ["(files, chunks) changed between two consecutive polls"]
            previous = key
        else:
            previous = None
        if time.monotonic() >= deadline:
            raise BackendError(
                f"refusing to measure index {name!r}: not settled after {polls} polls in "
                f"{timeout:g} s: " + ("; ".join(wrong) if wrong else
                                      "no second poll to confirm the first"))
        sleep(poll_seconds)
