"""The pairs to judge: a TREC pool of runs' top ``depth`` (Sparck Jones & van Rijsbergen,
1975; Voorhees & Harman, *TREC*, 2005).

Every (query, document) pair some run ranks at depth ``depth`` or better is in the pool, once;
pairs the team's judgements already hold are skipped (and counted).  The queue is ordered so
that a label changes the most comparisons first: pairs more runs retrieve come first, then
by ``priority``, the pair's summed rank discount ``sum 1 / log2(rank + 1)`` over the runs
(how much each run's DCG moves with its gain; the "move-to-front" intuition of Cormack,
Palmer & Clarke, SIGIR 1998), then by best rank, then by ids, so the file is deterministic.

A random sample of queries can be drawn for hand labelling (``sample_queries``, seeded):
prediction-powered inference (:mod:`.estimate`) is valid only over a uniformly drawn
labelled set, so the sample and its seed are recorded in the pool's header and its pairs
lead the queue.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.core.canonical import FLOAT_DECIMALS, canonical_line, canonical_lines
from harness.core.formats import FormatError, read_jsonl, require_field
from harness.evaluation.judged import top_ids
from harness.evaluation.ordering import normalise_ranking

KIND = "pool"
SCHEMA = 1


@dataclass(frozen=True)
class PoolPair:
    """One (query, document) pair to judge and why it is in the pool."""

    query_id: str
    doc_id: str
    runs: tuple[str, ...]  #: the runs ranking it at depth or better, sorted
    best_rank: int  #: its best rank (1-based) over those runs
    priority: float  #: sum over those runs of 1 / log2(rank + 1), as the file holds it
    sampled: bool = False  #: its query is in the hand-labelling sample

    def to_dict(self) -> dict[str, Any]:
        return {"query_id": self.query_id, "doc_id": self.doc_id, "runs": list(self.runs),
                "best_rank": self.best_rank, "priority": self.priority, "sampled": self.sampled}


@dataclass(frozen=True)
class Pool:
    """A pool: its header (how it was made) and its pairs in queue order."""

    depth: int
    runs: tuple[tuple[str, str], ...]  #: (name, sha256) of each pooled run, in given order
    judged: dict[str, str] | None  #: {"path", "sha256"} of the judgements skipped, if any
    judged_skipped: int
    sample: dict[str, Any] | None  #: {"queries": [...], "seed": s} when a sample was drawn
    pairs: tuple[PoolPair, ...]

    @property
    def queries(self) -> list[str]:
        return sorted({p.query_id for p in self.pairs})

    def header(self) -> dict[str, Any]:
        return {"kind": KIND, "schema": SCHEMA, "depth": self.depth,
                "runs": [{"name": n, "sha256": s} for n, s in self.runs],
                "judged": self.judged, "judged_skipped": self.judged_skipped,
                "sample": self.sample, "pairs": len(self.pairs),
                "queries": len(self.queries)}

    def text(self) -> str:
        """The pool file: the header line, then one line per pair in queue order."""
        return canonical_line(self.header()) + "\n" + canonical_lines(
            [p.to_dict() for p in self.pairs])


def _discount(rank: int) -> float:
    return 1.0 / math.log2(rank + 1)


def build_pool(runs: Sequence[tuple[str, str, Mapping[str, Sequence]]], depth: int, *,
               judged: Mapping[str, Mapping[str, int]] | None = None,
               judged_source: dict[str, str] | None = None,
               sample_queries: int = 0, seed: int = 0,
               preserve_order: bool = False) -> Pool:
    """The pool of ``runs`` (``(name, sha256, {query: ranking})`` each) at ``depth``.

    Rankings are ordered as scoring orders them (ties as :mod:`harness.evaluation.ordering`
    breaks them) unless ``preserve_order``.  ``sample_queries`` > 0 draws that many of the
    pool's queries uniformly at random with ``seed`` for hand labelling."""
    if depth < 1:
        raise ValueError(f"--depth must be at least 1, got {depth}")
    if not runs:
        raise ValueError("pooling needs at least one run")
    names = [name for name, _, _ in runs]
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"two runs are named {dup[0]!r}: give each run a distinct name")
    judged = judged or {}
    found: dict[tuple[str, str], list[tuple[str, int]]] = {}
    skipped: set[tuple[str, str]] = set()
    for name, _, run in runs:
        for query_id, docs in run.items():
            ranked = top_ids(normalise_ranking(docs, preserve_order, query_id=query_id))
            held = judged.get(query_id, {})
            for rank, doc_id in enumerate(ranked[:depth], start=1):
                if doc_id in held:
                    skipped.add((query_id, doc_id))
                    continue
                found.setdefault((query_id, doc_id), []).append((name, rank))
    queries = sorted({q for q, _ in found})
    if sample_queries < 0:
        raise ValueError(f"--sample-queries must be 0 or more, got {sample_queries}")
    if sample_queries > len(queries):
        raise ValueError(f"--sample-queries {sample_queries}: the pool has only "
                         f"{len(queries)} queries with pairs to judge")
    chosen = set(random.Random(seed).sample(queries, sample_queries)) if sample_queries else set()
    pairs = [PoolPair(q, d, tuple(sorted(n for n, _ in hits)), min(r for _, r in hits),
                      round(sum(_discount(r) for _, r in hits), FLOAT_DECIMALS), q in chosen)
             for (q, d), hits in found.items()]
    pairs.sort(key=lambda p: (not p.sampled, -len(p.runs), -p.priority, p.best_rank,
                              p.query_id, p.doc_id))
    sample = {"queries": sorted(chosen), "seed": seed} if sample_queries else None
    return Pool(depth, tuple((n, s) for n, s, _ in runs), judged_source, len(skipped), sample,
                tuple(pairs))


