"""Every reader of a user's file, fuzzed: a result or a located error, never another exception.

Readers: TREC run and qrels, BEIR qrels TSV, JSONL run and qrels, ``read_jsonl``,
``read_json_object``, metrics.json (``harness.evaluation.results.load_metrics``),
per_query.jsonl (``load_per_query``), the fetch manifest (``ingestion.fetch.read_manifest``)
and the agreement manifest (``harness.evaluation.manifests.load_manifest``).  Inputs are
valid files mutated by hypothesis (a fixed derandomised budget, seconds in all): a value
anywhere in the document replaced by NaN, an infinity, 10^30, a 5000-digit number, deep
nesting, a wrong type; keys removed or added; bytes cut, inserted or flipped.  An allowed
error is a ``ValueError`` (``FormatError`` and ``FetchError`` are ones) whose message names
the file.  A few generated inputs also go through ``python -m harness score`` as a
process: exit 2, a one-line ``error:`` naming the file, no traceback.

The number of cases tried is printed (``pytest -s``) and kept in :data:`TRIED`.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from harness.core import formats
from harness.evaluation.manifests import load_manifest
from harness.evaluation.results import load_metrics, load_per_query
from ingestion.fetch import MANIFEST_NAME, read_manifest

REPO = Path(__file__).resolve().parents[1]
FUZZ = settings(max_examples=120, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
TRIED: dict[str, int] = {}
_DIR = Path(tempfile.mkdtemp(prefix="reader-fuzz-"))

DEEP = "[" * 50000 + "]" * 50000
POISON = ["NaN", "Infinity", "-Infinity", "1e400", "1" + "0" * 30, "7" * 5000, DEEP, "null",
          "true", "-1", "0", "1.5", '""', '"x"', "[]", "{}", '[1, "a", null]', '{"a": {"b": []}}',
          '"' + "é" * 3000 + '"', "2147483648", "9223372036854775808", "-0.0", "1e-320"]


def _metrics_doc() -> dict:
    return {
        "schema_version": 1, "control_name": "toy",
        "corpora": [{"chunks": None, "evidence": "declared", "files": None, "licence": "CC0-1.0",
                     "name": "toy", "sha256": "0" * 64, "tier": "A", "version": None}],
        "index": None,
        "judgements": {"judged_documents": 8, "negative_labels": 1, "queries_in_qrels": 4,
                       "relevant_documents": 6, "run_queries_not_in_qrels": 0},
        "metric_engine": {"gain": "linear", "measures": {"MRR": "recip_rank"},
                          "name": "pytrec_eval_terrier", "semantics": "trec_eval -c",
                          "tie_break": "sorted", "version": "0.5"},
        "relevance_policy": {"binary": False, "gain": "linear", "graded_from": "qrels",
                             "negative_labels": "judged non-relevant", "relevance_high": None,
                             "relevance_low": None},
        "retrieval": {"preserve_order": False, "run_sha256": "1" * 64, "source": "run file"},
        "rows": [{"corpus": "toy", "metrics": {"MRR": 0.75}, "n": 4, "query_class": "all",
                  "queries_dropped_unjudgeable": 0, "queries_unanswered": 1, "tier": "A"}],
    }


def _paths(value, prefix=()):
    """Every path to a value in a JSON document."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


def _set(doc, path, text):
    """``doc`` as JSON text with the value at ``path`` replaced by the JSON text ``text``."""
    marker = "\u0000MARK\u0000"
    doc = copy.deepcopy(doc)
    if not path:
        return text
    target = doc
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = marker
    return json.dumps(doc, indent=2).replace(json.dumps(marker), text)


