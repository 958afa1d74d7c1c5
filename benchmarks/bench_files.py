"""Claim files and run files: the writer and readers against their previous versions, and
``harness score`` as a process against the official trec_eval binary.

Data: 1,600 queries x 100 documents (``bench_scoring.make_data``, dense-like scores), as
TREC, BEIR TSV and JSONL files; the claim rows are the ones ``harness score`` writes for
them (per_query.jsonl: 16,000 rows of 10 measures; rankings.jsonl: 160,000 rows).

Rows (ratio = ours / baseline, so below 1 is faster):

* the canonical JSONL writer against the previous one (the frozen copy the tests check
  byte identity against, ``tests/harness/core/canonical_reference.py``): target 0.1;
* each reader (TREC run and qrels, BEIR qrels, JSONL run and qrels) against the previous
  one (``tests/harness/core/formats_reference.py``): target 1/3; and the run reader
  ``harness score`` uses (``read_run_columns``: the same lists as two columns per query,
  no record per document) against the previous record-building readers;
* each reader's fast path against its line-by-line path (the one that names a bad line),
  on the 160,000-line run and on qrels judging every document of it (160,000 lines): a
  fast path is kept only where it saves at least 0.1 s (:data:`PATH_SAVING`);
* ``python -m harness score`` end to end (10 measures, no warehouse) against the
  ``trec_eval -c`` process on the same files, when ``TREC_EVAL`` names a binary: target 5,
  in wall time and in CPU time of the process.  The product's modules are byte-compiled
  first (as in an installed copy), so no side pays for compiling source.

In-process sides are timed in alternation (CPU seconds, best of several runs, a garbage
collection before each); processes likewise (wall clock and the children's CPU time).
"""

from __future__ import annotations

import gc
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

MEASURES = ("nDCG@5", "nDCG@10", "nDCG@20", "R@5", "R@10", "R@20", "P@5", "P@10", "MRR", "AP")
TREC_MEASURES = ("-m", "ndcg_cut.5,10,20", "-m", "recall.5,10,20", "-m", "P.5,10",
                 "-m", "recip_rank", "-m", "map")
WRITER_TARGET, READER_TARGET, CLI_TARGET, IR_MEASURES_TARGET = 0.1, 1 / 3, 4.0, 1.0
#: the same measures as ir_measures names them (its CLI is the second baseline)
IR_MEASURES = tuple("RR" if m == "MRR" else m for m in MEASURES)
#: CPU seconds a reader's fast path must save on a 160,000-line file to be worth a second path
PATH_SAVING = 0.1
#: the size of file that judgement is made on
FULL_LINES = 160_000
REPO = Path(__file__).resolve().parents[1]


def write_inputs(folder: Path, queries: int, docs: int) -> dict[str, Path]:
    """The benchmark's qrels and run in every format, in ``folder``."""
    from benchmarks.bench_scoring import make_data
    from harness.core.formats import write_beir_qrels, write_jsonl, write_trec_qrels, write_trec_run
    from harness.core.records import ScoredDoc

    qrels, run = make_data(queries, docs, shape="dense")
    ranked = {q: [ScoredDoc(q, d, s) for d, s in sorted(scores.items(), key=lambda p: -p[1])]
              for q, scores in run.items()}
    paths = {name: folder / name for name in
             ("qrels.txt", "run.txt", "qrels.tsv", "qrels.jsonl", "run.jsonl")}
    write_trec_qrels(paths["qrels.txt"], qrels)
    write_trec_run(paths["run.txt"], ranked)
    write_beir_qrels(paths["qrels.tsv"], qrels)
    write_jsonl(paths["qrels.jsonl"], ({"query_id": q, "doc_id": d, "relevance": r}
                                       for q in sorted(qrels) for d, r in sorted(qrels[q].items())))
    write_jsonl(paths["run.jsonl"], ({"query_id": d.query_id, "doc_id": d.doc_id, "score": d.score}
                                     for q in sorted(ranked) for d in ranked[q]))
    return paths


def write_judged_qrels(folder: Path, queries: int, docs: int) -> dict[str, Path]:
    """Qrels judging every document of the benchmark's run (``queries x docs`` lines), as
    TREC, BEIR TSV and JSONL, in ``folder``."""
    from benchmarks.bench_scoring import make_data
    from harness.core.formats import write_beir_qrels, write_jsonl, write_trec_qrels

    _, run = make_data(queries, docs, shape="dense")
    qrels = {q: {d: i % 4 - (i % 7 == 0) for i, d in enumerate(sorted(scores))}
             for q, scores in run.items()}
    paths = {name: folder / f"judged-{name}" for name in ("qrels.txt", "qrels.tsv", "qrels.jsonl")}
    write_trec_qrels(paths["qrels.txt"], qrels)
    write_beir_qrels(paths["qrels.tsv"], qrels)
    write_jsonl(paths["qrels.jsonl"], ({"query_id": q, "doc_id": d, "relevance": r}
                                       for q in sorted(qrels) for d, r in sorted(qrels[q].items())))
    return paths


