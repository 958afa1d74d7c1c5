"""Fixtures for the system-under-test backends: a synthetic corpus, the embedded backend's
rankings over it (what the test systems serve) and helpers to write them as TREC files."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.cli import main

HERE = Path(__file__).parent
RETRIEVER = HERE / "retriever.py"


@pytest.fixture(scope="session")
def synthetic(tmp_path_factory):
    from ingestion.synthetic import generate

    return generate(seed=3, meetings=40, out_dir=tmp_path_factory.mktemp("syn") / "syn")


@pytest.fixture(scope="session")
def embedded(tmp_path_factory, synthetic):
    """The embedded BM25 arm's results directory over the synthetic corpus."""
    out = tmp_path_factory.mktemp("embedded") / "bm25"
    assert main(["bench", "--corpus", f"synthetic:{synthetic}", "--mode", "bm25", "--out",
                 str(out), "--no-progress", "--no-warehouse"]) == 0
    return out


@pytest.fixture(scope="session")
def rankings(embedded):
    """query id -> [(doc_id, score), ...] in the embedded arm's rank order."""
    out: dict[str, list] = {}
    for line in (embedded / "rankings.jsonl").read_text().splitlines():
        row = json.loads(line)
        out.setdefault(row["query_id"], []).append((row["rank"], row["doc_id"], row["score"]))
    return {q: [(d, s) for _, d, s in sorted(rows)] for q, rows in out.items()}


def bench(synthetic, *extra) -> int:
    return main(["bench", "--corpus", f"synthetic:{synthetic}", "--no-progress",
                 "--no-warehouse", *extra])


def http_args(url: str, *extra) -> list[str]:
    return ["--backend", "http", "--url-template", url + "/search?qid={query_id}&q={query}&k={k}",
            *extra]


def command_args(rankings_file: Path, *extra, script_args=()) -> list[str]:
    argv = " ".join([sys.executable, str(RETRIEVER), str(rankings_file), *script_args])
    return ["--backend", "command", "--command", argv, *extra]


def write_rankings(rankings: dict, path: Path) -> Path:
    path.write_text(json.dumps(rankings), encoding="utf-8")
    return path


def write_trec(embedded: Path, rankings: dict, folder: Path) -> dict:
    """The rankings as a TREC run, the judgements as TREC qrels, the classes as TSV."""
    run = folder / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} {i + 1} {s!r} sys\n"
                           for q, docs in sorted(rankings.items())
                           for i, (d, s) in enumerate(docs)))
    qrels = folder / "qrels.txt"
    rows = [json.loads(line) for line in (embedded / "qrels.jsonl").read_text().splitlines()]
    qrels.write_text("".join(f"{r['query_id']} 0 {r['doc_id']} {r['relevance']}\n" for r in rows))
    classes = folder / "classes.tsv"
    per_query = [json.loads(line) for line in (embedded / "per_query.jsonl").read_text().splitlines()]
    seen = {}
    for r in per_query:
        seen[r["query_id"]] = r["query_class"]
    classes.write_text("".join(f"{q}\t{c}\n" for q, c in sorted(seen.items())))
    return {"run": run, "qrels": qrels, "classes": classes}


def comparable_rows(metrics: dict, measures) -> list:
    return sorted(((r["corpus"], r["query_class"], r["n"], r["queries_unanswered"],
                    tuple((m, r["metrics"][m]) for m in measures))
                   for r in metrics["rows"]))


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists()
            for p in ([root] if root.is_file() else root.rglob("*")) if p.is_file()]