@st.composite
def mutated(draw, base: dict) -> bytes:
    """``base`` as JSON bytes, mutated."""
    paths = list(_paths(base))
    text = json.dumps(base, indent=2)
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.integers(0, 9))
        if kind <= 5:
            text = _set(base, draw(st.sampled_from(paths)), draw(st.sampled_from(POISON)))
        elif kind == 6:  # a key removed
            path = draw(st.sampled_from([p for p in paths if p and isinstance(p[-1], str)] or [()]))
            doc = copy.deepcopy(base)
            if path:
                target = doc
                for step in path[:-1]:
                    target = target[step]
                del target[path[-1]]
            text = json.dumps(doc)
        elif kind == 7:  # a key added
            doc = copy.deepcopy(base)
            doc[draw(st.sampled_from(["extra", "rows", "kind", ""]))] = json.loads(
                draw(st.sampled_from([p for p in POISON if p not in (DEEP,) and "5000" not in p
                                      and len(p) < 100])))
            text = json.dumps(doc)
    data = text.encode("utf-8")
    if draw(st.integers(0, 4)) == 0:  # bytes cut, inserted or flipped
        at = draw(st.integers(0, len(data)))
        data = draw(st.sampled_from([data[:at], data[:at] + b"\xff" + data[at:],
                                     data[:at] + b"}" + data[at:], data[:at] + b"\n" + data[at + 1:]]))
    return data


def allowed(call, path: Path, name: str):
    """Run ``call``; only a result or a ValueError naming ``path`` may come out."""
    TRIED[name] = TRIED.get(name, 0) + 1
    try:
        return call()
    except ValueError as exc:
        assert str(path) in str(exc), f"{name}: an error that does not name the file: {exc}"
        return None


@FUZZ
@given(mutated(_metrics_doc()))
def test_metrics_json(data):
    path = _DIR / "run" / "metrics.json"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(data)
    allowed(lambda: load_metrics(path), path, "metrics.json")
    allowed(lambda: formats.read_json_object(path), path, "read_json_object")


PER_QUERY_ROW = {"answered": True, "corpus": "toy", "measure": "MRR", "query_class": "all",
                 "query_id": "q1", "tier": "A", "value": 0.5}


@FUZZ
@given(st.lists(mutated(PER_QUERY_ROW), min_size=1, max_size=6))
def test_per_query_jsonl(lines):
    results = _DIR / "pq"
    results.mkdir(exist_ok=True)
    path = results / "per_query.jsonl"
    path.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
    allowed(lambda: load_per_query(results), path, "per_query.jsonl")
    allowed(lambda: list(formats.read_jsonl(path)), path, "read_jsonl")


FETCH_MANIFEST = {"schema": 1, "artefacts": [{"source": "qmsum", "filename": "a.json",
                                               "sha256": "0" * 64, "bytes": 10}]}


@FUZZ
@given(mutated(FETCH_MANIFEST))
def test_fetch_manifest(data):
    dest = _DIR / "fetch"
    dest.mkdir(exist_ok=True)
    path = dest / MANIFEST_NAME
    path.write_bytes(data)
    allowed(lambda: read_manifest(dest), path, "fetch manifest")


AGREEMENT_MANIFEST = {"kind": "agreement_manifest", "measure": "nDCG@10", "corpora": ["a", "b"],
                      "families": [{"name": "fusion", "control": "runs/c",
                                    "arms": [{"name": "rrf", "run": "runs/r", "axis": "k"},
                                             {"name": "typed", "deltas": {"all": {"a": 0.1, "b": 0.2}}}]}]}


@FUZZ
@given(mutated(AGREEMENT_MANIFEST))
def test_agreement_manifest(data):
    path = _DIR / "agreement.json"
    path.write_bytes(data)
    allowed(lambda: load_manifest(path), path, "agreement manifest")


def _run_file(draw_lines) -> str:
    return "".join(line + "\n" for line in draw_lines)


RUN_LINES = st.lists(st.one_of(
    st.builds(lambda q, d, r, s: f"{q} Q0 {d} {r} {s} run",
              st.sampled_from(["q1", "q2", "é"]), st.sampled_from(["d1", "d2", "d3"]),
              st.sampled_from(["1", "2", "x", "1" * 30]),
              st.sampled_from(["0.5", "nan", "1e400", "9" * 25, "0.25"])),
    st.sampled_from(["", "q1 Q0 d1", "\ufeff", "q1\tQ0\td9\t1\t0.5\trun"])), max_size=8)
QRELS_LINES = st.lists(st.one_of(
    st.builds(lambda q, d, r: f"{q} 0 {d} {r}", st.sampled_from(["q1", "q2"]),
              st.sampled_from(["d1", "d2", "d3"]),
              st.sampled_from(["0", "1", "2", "-1", "4294967295", "9223372036854775808", "1.5"])),
    st.sampled_from(["", "q1 0 d1", "query-id\tcorpus-id\tscore"])), max_size=8)


