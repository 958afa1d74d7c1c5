"""``calibration.jsonl``: the scores of the stage that selects context, with relevance.

One line per scored query, canonical JSON, sorted by (corpus, query_id)::

    {"corpus", "tier", "query_id", "query_class", "stage",
     "scores": [top <= 50 scores, in the stage's order],
     "relevant": [bool per candidate], "first_relevant_rank": int | null}

Which list: at ``--stage retrieve`` the retrieved list (fused scores for hybrid, the leg's
scores otherwise); at ``--stage rerank`` the cross-encoder-scored head of the pool, in
cross-encoder order (the un-reranked tail carries another scale and is left out).
``relevant`` is a positive judgement at the run's granularity; ``first_relevant_rank``
is 1-based within ``scores``.  A query the run did not answer has empty lists.
"""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

from harness.canonical import canonical_line

CALIBRATION_FILE = "calibration.jsonl"
MAX_CANDIDATES = 50


def calibration_row(corpus: str, tier: str, query_id: str, query_class: str | None,
                    stage: str, candidates: Sequence[tuple[str, float]],
                    is_relevant: Callable[[str], bool]) -> dict:
    top = list(candidates[:MAX_CANDIDATES])
    relevant = [bool(is_relevant(doc_id)) for doc_id, _ in top]
    first = next((i + 1 for i, r in enumerate(relevant) if r), None)
    return {"corpus": corpus, "tier": tier, "query_id": query_id, "query_class": query_class,
            "stage": stage, "scores": [float(s) for _, s in top], "relevant": relevant,
            "first_relevant_rank": first}


def calibration_text(rows: Sequence[Mapping]) -> str:
    ordered = sorted(rows, key=lambda r: (r["corpus"], r["query_id"]))
    return "".join(canonical_line(r) + "\n" for r in ordered)
