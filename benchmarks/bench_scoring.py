"""Scoring overhead: ``harness.evaluation.scoring.score`` against pytrec_eval called directly.

Both sides get the same qrels and run dicts (1,600 queries x 100 documents); the
baseline is ``pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)`` and does
none of the harness's work (tie normalisation, ``-c`` zeros, drops, validation).  Each
side is timed several times in alternation and the best time is kept.  Times are CPU
seconds of this process (``time.process_time``): both sides are single-threaded, and CPU
time does not swing with whatever else the machine runs.

Rows:

* 10 measures with no run cut-off (nDCG@5/10/20, R@5/10/20, P@5/10, MRR, AP): the
  like-for-like comparison, on dense-retriever-like scores where 10% of the lists hold a
  tie (duplicate chunk texts score the same);
* the full default set (12 measures: adds Success@1 and MRR@10, whose run cut at 10
  needs a second trec_eval pass the baseline does not make, so no target);
* the 10 measures on reciprocal-rank-fusion scores, where every list holds ties and
  every list must be re-ranked and re-scored: the worst case, printed for honesty (no
  target).

The target (1.5) applies to the like-for-like row only.
"""

from __future__ import annotations

import random
import time

SEED = 20260812
TARGET = 1.5
LIKE_FOR_LIKE = ("nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "P@5", "P@10",
                 "MRR", "AP")


