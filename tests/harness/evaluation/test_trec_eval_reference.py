"""Acceptance: ``python -m harness score`` means equal the official ``trec_eval -c`` on the
tie-normalised run, to 1e-6 (a ready-made binary: to its printed decimals), on seeded qrels
and runs this repository has never stored.

The official binary comes from, in order: ``$TREC_EVAL`` (a binary), ``trec_eval`` on
PATH, a build from trec_eval's C sources found in ``$TREC_EVAL_SRC`` (a directory or a
.tar.gz/.zip) or in ``tools/`` of the shared folder beside the repository, the last such
build cached under the pytest cache, or the NIST 9.0.4 binary that
``tools/trec-eval/fetch.sh`` takes from Maven Central (jtreceval; CI fetches it).  (The
``pytrec_eval_terrier`` sdist does not carry the sources: its build downloads them from
trec_eval's release, which no package registry serves.)  A build raises the *printed*
precision of trec_eval's summaries from 4 to 10 decimals (``%6.4f`` -> ``%.10f`` in its
print routines, nothing else); a binary found ready-made is compared to half its last
printed decimal.  With none of these the tests skip and say why, or fail where
``REQUIRE_TREC_EVAL=1`` (as in CI).

What trec_eval is given: the run re-sorted by ``harness.evaluation.scoring.normalise_ranking`` with
``rank_scores`` (so no tie reaches it), and the qrels minus the queries that hold no
relevant document (the harness drops those; a separate check pins that trec_eval ``-c``
counts each of them as a zero).  Negative labels go to trec_eval as they are.
``MRR@10`` is compared to ``recip_rank`` under ``-M10`` (trec_eval's own cut-off).
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.formats import write_trec_qrels, write_trec_run
from harness.core.measures import MEASURES
from harness.core.records import Qrel, ScoredDoc
from harness.evaluation.ordering import normalise_ranking, rank_scores
from tests.harness.evaluation.scoring_reference import random_doc_id

REPO = Path(__file__).resolve().parents[3]
SHARED_TOOLS = REPO.parent / "shared" / "tools"
FETCHED = REPO / "tools" / "trec-eval" / "bin" / "trec_eval"
ENGINE = "pytrec_eval_terrier"
SEEDS = (101, 202, 303)
#: the measures trec_eval computes (Judged@10 is checked against ir_measures in test_judged)
BY_TREC_EVAL = {name: m for name, m in MEASURES.items() if m.by_trec_eval}
#: every harness measure but MRR@10, which is checked under -M10
MEASURE_ARGS = ["-m", "all_trec", "-m", "ndcg_cut.5,10,20", "-m", "recall.5,10,20,100",
                "-m", "P.5,10", "-m", "success.1,5,10", "-m", "recip_rank", "-m", "map",
                "-m", "ndcg", "-m", "num_q"]


# --------------------------------------------------------------------------- finding trec_eval


def _source_root(path: Path) -> Path | None:
    """The directory holding trec_eval.h and trec_eval.c under ``path``, if any."""
    for header in sorted(path.rglob("trec_eval.h")):
        if (header.parent / "trec_eval.c").is_file():
            return header.parent
    return None


def _unpack(archive: Path, into: Path) -> Path | None:
    into.mkdir(parents=True, exist_ok=True)
    if archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as z:
            z.extractall(into)
    else:
        with tarfile.open(archive) as t:
            t.extractall(into, filter="data")
    return _source_root(into)


def _sources_from(path: Path, work: Path) -> Path | None:
    if path.is_dir():
        return _source_root(path)
    if path.is_file() and path.name.endswith((".tar.gz", ".tgz", ".zip", ".tar")):
        return _unpack(path, work / "unpacked" / path.name)
    return None


def _build(src: Path, dest: Path) -> Path:
    """Compile trec_eval from ``src`` into ``dest``, printing 10 decimals instead of 4."""
    build = dest / "build"
    shutil.rmtree(build, ignore_errors=True)
    shutil.copytree(src, build)
    for c_file in build.glob("*.c"):
        text = c_file.read_text(encoding="latin-1")
        if "%6.4f" in text:
            c_file.write_text(text.replace("%6.4f", "%.10f"), encoding="latin-1")
    sources = sorted(str(p) for p in build.glob("*.c"))
    proc = subprocess.run(
        ["gcc", "-O2", "-w", "-I", str(build), '-DVERSIONID="harness-reference"', "-o",
         str(build / "trec_eval"), *sources, "-lm"],
        capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        pytest.fail(f"building trec_eval from {src} failed:\n{proc.stderr[-3000:]}")
    binary = dest / "trec_eval"
    shutil.copy2(build / "trec_eval", binary)
    shutil.rmtree(build, ignore_errors=True)
    return binary


@pytest.fixture(scope="session")
def trec_eval(pytestconfig, tmp_path_factory) -> tuple[Path, str]:
    """``(binary, where it came from)``."""
    given = os.environ.get("TREC_EVAL")
    if given:
        if not Path(given).is_file():
            pytest.fail(f"TREC_EVAL={given} is not a file")
        return Path(given), "TREC_EVAL"
    on_path = shutil.which("trec_eval")
    if on_path:
        return Path(on_path), "PATH"
    cache = getattr(pytestconfig, "cache", None)  # absent under -p no:cacheprovider
    cache_dir = (Path(cache.mkdir("trec_eval_reference")) if cache is not None
                 else tmp_path_factory.mktemp("trec_eval_reference"))
    candidates = []
    if os.environ.get("TREC_EVAL_SRC"):
        candidates.append(Path(os.environ["TREC_EVAL_SRC"]))
    if SHARED_TOOLS.is_dir():
        candidates += sorted(SHARED_TOOLS.glob("trec_eval*"))
    src = None
    for candidate in candidates:
        src = _sources_from(candidate, cache_dir)
        if src:
            break
    built = cache_dir / "trec_eval"
    if src is None and built.is_file():
        return built, "cached build"
    if src is None and FETCHED.is_file():
        return FETCHED, "tools/trec-eval/fetch.sh"
    if src is None:
        unavailable = pytest.fail if os.environ.get("REQUIRE_TREC_EVAL") == "1" else pytest.skip
        unavailable("official trec_eval unavailable: no TREC_EVAL, no trec_eval on PATH, no "
                    "TREC_EVAL_SRC or shared tools/trec_eval* (the pytrec_eval_terrier sdist "
                    "does not bundle trec_eval's C sources); run tools/trec-eval/fetch.sh, set "
                    "TREC_EVAL to a trec_eval binary or TREC_EVAL_SRC to its source directory "
                    "or archive")
    if shutil.which("gcc") is None:
        pytest.skip(f"trec_eval sources found at {src} but no gcc to build them")
    return _build(src, cache_dir), f"built from {src}"


# --------------------------------------------------------------------------- data and running


def make_case(seed: int):
    """Qrels (graded, negative labels, unretrieved gold, unjudgeable queries) and a run full
    of ties (unanswered queries, queries the qrels do not know)."""
    rng = random.Random(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(120):
        q = f"Q{seed}-{i:03d}"
        ids = list(dict.fromkeys(random_doc_id(rng) for _ in range(rng.randrange(1, 120))))
        pool = ids + [random_doc_id(rng) + "x" for _ in range(4)]
        labels = (-1, 0) if i % 17 == 3 else (-1, 0, 0, 1, 1, 2, 3)
        qrels[q] = {d: rng.choice(labels) for d in rng.sample(pool, min(len(pool), rng.randrange(1, 25)))}
        if i % 13 == 5:
            continue  # unanswered
        values = [0.5, 0.25, 1 / 61 + 1 / 62, 0.125, rng.random()]
        run[q] = {d: rng.choice(values) if rng.random() < 0.6 else round(rng.random(), 3) for d in ids}
    for i in range(5):  # run-only queries: ignored by both sides
        run[f"Z{seed}-{i}"] = {random_doc_id(rng): 1.0}
    return qrels, run


def write_case(tmp: Path, qrels, run):
    judgeable = {q: d for q, d in qrels.items() if any(r > 0 for r in d.values())}
    write_trec_qrels(tmp / "qrels.txt", [Qrel(q, d, r) for q, docs in qrels.items() for d, r in docs.items()])
    write_trec_qrels(tmp / "qrels_judgeable.txt",
                     [Qrel(q, d, r) for q, docs in judgeable.items() for d, r in docs.items()])
    # the raw run, ties and all, in a scrambled file order: what the harness reads
    lines = [f"{q} Q0 {d} {rank} {s!r} raw\n" for q, docs in run.items()
             for rank, (d, s) in enumerate(docs.items(), start=1)]
    random.Random(len(lines)).shuffle(lines)
    (tmp / "run.txt").write_text("".join(lines))
    # the tie-normalised run: what trec_eval gets
    normalised = {}
    for q, docs in run.items():
        scores = rank_scores(normalise_ranking(docs))
        normalised[q] = [ScoredDoc(q, d, s) for d, s in scores.items()]
    write_trec_run(tmp / "run_normalised.txt", normalised, tag="normalised")
    return judgeable


def run_trec_eval(binary: Path, *args: str) -> tuple[dict[str, float], dict[tuple[str, str], float], int]:
    """``(summary, per-query values, decimals printed)`` of ``trec_eval -q args``."""
    proc = subprocess.run([str(binary), "-q", *args], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"trec_eval {' '.join(args)} failed: {proc.stderr}"
    summary, per_query, decimals = {}, {}, 0
    for line in proc.stdout.splitlines():
        parts = line.split()
        if len(parts) != 3 or not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", parts[2]):
            continue
        name, qid, value = parts
        if "." in value:
            decimals = max(decimals, len(value.split(".")[1]))
        if qid == "all":
            summary[name] = float(value)
        else:
            per_query[(qid, name)] = float(value)
    assert summary, f"no summary lines in trec_eval's output:\n{proc.stdout[:2000]}"
    return summary, per_query, decimals


def harness_score(tmp: Path) -> tuple[dict, dict[tuple[str, str], float]]:
    out = tmp / "results"
    code = main(["score", "--qrels", str(tmp / "qrels.txt"), "--run", str(tmp / "run.txt"),
                 "--out", str(out), "--measures", *MEASURES, "--no-warehouse"])
    assert code == 0
    doc = json.loads((out / "metrics.json").read_text())
    (row,) = [r for r in doc["rows"] if r["query_class"] == "all"]
    per_query = {}
    for line in (out / "per_query.jsonl").read_text().splitlines():
        r = json.loads(line)
        per_query[(r["query_id"], r["measure"])] = r["value"]
    return row, per_query


# --------------------------------------------------------------------------- the acceptance check


@pytest.mark.parametrize("seed", SEEDS)
def test_harness_means_equal_official_trec_eval_c(trec_eval, tmp_path, seed, capsys):
    binary, origin = trec_eval
    qrels, run = make_case(seed)
    judgeable = write_case(tmp_path, qrels, run)
    assert len(judgeable) < len(qrels)  # the case holds unjudgeable queries
    row, harness_per_query = harness_score(tmp_path)

    summary, per_query, decimals = run_trec_eval(
        binary, "-c", *MEASURE_ARGS, str(tmp_path / "qrels_judgeable.txt"),
        str(tmp_path / "run_normalised.txt"))
    cut, cut_per_query, _ = run_trec_eval(
        binary, "-c", "-M10", "-m", "recip_rank",
        str(tmp_path / "qrels_judgeable.txt"), str(tmp_path / "run_normalised.txt"))
    tol = max(1e-6, 0.5 * 10.0 ** -decimals + 1e-12)
    with capsys.disabled():
        print(f"\n[trec_eval reference] {origin}: {binary}; {decimals} decimals printed; tolerance {tol:g}")

    assert summary["num_q"] == row["n"] == len(judgeable)
    for name, measure in BY_TREC_EVAL.items():
        expected = cut["recip_rank"] if measure.run_cutoff == 10 else summary[measure.trec_key]
        assert row["metrics"][name] == pytest.approx(expected, abs=tol), name
    # per query, wherever trec_eval printed one
    compared = 0
    for name, measure in BY_TREC_EVAL.items():
        source = cut_per_query if measure.run_cutoff == 10 else per_query
        key = "recip_rank" if measure.run_cutoff == 10 else measure.trec_key
        for q in judgeable:
            if (q, key) in source:
                assert harness_per_query[(q, name)] == pytest.approx(source[(q, key)], abs=tol), (q, name)
                compared += 1
    assert compared >= len(BY_TREC_EVAL) * (len(judgeable) - 15)


def test_engine_and_official_binary_agree_per_query(trec_eval, tmp_path):
    """pytrec_eval (the engine) against the binary on the same files: any disagreement is a
    finding about the engine, reported with its query and measure."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    binary, _ = trec_eval
    qrels, run = make_case(SEEDS[0])
    judgeable = write_case(tmp_path, qrels, run)
    # -c: trec_eval 10 refuses a run whose queries the qrels lack (the run-only and
    # unjudgeable ones) unless told to complete over the qrels' queries
    _, per_query, decimals = run_trec_eval(
        binary, "-c", *MEASURE_ARGS, str(tmp_path / "qrels_judgeable.txt"),
        str(tmp_path / "run_normalised.txt"))
    normalised = {q: rank_scores(normalise_ranking(docs)) for q, docs in run.items()}
    specs = {m.trec_measure for m in BY_TREC_EVAL.values()}
    engine = pytrec_eval.RelevanceEvaluator(judgeable, specs).evaluate(normalised)
    tol = max(1e-6, 0.5 * 10.0 ** -decimals + 1e-12)
    disagreements = [(q, key, value, engine[q][key]) for (q, key), value in per_query.items()
                     if q in engine and key in engine[q] and abs(engine[q][key] - value) > tol]
    assert disagreements == []


