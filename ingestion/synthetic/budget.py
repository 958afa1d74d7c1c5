"""Selecting a subset of a synthetic corpus by gold closure.

A query is kept only if *all* of its gold files are selected: an aggregation answer computed
over a partial file set would be a different (wrong) answer that could still score as
correct, and a multi-file question missing one of its files is not the same question.

Rule: the query classes take turns in :data:`CLASS_TURNS` order (the classes no public corpus
judges first), each offering its next query with the fewest gold files (ties by query id);
the query's missing gold files are added if they fit in the budget.  Remaining places are
filled with unselected files in file-id order.  Queries whose gold files are not all selected
are dropped and counted per class.
"""

from __future__ import annotations

from itertools import zip_longest

CLASS_TURNS = ("aggregation", "multi_file", "summarize", "lookup")


def select(file_ids, queries: list[dict], budget: int) -> tuple[list[str], list[dict], dict]:
    """``(selected file ids, kept queries, selection report)``."""
    file_ids = sorted(file_ids)
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"budget must be a positive integer, got {budget!r}")
    selected: set[str] = set()
    by_class: dict[str, list[dict]] = {}
    for q in sorted(queries, key=lambda q: (len(q["gold_files"]), q["query_id"])):
        by_class.setdefault(q["query_class"], []).append(q)
    turns = [c for c in CLASS_TURNS if c in by_class] + sorted(set(by_class) - set(CLASS_TURNS))
    order = [q for row in zip_longest(*(by_class[c] for c in turns)) for q in row if q is not None]
    for q in order:
        need = set(q["gold_files"]) - selected
        if len(selected) + len(need) <= budget:
            selected |= need
    for f in file_ids:
        if len(selected) >= budget:
            break
        selected.add(f)
    kept = [q for q in queries if set(q["gold_files"]) <= selected]
    dropped: dict[str, int] = {}
    for q in queries:
        if not set(q["gold_files"]) <= selected:
            dropped[q["query_class"]] = dropped.get(q["query_class"], 0) + 1
    report = {
        "budget": budget,
        "meetings_generated": len(file_ids),
        "meetings_selected": len(selected),
        "queries_generated": len(queries),
        "queries_kept": len(kept),
        "queries_dropped": len(queries) - len(kept),
        "queries_dropped_by_class": {k: dropped[k] for k in sorted(dropped)},
        "rule": ("gold closure: a query is kept only if all its gold files are selected; "
                 "classes take turns " + "/".join(CLASS_TURNS) + ", fewest gold files first"),
    }
    return sorted(selected), kept, report
