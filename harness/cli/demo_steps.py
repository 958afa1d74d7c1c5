"""Steps of ``harness demo`` that run other harness commands: :func:`quietly` runs one with
its report dropped, :func:`judging_task` builds the Judge page's task."""

from __future__ import annotations

from pathlib import Path


def quietly(argv: list[str]) -> int:
    """A harness command whose report would bury the demo's own lines: its stdout is
    dropped (the files it writes are what the demo uses); errors still reach stderr."""
    import contextlib
    import io

    from harness.cli import main

    with contextlib.redirect_stdout(io.StringIO()):
        code = main(argv)
    if code == 130:
        raise KeyboardInterrupt
    if code != 0:
        raise ValueError(f"harness {argv[0]} failed (exit code {code}; its message is above)")
    return code


def judging_task(workdir: Path, synthetic: Path, cache_dir: Path) -> Path:
    """A judging task for the Judge page (``harness pool`` then ``harness qrels task``): the
    top 10 of a BM25 run over the synthetic corpus alone (the demo's arms share one index
    across corpora, so their lists hold other corpora's documents), a seeded sample of 5
    queries first.  Deterministic: an unchanged demo writes the same bytes."""
    folder = workdir / "judging"
    folder.mkdir(parents=True, exist_ok=True)
    run = folder / "bm25-synthetic"
    quietly(["bench", "--corpus", f"synthetic:{synthetic}", "--mode", "bm25", "--out",
             str(run), "--no-warehouse", "--cache-dir", str(cache_dir)])
    quietly(["export-run", str(run), "--out", str(folder / "bm25.trec"), "--force"])
    quietly(["pool", str(folder / "bm25.trec"), "--depth", "10", "--sample-queries", "5",
             "--seed", "0", "--out", str(folder / "pool.jsonl")])
    quietly(["qrels", "task", "--pool", str(folder / "pool.jsonl"), "--corpus",
             f"synthetic:{synthetic}", "--name", "demo: BM25 top 10 on the synthetic corpus",
             "--out", str(folder / "task")])
    return folder / "task"