@FUZZ
@given(RUN_LINES, QRELS_LINES)
def test_run_and_qrels_readers(run_lines, qrels_lines):
    run, qrels = _DIR / "run.txt", _DIR / "qrels.txt"
    run.write_text(_run_file(run_lines), encoding="utf-8")
    qrels.write_text(_run_file(qrels_lines), encoding="utf-8")
    allowed(lambda: formats.read_trec_run(run), run, "TREC run")
    allowed(lambda: formats.read_trec_qrels(qrels), qrels, "TREC qrels")
    tsv = _DIR / "qrels.tsv"
    tsv.write_text("query-id\tcorpus-id\tscore\n" + _run_file(
        "\t".join(line.split()[::2][:1] + line.split()[2:]) for line in qrels_lines), encoding="utf-8")
    allowed(lambda: formats.read_beir_qrels(tsv), tsv, "BEIR qrels")


# --------------------------------------------------------------------------- the CLI


CLI_CASES = [
    ("q1 0 d1 1\nq1 0 d2 4294967295\n", "q1 Q0 d1 1 0.5 run\n", "qrels.txt:2: field 'relevance'"),
    ("q1 0 d1 1\n", "q1 Q0 d1 1 0.5 run\nq1 Q0 d2 2 " + "9" * 25 + " run\n", "run.txt:2: field 'score'"),
    ("q1 0 d1 1\n", "q1 Q0 d1 " + "1" * 5000 + " 0.5 run\n", "run.txt:1: field 'rank'"),
    ("q1 0 d1 1\n", '{"query_id": "q1", "doc_id": "d1", "score": ' + "7" * 5000 + "}\n", "run.jsonl:1"),
    ("q1 0 d1 1\n", '{"query_id": "q1", "doc_id": "d1", "score": ' + DEEP + "}\n", "run.jsonl:1"),
    ('{"query_id": "q1", "doc_id": "d1", "relevance": 9223372036854775808}\n', "q1 Q0 d1 1 0.5 run\n",
     "qrels.jsonl:1: field 'relevance'"),
]


@pytest.mark.parametrize("qrels_text, run_text, where", CLI_CASES)
def test_cli_exits_2_naming_the_place(tmp_path, qrels_text, run_text, where):
    qrels = tmp_path / ("qrels.jsonl" if qrels_text.startswith("{") else "qrels.txt")
    run = tmp_path / ("run.jsonl" if run_text.startswith("{") else "run.txt")
    qrels.write_text(qrels_text, encoding="utf-8")
    run.write_text(run_text, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "harness", "score", "--qrels", str(qrels),
                           "--run", str(run), "--out", str(tmp_path / "out"), "--no-warehouse"],
                          capture_output=True, text=True, env=env, timeout=120)
    TRIED["python -m harness score"] = TRIED.get("python -m harness score", 0) + 1
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("error: ") and where in done.stderr, done.stderr
    assert not (tmp_path / "out").exists()


def test_cases_tried():
    """Runs last in this file: prints how many cases each reader was given."""
    print("\nreader fuzz cases tried:", json.dumps(TRIED, sort_keys=True), "total", sum(TRIED.values()))
    assert not TRIED or sum(TRIED.values()) >= 100


@pytest.mark.parametrize("artefacts, field", [
    ([1], "artefacts[0]"), ([{"source": 3, "path": "a", "sha256": "0"}], "artefacts[0].source"),
    ([{"source": "qmsum", "sha256": "0"}], "artefacts[0].path"),
    ([{"source": "qmsum", "path": "a", "sha256": "0", "filename": []}], "artefacts[0].filename"),
])
def test_fetch_verify_refuses_malformed_entries(tmp_path, artefacts, field):
    """``ingestion fetch --verify`` on entries of the wrong shape: exit 2, the field named."""
    (tmp_path / MANIFEST_NAME).write_text(json.dumps({"schema": 1, "artefacts": artefacts}))
    done = subprocess.run([sys.executable, "-m", "ingestion", "fetch", "--corpus", "qmsum",
                           "--dest", str(tmp_path), "--verify"], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert f"field '{field}'" in done.stderr and str(tmp_path / MANIFEST_NAME) in done.stderr