def test_trec_eval_c_counts_unjudgeable_queries_as_zeros(trec_eval, tmp_path):
    """Why the harness's mean differs from trec_eval -c on qrels that hold queries with no
    relevant document: trec_eval averages them in as zeros; the harness drops them."""
    binary, _ = trec_eval
    qrels, run = make_case(SEEDS[1])
    judgeable = write_case(tmp_path, qrels, run)
    row, _ = harness_score(tmp_path)
    summary, _, decimals = run_trec_eval(
        binary, "-c", "-m", "ndcg_cut.10", "-m", "num_q", str(tmp_path / "qrels.txt"),
        str(tmp_path / "run_normalised.txt"))
    tol = max(1e-6, 0.5 * 10.0 ** -decimals + 1e-12)
    assert summary["num_q"] == len(qrels)
    assert summary["ndcg_cut_10"] == pytest.approx(row["metrics"]["nDCG@10"] * len(judgeable) / len(qrels),
                                                   abs=tol)


def reads_scores_as_doubles(binary: Path, work: Path) -> bool:
    """Whether ``binary`` orders 0.50000000001 above 0.5 (doubles) or ties them as floats
    and breaks the tie by document id descending (trec_eval before 9.0.8)."""
    work.mkdir()
    (work / "qrels.txt").write_text("q1 0 b 1\n")
    (work / "run.txt").write_text("q1 Q0 a 1 0.50000000001 t\nq1 Q0 b 2 0.5 t\n")
    summary, _, _ = run_trec_eval(binary, "-m", "recip_rank", str(work / "qrels.txt"),
                                  str(work / "run.txt"))
    return summary["recip_rank"] == 0.5