def _count(value: Any) -> bool:
    return type(value) is int and value >= 0


def _check_header(head: dict[str, Any], path: str | Path, line: int) -> None:
    """Every header field as :meth:`Pool.header` writes it, or a located error."""
    if head.get("kind") != KIND:
        raise FormatError(path, line, "kind", f"expected {KIND!r} (a file `harness pool` "
                          f"writes), got {head.get('kind')!r}")
    if type(head.get("schema")) is not int or head.get("schema") != SCHEMA:
        raise FormatError(path, line, "schema", f"expected {SCHEMA}, got {head.get('schema')!r}")
    depth = head.get("depth")
    if type(depth) is not int or depth < 1:
        raise FormatError(path, line, "depth", f"expected a positive integer, got {depth!r}")
    runs = head.get("runs")
    if not (isinstance(runs, list) and runs and all(
            isinstance(r, dict) and isinstance(r.get("name"), str) and r["name"]
            and isinstance(r.get("sha256"), str) for r in runs)):
        raise FormatError(path, line, "runs", "expected a non-empty list of {name, sha256} "
                          "objects")
    judged = head.get("judged")
    if judged is not None and not (isinstance(judged, dict) and all(
            isinstance(judged.get(k), str) for k in ("path", "sha256"))):
        raise FormatError(path, line, "judged", "expected null or {path, sha256}")
    for name in ("judged_skipped", "pairs", "queries"):
        if not _count(head.get(name)):
            raise FormatError(path, line, name, f"expected a count, got {head.get(name)!r}")
    sample = head.get("sample")
    if sample is not None and not (
            isinstance(sample, dict) and type(sample.get("seed")) is int
            and isinstance(sample.get("queries"), list) and sample["queries"]
            and all(isinstance(q, str) and q for q in sample["queries"])):
        raise FormatError(path, line, "sample", "expected null or {queries: [ids], seed: int}")


def _pair(obj: dict[str, Any], path: str | Path, line: int) -> PoolPair:
    key = (require_field(obj, "query_id", path, line), require_field(obj, "doc_id", path, line))
    rank = obj.get("best_rank")
    if type(rank) is not int or rank < 1:
        raise FormatError(path, line, "best_rank", f"expected a positive integer, got {rank!r}")
    run_names = obj.get("runs")
    if not (isinstance(run_names, list) and run_names
            and all(isinstance(n, str) and n for n in run_names)):
        raise FormatError(path, line, "runs", "expected a non-empty list of run names")
    priority = obj.get("priority")
    if isinstance(priority, bool) or not isinstance(priority, (int, float)) \
            or not 0 < priority < math.inf:
        raise FormatError(path, line, "priority", f"expected a positive number, got {priority!r}")
    sampled = obj.get("sampled")
    if type(sampled) is not bool:
        raise FormatError(path, line, "sampled", f"expected true or false, got {sampled!r}")
    return PoolPair(key[0], key[1], tuple(run_names), rank, float(priority), sampled)


def read_pool(path: str | Path) -> Pool:
    """A pool file written by :meth:`Pool.text`, checked line by line."""
    lines = read_jsonl(path)
    try:
        line, head = next(lines)
    except StopIteration:
        raise FormatError(path, None, None, "empty file: expected a pool header line") from None
    _check_header(head, path, line)
    names = {r["name"] for r in head["runs"]}
    pairs, seen = [], set()
    for line, obj in lines:
        pair = _pair(obj, path, line)
        key = (pair.query_id, pair.doc_id)
        if key in seen:
            raise FormatError(path, line, "doc_id", f"pair {key} appears twice")
        strays = sorted(set(pair.runs) - names)
        if strays:
            raise FormatError(path, line, "runs", f"run {strays[0]!r} is not in the header")
        if pair.best_rank > head["depth"]:
            raise FormatError(path, line, "best_rank", f"{pair.best_rank} is below the pool's "
                              f"depth {head['depth']}")
        seen.add(key)
        pairs.append(pair)
    if len(pairs) != head["pairs"]:
        raise FormatError(path, None, "pairs", f"the header promises {head['pairs']!r} "
                          f"pairs but the file holds {len(pairs)}: it is truncated or edited")
    sample = head["sample"]
    if sample is not None:
        flagged = {p.query_id for p in pairs if p.sampled}
        if flagged != set(sample["queries"]):
            raise FormatError(path, None, "sample", "the pairs marked sampled are not the "
                              "header's sample queries: the file was edited")
    return Pool(head["depth"], tuple((r["name"], r["sha256"]) for r in head["runs"]),
                head["judged"], head["judged_skipped"], sample, tuple(pairs))
