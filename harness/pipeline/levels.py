"""File-level measures from chunk-level runs, by first occurrence.

A chunk list ``[a_3, b_1, a_7, c_0]`` becomes the file list ``[a, b, c]``: each file at
the rank of its first chunk.  Scored against file-level qrels (a file is relevant when
it holds gold) in that order (``preserve_order``), the measures say whether the right
*meeting* surfaced, separately from whether the right passage in it won.  They are added
to each row under names prefixed ``file:`` (``file:Success@1``, ``file:R@10`` ...).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Mapping, Sequence

from harness.core.measures import FILE_PREFIX
from harness.evaluation.scoring import ScoreResult, score

FILE_MEASURES: tuple[str, ...] = ("Success@1", "Success@5", "R@10", "MRR")


def first_occurrence(ranking: Sequence[tuple[str, float]],
                     file_of: Callable[[str], str]) -> list[tuple[str, float]]:
    """Files in order of their first document in ``ranking`` (with that document's score)."""
    if not ranking:
        return []
    doc_ids, values = zip(*ranking)
    files = list(map(file_of, doc_ids))
    first = dict(zip(reversed(files), reversed(values)))  # the earliest document's value wins
    return [(file_id, first[file_id]) for file_id in dict.fromkeys(files)]


def file_level_result(chunk_result: ScoreResult, file_qrels: Mapping[str, Mapping[str, int]],
                      file_of: Callable[[str], str],
                      measures: Sequence[str] = FILE_MEASURES) -> ScoreResult:
    """Score each scored query's chunk list, collapsed to files, against ``file_qrels``.

    Uses the scored (normalised) order the chunk result kept, so it needs
    ``keep_rankings`` on the chunk result.  Every query the chunk result scored must have
    file qrels: the two levels must share a denominator.
    """
    queries = sorted(chunk_result.per_query)
    missing = [q for q in queries if not any(r > 0 for r in file_qrels.get(q, {}).values())]
    if missing:
        raise ValueError(f"{len(missing)} chunk-scored queries have no relevant file in the "
                         f"file qrels (e.g. {missing[:3]}); the two levels would not share "
                         "a query set")
    run = {}
    for q in queries:
        files = [f for f, _ in first_occurrence(chunk_result.rankings.get(q, []), file_of)]
        run[q] = list(zip(files, map(float, range(len(files), 0, -1))))
    return score({q: dict(file_qrels[q]) for q in queries}, run, measures, binary=True,
                 preserve_order=True)


def merge_file_measures(chunk_result: ScoreResult, file_result: ScoreResult) -> ScoreResult:
    """``chunk_result`` with ``file:``-prefixed measures added to every scored query."""
    names = tuple(FILE_PREFIX + m for m in file_result.measures)
    per_query = {}
    for q, values in chunk_result.per_query.items():
        extra = file_result.per_query[q]
        per_query[q] = {**values, **{FILE_PREFIX + m: extra[m] for m in file_result.measures}}
    return replace(chunk_result, measures=chunk_result.measures + names, per_query=per_query)