def test_scores_tied_only_in_single_precision_score_as_official_trec_eval(trec_eval, tmp_path):
    """The raw run, not a normalised one: trec_eval 9.0.8 and later read scores as doubles,
    so a list whose scores are distinct doubles has one order there, whatever the ids.  The
    engine keeps C floats, where neighbouring doubles (17-digit dense scores) tie; the
    harness must still agree with the binary per query, and rankings.jsonl must hold the
    double order.  An older binary (9.0.4, as Maven Central's jtreceval ships it) keeps
    floats itself and breaks those ties by id, so it is given the double order as integer
    scores, sorted here by Python, not by the harness."""
    binary, _ = trec_eval
    doubles = reads_scores_as_doubles(binary, tmp_path / "probe")
    rng = random.Random(404)
    run_lines, qrels_lines, expected_order = [], [], {}
    for i in range(60):
        q = f"D{i:02d}"
        ids = [f"{rng.choice('abcxyz')}{rng.getrandbits(40):010x}" for _ in range(120)]
        scores = {}
        for d in ids:
            s = rng.uniform(0.2, 0.9)
            scores[d] = s
        # pairs a few ulps of a double apart: distinct doubles, one single-precision float
        for d1, d2 in zip(ids[:40:2], ids[1:40:2]):
            scores[d2] = scores[d1] + rng.choice([1, 2, 3]) * 2.0 ** -50
        assert len(set(scores.values())) == len(scores)  # no tie as doubles
        expected_order[q] = sorted(scores, key=scores.__getitem__, reverse=True)
        for rank, d in enumerate(expected_order[q], start=1):
            run_lines.append(f"{q} Q0 {d} {rank} {scores[d]!r} dense\n")
        labels = {d: rng.choice([0, 1, 2]) for d in rng.sample(ids[:40], 6) + [ids[0]]}
        labels[ids[1]] = 1  # every query judgeable
        qrels_lines += [f"{q} 0 {d} {rel}\n" for d, rel in labels.items()]
    rng.shuffle(run_lines)
    (tmp_path / "run.txt").write_text("".join(run_lines))
    (tmp_path / "qrels.txt").write_text("".join(qrels_lines))
    (tmp_path / "run_double_order.txt").write_text("".join(
        f"{q} Q0 {d} {rank} {len(order) - rank + 1} dense\n"
        for q, order in expected_order.items() for rank, d in enumerate(order, start=1)))
    row, harness_per_query = harness_score(tmp_path)
    given = "run.txt" if doubles else "run_double_order.txt"
    summary, per_query, decimals = run_trec_eval(
        binary, "-c", *MEASURE_ARGS, str(tmp_path / "qrels.txt"), str(tmp_path / given))
    tol = max(1e-6, 0.5 * 10.0 ** -decimals + 1e-12)
    compared = 0
    for name, measure in BY_TREC_EVAL.items():
        if measure.run_cutoff:
            continue
        assert row["metrics"][name] == pytest.approx(summary[measure.trec_key], abs=tol), name
        for (q, key), value in per_query.items():
            if key == measure.trec_key:
                assert harness_per_query[(q, name)] == pytest.approx(value, abs=tol), (q, name)
                compared += 1
    assert compared >= 60 * (len(BY_TREC_EVAL) - 1)
    ranked: dict[str, list[str]] = {}
    for line in (tmp_path / "results" / "rankings.jsonl").read_text().splitlines():
        r = json.loads(line)
        ranked.setdefault(r["query_id"], []).append(r["doc_id"])
    assert ranked == {q: order[:len(ranked[q])] for q, order in expected_order.items()}
