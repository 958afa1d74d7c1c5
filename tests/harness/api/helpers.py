"""Inputs the API tests share: the toy example, a three-system family on 30 queries, and
files read back as bytes."""

from __future__ import annotations

import random
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
TOY = REPO / "examples" / "toy"
#: the toy example as harness score reads it
TOY_ARGS = dict(query_classes=str(TOY / "classes.tsv"), corpus="toy", licence="CC0-1.0")
CLAIM_FILES = ("metrics.json", "metrics.md", "per_query.jsonl", "rankings.jsonl", "qrels.jsonl")


def claim_bytes(results_dir: Path, names=CLAIM_FILES) -> dict[str, bytes]:
    return {name: (Path(results_dir) / name).read_bytes() for name in names}


def make_family(root: Path, queries: int = 30, seed: int = 1) -> tuple[Path, dict[str, Path]]:
    """TREC qrels (graded, some zero labels) and three TREC runs over them; every list is a
    different shuffle, so the systems differ on most queries."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    lines = []
    for i in range(queries):
        for j in range(8):
            lines.append(f"q{i:02d} 0 d{j} {rng.choice([0, 0, 1, 2])}")
        lines.append(f"q{i:02d} 0 d9 1")  # every query judgeable
    qrels = root / "qrels.txt"
    qrels.write_text("\n".join(lines) + "\n")
    runs = {}
    for name in ("bm25", "dense", "hybrid"):
        out = []
        for i in range(queries):
            docs = [f"d{j}" for j in range(10)]
            rng.shuffle(docs)
            for rank, d in enumerate(docs[:6], start=1):
                out.append(f"q{i:02d} Q0 {d} {rank} {1 - rank / 10 + rng.random() / 100:.4f} {name}")
        runs[name] = root / f"{name}.txt"
        runs[name].write_text("\n".join(out) + "\n")
    return qrels, runs