def _doc_ids(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct meeting-chunk ids from a few files, with the odd digest."""
    files = [f"M{rng.randrange(400):03d}" for _ in range(6)]
    out: dict[str, None] = {}
    while len(out) < n:
        file_id = rng.choice(files)
        out[f"{file_id}_digest" if rng.random() < 0.02 else f"{file_id}_{rng.randrange(300)}"] = None
    return list(out)


def _float32(value: float) -> float:
    import numpy as np

    return float(np.float32(value))


def make_data(queries: int, docs: int, *, shape: str, seed: int = SEED):
    """``(qrels, run)`` as plain dicts; ``shape`` is ``dense`` or ``rrf``."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(queries):
        query_id = f"q{i:05d}"
        ids = _doc_ids(rng, docs)
        if shape == "dense":
            scores = [_float32(rng.uniform(0.1, 0.9)) for _ in ids]
            if rng.random() < 0.10:  # a duplicate text: two chunks with one embedding
                a, b = rng.sample(range(docs), 2)
                scores[b] = scores[a]
        elif shape == "rrf":
            # two legs ranking overlapping halves of the list; RRF k = 60
            leg_a = rng.sample(ids, docs * 2 // 3)
            leg_b = rng.sample(ids, docs * 2 // 3)
            fused = dict.fromkeys(ids, 0.0)
            for leg in (leg_a, leg_b):
                for rank, doc_id in enumerate(leg, start=1):
                    fused[doc_id] += 1.0 / (60 + rank)
            scores = [fused[d] for d in ids]
        else:
            raise ValueError(f"unknown data shape {shape!r}; expected one of ['dense', 'rrf']")
        run[query_id] = dict(zip(ids, scores))
        judged = rng.sample(ids, 20) + [f"unretrieved_{i}_{j}" for j in range(5)]
        qrels[query_id] = {d: rng.choice((0, 0, 0, 1, 1, 2, 3)) for d in judged}
        qrels[query_id][judged[0]] = max(1, qrels[query_id][judged[0]])
    return qrels, run


def _best_of(fn, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        fn()
        best = min(best, time.process_time() - started)
    return best


def measure(qrels, run, names, repeats: int) -> tuple[float, float]:
    """Best seconds for ``(harness, direct pytrec_eval)``, timed in alternation."""
    import pytrec_eval

    from harness.core.measures import resolve
    from harness.evaluation.scoring import score

    specs = {m.trec_measure for m in resolve(names)}

    def direct():
        return pytrec_eval.RelevanceEvaluator(qrels, specs).evaluate(run)

    def ours():
        return score(qrels, run, names)

    # warm both paths, and check they agree wherever no tie can make them differ
    mine, theirs = ours(), direct()
    for query_id, docs in run.items():
        if len(set(docs.values())) == len(docs):
            for m in resolve(names):
                if m.run_cutoff is None and mine.per_query[query_id][m.name] != theirs[query_id][m.trec_key]:
                    raise RuntimeError(f"harness and pytrec_eval disagree on {query_id} {m.name}")
    best_ours, best_direct = float("inf"), float("inf")
    for _ in range(repeats):
        best_ours = min(best_ours, _best_of(ours, 1))
        best_direct = min(best_direct, _best_of(direct, 1))
    return best_ours, best_direct


def _row(label, ours, direct, target=TARGET) -> dict:
    ratio = ours / direct
    return {"benchmark": label, "ours": round(ours * 1000, 1), "baseline": round(direct * 1000, 1),
            "unit": "ms (CPU)", "ratio": round(ratio, 3), "target": target,
            "ok": None if target is None else ratio <= target}


def run(quick: bool) -> list[dict]:
    from harness.core.measures import DEFAULT_MEASURES

    queries, docs, repeats = (200, 100, 3) if quick else (1600, 100, 15)
    size = f"{queries} q x {docs} docs"
    qrels, dense = make_data(queries, docs, shape="dense")
    rows = [
        _row(f"score vs pytrec_eval, {size}, 10 measures, no cut-off, 10% of lists tied",
             *measure(qrels, dense, LIKE_FOR_LIKE, repeats)),
        _row(f"score vs pytrec_eval, {size}, default 12 measures (MRR@10 second pass)",
             *measure(qrels, dense, DEFAULT_MEASURES, repeats), target=None),
    ]
    qrels, rrf = make_data(queries, docs, shape="rrf")
    rows.append(_row(f"score vs pytrec_eval, {size}, 10 measures, RRF scores: every list tied",
                     *measure(qrels, rrf, LIKE_FOR_LIKE, repeats), target=None))
    rows.append(memory_row(20_000 if quick else 200_000))
    return rows


#: the bound on ``harness score``'s peak memory (README): the interpreter and its libraries,
#: then a multiple of the input
MEMORY_FIXED_MIB = 100
MEMORY_MULTIPLE = 80


def memory_row(queries: int) -> dict:
    """Peak resident memory of ``python -m harness score`` (a process of its own, default
    measures, rankings and warehouse off) on qrels of ``queries`` queries with one judged
    document each and a run of one line per query, against the size of those two files: the
    multiple of its input ``harness score`` holds at its peak; the README promises at most
    :data:`MEMORY_FIXED_MIB` plus :data:`MEMORY_MULTIPLE` times the input."""
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    rng = random.Random(SEED)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "qrels.txt").write_text("".join(f"q{i} 0 d{i} 1\n" for i in range(queries)))
        (root / "run.txt").write_text("".join(f"q{i} Q0 d{rng.randrange(queries)} 1 "
                                              f"{rng.random()!r} t\n" for i in range(queries)))
        size = sum((root / n).stat().st_size for n in ("qrels.txt", "run.txt"))
        probe = ("import resource, subprocess, sys\n"
                 "subprocess.run([sys.executable, '-m', 'harness', 'score', '--qrels', 'qrels.txt',"
                 " '--run', 'run.txt', '--out', 'out', '--no-warehouse', '--keep-rankings', '0'],"
                 " check=True, stdout=subprocess.DEVNULL)\n"
                 "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
        done = subprocess.run([sys.executable, "-c", probe], cwd=root, capture_output=True,
                              text=True, check=True)
        peak = int(done.stdout.split()[-1]) * 1024  # ru_maxrss: KiB on Linux
    return {"benchmark": f"harness score peak memory vs input size, {queries} queries x 1 "
                         "document, default measures, process",
            "ours": round(peak / 2**20, 1), "baseline": round(size / 2**20, 1), "unit": "MiB",
            "ratio": round(peak / size, 1),
            "target": f"<= {MEMORY_FIXED_MIB} MiB + {MEMORY_MULTIPLE} x input",
            "ok": peak <= MEMORY_FIXED_MIB * 2**20 + MEMORY_MULTIPLE * size}
