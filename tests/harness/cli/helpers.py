"""Inputs the CLI tests share."""

from __future__ import annotations

import random
from pathlib import Path


def make_inputs(tmp_path: Path, seed: int = 3) -> tuple[Path, Path, Path]:
    """TREC qrels and run full of ties, with q05 unanswered, q07 unjudgeable, and classes."""
    rng = random.Random(seed)
    qrels, run, classes = {}, [], []
    for i in range(40):
        q = f"q{i:02d}"
        ids = list(dict.fromkeys(f"m{rng.randrange(4)}_{rng.choice(['digest', *map(str, range(12))])}"
                                 for _ in range(25)))
        labels = [-1, 0] if i == 7 else [-1, 0, 1, 2]
        for d in rng.sample(ids, 5):
            qrels[(q, d)] = rng.choice(labels)
        if i != 7:
            qrels[(q, ids[0])] = 1
        if i != 5:
            for rank, d in enumerate(ids, start=1):
                run.append(f"{q} Q0 {d} {rank} {rng.choice([0.5, 0.25, 0.125])} sys")
        classes.append(f"{q}\t{'lookup' if i % 2 else 'summarize'}")
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {r}\n" for (q, d), r in qrels.items()))
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    (tmp_path / "classes.tsv").write_text("\n".join(classes) + "\n")
    return tmp_path / "qrels.txt", tmp_path / "run.txt", tmp_path / "classes.tsv"
