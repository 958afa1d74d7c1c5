"""An independent implementation of the harness's measures, written from the definitions.

It shares no code with ``harness``: its own id parser, its own sort, its own measures.
Other tests compare ``harness.evaluation.scoring`` to it; the tests in this file check it on cases
worked out by hand, so the oracle is itself checked.

Definitions (Jarvelin & Kekalainen 2002 for nDCG, with trec_eval's linear gain and
``log2(rank + 1)`` discount; Voorhees 1999 for reciprocal rank):

* order: score descending, then ``(doc_type, file_id, chunk_index, doc_id)`` with
  ``{file}_{n}`` a chunk, ``{file}_digest`` a digest (index -1), anything else a doc;
* gain = relevance (negative labels count as 0; ``binary`` makes every positive grade 1);
* nDCG@k = DCG of the top k / DCG of the best k judged documents (ideal truncated at k);
  bare nDCG uses the whole list and every judged document;
* R@k = relevant documents in the top k / relevant documents judged;
* P@k = relevant documents in the top k / k;
* RR = 1 / rank of the first relevant document (0 if none); MRR@10 looks at the top 10;
* AP = mean over the judged relevant documents of the precision at their rank (0 if
  not retrieved);
* Success@k = 1 if a relevant document is in the top k.

A query with no relevant judgement is dropped; a judgeable query the run did not answer
scores 0 on every measure.
"""

from __future__ import annotations

import math
import random
import re

_CHUNK = re.compile(r"(.+)_([0-9]+)")
_DIGEST = re.compile(r"(.+)_digest")
_TYPE_ORDER = {"chunk": 0, "digest": 1, "doc": 2}


def structure(doc_id: str) -> tuple:
    m = _DIGEST.fullmatch(doc_id)
    if m:
        return (_TYPE_ORDER["digest"], m.group(1), -1, doc_id)
    m = _CHUNK.fullmatch(doc_id)
    if m:
        return (_TYPE_ORDER["chunk"], m.group(1), int(m.group(2)), doc_id)
    return (_TYPE_ORDER["doc"], doc_id, 0, doc_id)


def harness_order(docs) -> list[tuple[str, float]]:
    """``docs`` as ``(doc_id, score)`` pairs in the order the harness promises."""
    pairs = list(docs.items()) if isinstance(docs, dict) else list(docs)
    by_score: dict[float, list] = {}
    for doc_id, value in pairs:
        by_score.setdefault(value, []).append((doc_id, value))
    out = []
    for value in sorted(by_score, reverse=True):
        out.extend(sorted(by_score[value], key=lambda p: structure(p[0])))
    return out


def _dcg(gains) -> float:
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def query_values(judged: dict[str, int], ranking: list[str], binary: bool = False) -> dict:
    def gain(doc_id):
        rel = max(judged.get(doc_id, 0), 0)
        return min(rel, 1) if binary else rel

    gains = [gain(d) for d in ranking]
    ideal = sorted((gain(d) for d in judged), reverse=True)
    relevant = sum(1 for d in judged if gain(d) > 0)
    hits = [1 if g > 0 else 0 for g in gains]
    first = next((i + 1 for i, h in enumerate(hits) if h), None)
    out = {}
    for k in (5, 10, 20):
        out[f"nDCG@{k}"] = _dcg(gains[:k]) / _dcg(ideal[:k])
    out["nDCG"] = _dcg(gains) / _dcg(ideal)
    for k in (5, 10, 20, 100):
        out[f"R@{k}"] = sum(hits[:k]) / relevant
    for k in (5, 10):
        out[f"P@{k}"] = sum(hits[:k]) / k
    out["MRR"] = 1 / first if first else 0.0
    out["MRR@10"] = 1 / first if first and first <= 10 else 0.0
    precisions = [sum(hits[:i + 1]) / (i + 1) for i, h in enumerate(hits) if h]
    out["AP"] = sum(precisions) / relevant
    for k in (1, 5, 10):
        out[f"Success@{k}"] = 1.0 if any(hits[:k]) else 0.0
    return out


def evaluate(qrels: dict, run: dict, binary: bool = False) -> dict[str, dict[str, float]]:
    """Per judgeable query, every measure (trec_eval -c: unanswered queries score 0)."""
    out = {}
    for q, judged in qrels.items():
        if not any(r > 0 for r in judged.values()):
            continue  # unjudgeable: dropped
        ranking = [d for d, _ in harness_order(run.get(q, {}))]
        out[q] = query_values(judged, ranking, binary)
    return out


def random_doc_id(rng: random.Random) -> str:
    """Chunk ids (some zero-padded), digests and plain document ids, over a few files."""
    file_id = rng.choice(["ES2006a", "ES2006b", "Bed002", "a_b", "TS3012c"])
    kind = rng.random()
    if kind < 0.65:
        index = rng.randrange(25)
        return f"{file_id}_{index:02d}" if rng.random() < 0.1 else f"{file_id}_{index}"
    if kind < 0.8:
        return f"{file_id}_digest"
    return rng.choice(["doc7", "DOC-3", "x", "_5", "f_-1", "beir:42"]) + rng.choice(["", "b"])


# --------------------------------------------------------------------------- the oracle's own checks