def _best_pair(ours, baseline, repeats: int) -> tuple[float, float]:
    """Best CPU seconds of each, timed in alternation."""
    best = [float("inf"), float("inf")]
    for _ in range(repeats):
        for i, fn in enumerate((ours, baseline)):
            gc.collect()
            started = time.process_time()
            result = fn()
            best[i] = min(best[i], time.process_time() - started)
            del result
    return best[0], best[1]


def _row(label, ours, baseline, unit, target, scale=1000.0) -> dict:
    ratio = None if baseline is None else ours / baseline
    return {"benchmark": label, "ours": round(ours * scale, 1),
            "baseline": None if baseline is None else round(baseline * scale, 1), "unit": unit,
            "ratio": None if ratio is None else round(ratio, 3), "target": target,
            "ok": None if ratio is None or target is None else ratio <= target}


def claim_rows(paths):
    from harness.core.formats import read_qrels, read_run
    from harness.evaluation.rows import QueryMeta, per_query_rows, ranking_rows
    from harness.evaluation.scoring import score

    qrels = read_qrels(paths["qrels.txt"])
    result = score(qrels.judgements, read_run(paths["run.txt"]), MEASURES, keep_rankings=100)
    meta = {q: QueryMeta("bench", None) for q in qrels.judgements}
    return per_query_rows(result, meta, {"bench": "A"}), ranking_rows(result, meta)


def writer_rows(paths, repeats: int) -> list[dict]:
    from harness.core.canonical import canonical_lines
    from tests.harness.core.canonical_reference import reference_lines

    rows = []
    for name, table in zip(("per_query.jsonl", "rankings.jsonl"), claim_rows(paths)):
        if canonical_lines(table) != reference_lines(table):
            raise RuntimeError(f"the canonical writer changed the bytes of {name}")
        ours, baseline = _best_pair(partial(canonical_lines, table), partial(reference_lines, table),
                                    repeats)
        rows.append(_row(f"canonical JSONL writer vs previous, {name} ({len(table):,} rows)",
                         ours, baseline, "ms (CPU)", WRITER_TARGET))
    return rows


def reader_rows(paths, repeats: int) -> list[dict]:
    from harness.core import formats
    from tests.harness.core import formats_reference as previous

    rows = []
    for reader, name in (("read_trec_run", "run.txt"), ("read_trec_qrels", "qrels.txt"),
                         ("read_beir_qrels", "qrels.tsv"), ("read_jsonl_run", "run.jsonl"),
                         ("read_jsonl_qrels", "qrels.jsonl")):
        path = paths[name]
        new, old = getattr(formats, reader), getattr(previous, reader)
        a, b = new(path), old(path)
        if getattr(a, "judgements", a) != getattr(b, "judgements", b):
            raise RuntimeError(f"{reader} reads {name} differently from the previous reader")
        ours, baseline = _best_pair(partial(new, path), partial(old, path), repeats)
        lines = sum(1 for _ in path.open("rb"))
        rows.append(_row(f"{reader} vs previous, {name} ({lines:,} lines)", ours, baseline,
                         "ms (CPU)", READER_TARGET))
    for name, reader in (("run.txt", "read_trec_run"), ("run.jsonl", "read_jsonl_run")):
        path, old = paths[name], getattr(previous, reader)
        columns = formats.read_run_columns(path)
        if {q: [(d.doc_id, d.score) for d in docs] for q, docs in old(path).items()} != {
                q: list(zip(*docs)) for q, docs in columns.items()}:
            raise RuntimeError(f"read_run_columns reads {name} differently from {reader}")
        ours, baseline = _best_pair(partial(formats.read_run_columns, path), partial(old, path),
                                    repeats)
        rows.append(_row(f"read_run_columns (what harness score reads) vs previous {reader}, "
                         f"{name}", ours, baseline, "ms (CPU)", READER_TARGET))
    return rows


def _paused(fn, *args, **kwargs):
    from harness.core.formats import gc_paused

    with gc_paused():  # as the readers run both paths
        return fn(*args, **kwargs)


def _whole(fast, path):
    from harness.core.formats import gc_paused
    from harness.core.formats.base import _whole_text

    with gc_paused():  # as the qrels readers run it: on the file read whole
        return fast(_whole_text(path))


def path_rows(paths, judged, repeats: int) -> list[dict]:
    """Each reader's fast path against its line-by-line path, on the same file (both read
    it whole and accept it): CPU ms, and the seconds the fast path saves."""
    from harness.core.formats import beir, json_files, jsonl, trec

    cases = [
        ("read_trec_run", paths["run.txt"], partial(_paused, trec._fast_trec_run),
         partial(_paused, trec._located_trec_run)),
        ("read_run_columns (TREC)", paths["run.txt"],
         partial(_paused, trec._fast_trec_run, records=False), partial(_paused, trec._located_trec_run)),
        ("read_jsonl_run", paths["run.jsonl"], partial(_paused, jsonl._fast_jsonl_run),
         partial(_paused, jsonl._located_jsonl_run)),
        ("read_run_columns (JSONL)", paths["run.jsonl"],
         partial(_paused, jsonl._fast_jsonl_run, records=False),
         partial(_paused, jsonl._located_jsonl_run)),
        ("read_trec_qrels", judged["qrels.txt"], partial(_whole, trec._fast_trec_qrels),
         partial(_paused, trec._located_trec_qrels)),
        ("read_beir_qrels", judged["qrels.tsv"], partial(_whole, beir._fast_beir_qrels),
         partial(_paused, beir._located_beir_qrels)),
        ("read_jsonl_qrels", judged["qrels.jsonl"],
         partial(_paused, json_files._fast_jsonl, fields=("query_id", "doc_id", "relevance")),
         partial(_paused, jsonl._located_jsonl_qrels)),
    ]
    rows = []
    for reader, path, fast, located in cases:
        if fast(path) is None:
            raise RuntimeError(f"{reader}: the fast path does not read {path.name}")
        ours, baseline = _best_pair(partial(fast, path), partial(located, path), repeats)
        lines = sum(1 for _ in path.open("rb"))
        row = _row(f"{reader}: fast path vs line-by-line, {path.name} ({lines:,} lines)", ours,
                   baseline, "ms (CPU)", None)
        saved = baseline - ours
        rows.append({**row, "saved_s": round(saved, 3),
                     "ok": saved >= PATH_SAVING if lines >= FULL_LINES else None})
    return rows + [_jsonl_block_row(paths["run.jsonl"], repeats)]


def _jsonl_block_row(path: Path, repeats: int) -> dict:
    """``read_jsonl``'s two block decoders: the block as one JSON array (keys read once)
    against the C scanner on each line (its path where the array cannot be joined)."""
    from harness.core.formats import json_files

    lines = path.read_text(encoding="utf-8").splitlines()

    def blocks(decode):
        with _paused_gc():
            return [decode(lines[i:i + 2000]) for i in range(0, len(lines), 2000)]

    if blocks(json_files._together) != blocks(json_files._decoded):
        raise RuntimeError("read_jsonl's block decoders disagree")
    ours, baseline = _best_pair(partial(blocks, json_files._together),
                                partial(blocks, json_files._decoded), repeats)
    row = _row(f"read_jsonl: a block as one array vs the scanner per line, {path.name} "
               f"({len(lines):,} lines)", ours, baseline, "ms (CPU)", None)
    return {**row, "saved_s": round(baseline - ours, 3), "ok": None}


def _paused_gc():
    from harness.core.formats import gc_paused

    return gc_paused()


def _process(cmd, env) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cli_rows(paths, folder: Path, repeats: int) -> list[dict]:
    # the product's modules byte-compiled first, as an installed copy has them: compiling
    # them is a first run's cost, and never made when PYTHONDONTWRITEBYTECODE is set
    import compileall

    for package in ("harness",):
        compileall.compile_dir(REPO / package, quiet=1)
    pythonpath = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": pythonpath}
    ours_cmd = [sys.executable, "-m", "harness", "score", "--qrels", str(paths["qrels.txt"]),
                "--run", str(paths["run.txt"]), "--out", str(folder / "out"), "--no-warehouse",
                "--measures", *MEASURES]
    binary = os.environ.get("TREC_EVAL")
    baseline_cmd = None
    if binary:
        baseline_cmd = [binary, "-c", *TREC_MEASURES, str(paths["qrels.txt"]), str(paths["run.txt"])]
    ir_measures_cmd = [sys.executable, "-m", "ir_measures", str(paths["qrels.txt"]),
                       str(paths["run.txt"]), " ".join(IR_MEASURES)]
    best = {side: [float("inf")] * 2 for side in ("ours", "baseline", "ir_measures")}
    for _ in range(repeats):
        for side, cmd in (("ours", ours_cmd), ("baseline", baseline_cmd),
                          ("ir_measures", ir_measures_cmd)):
            if cmd is not None:
                best[side] = [min(b, t) for b, t in zip(best[side], _process(cmd, env))]
    lines = sum(1 for _ in paths["run.txt"].open("rb"))
    label = f"harness score vs trec_eval -c, processes, {lines:,}-line run, 10 measures"
    if baseline_cmd is None:
        label += " (set TREC_EVAL to a trec_eval binary for the baseline)"
    base = best["baseline"] if baseline_cmd else [None, None]
    versus = f"harness score vs the ir_measures CLI, processes, {lines:,}-line run, 10 measures"
    return [_row(label + ", wall", best["ours"][0], base[0], "ms (wall)", CLI_TARGET),
            _row(label + ", CPU", best["ours"][1], base[1], "ms (CPU)", CLI_TARGET),
            _row(versus + ", wall", best["ours"][0], best["ir_measures"][0], "ms (wall)",
                 IR_MEASURES_TARGET)]


def run(quick: bool) -> list[dict]:
    queries, docs, repeats = (200, 100, 2) if quick else (1600, 100, 5)
    folder = Path(tempfile.mkdtemp(prefix="bench-files-"))
    try:
        paths = write_inputs(folder, queries, docs)
        judged = write_judged_qrels(folder, queries, docs)
        return (writer_rows(paths, repeats) + reader_rows(paths, repeats)
                + path_rows(paths, judged, repeats) + cli_rows(paths, folder, repeats))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
