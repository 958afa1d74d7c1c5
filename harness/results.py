"""The results directory: the claim (metrics.json, metrics.md, per-query files) and the run
record (runinfo.json), written atomically and read back with validation.

Layout of one results directory::

    metrics.json        the whole claim, canonical JSON (byte-identical on unchanged inputs)
    metrics.md          the same table for a reader
    per_query.jsonl     one row per query x measure (every delta can get an interval)
    rankings.jsonl      the scored top-k per query (statistics and certificates read it)
    runinfo.json        durations, latency samples, host: outside the claim

Extra claim files (``calibration.jsonl``, ``answers.md`` ...) are passed in ``extra_files``.
The directory is built beside its destination (``.NAME.staging-PID-TOKEN``) and renamed
into place, so an interrupted run leaves the previous result (or nothing), never half of a
new one.  What a killed writer leaves behind is tidied by the next write
(:func:`recover_stale`).
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import shutil
import secrets
import socket
from pathlib import Path
from typing import Any, Mapping

from harness.canonical import canonical_json, canonical_line, sha256_text
from harness.formats import FormatError
from harness.records import TIERS, most_restrictive_tier

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

METRICS_JSON = "metrics.json"
METRICS_MD = "metrics.md"
PER_QUERY = "per_query.jsonl"
RANKINGS = "rankings.jsonl"
RUNINFO = "runinfo.json"

#: top-level fields every metrics.json carries
REQUIRED_FIELDS = (
    "schema_version", "control_name", "corpora", "index", "retrieval", "metric_engine",
    "relevance_policy", "rows",
)
CORPUS_FIELDS = ("name", "version", "licence", "tier", "sha256", "files", "chunks")
ROW_FIELDS = ("corpus", "tier", "query_class", "n", "metrics", "queries_unanswered",
              "queries_dropped_unjudgeable")
PER_QUERY_FIELDS = ("corpus", "tier", "query_class", "query_id", "measure", "value")


def run_id(metrics: Mapping) -> str:
    """A run's id: the sha256 of its canonical metrics.json."""
    return sha256_text(canonical_json(metrics))


def host_info() -> dict:
    return {
        "hostname": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
    }


def _jsonl_text(rows) -> str:
    return "".join(canonical_line(r) + "\n" for r in rows)


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, owned by someone else
        return True
    return True


def _leftovers(out: Path, kind: str) -> list[tuple[Path, int]]:
    """``.NAME.{kind}-PID-...`` directories beside ``out``, with their writer's pid."""
    prefix = f".{out.name}.{kind}-"
    found = []
    for path in sorted(out.parent.iterdir()):
        if path.name.startswith(prefix) and path.is_dir():
            pid = path.name[len(prefix):].split("-", 1)[0]
            if pid.isdigit():
                found.append((path, int(pid)))
    return found


def recover_stale(out_dir) -> None:
    """Tidy what a killed writer left beside ``out_dir``.

    A staging directory of a dead process is removed.  A ``.old`` directory of a dead
    process is the previous result, moved aside just before the new one was renamed in:
    if the new one never arrived it is put back, otherwise it is removed.  Directories of
    live writers are left alone.
    """
    out = Path(out_dir)
    for path, pid in _leftovers(out, "staging"):
        if not _pid_alive(pid):
            log.info("removing stale staging directory %s", path)
            shutil.rmtree(path, ignore_errors=True)
    for path, pid in _leftovers(out, "old"):
        if _pid_alive(pid):
            continue
        if not out.exists():
            log.warning("restoring %s from %s (its writer died mid-swap)", out, path)
            os.replace(path, out)
        else:
            shutil.rmtree(path, ignore_errors=True)


def write_directory(out_dir, files: Mapping[str, str],
                    runinfo: Mapping[str, Any] | None = None) -> Path:
    """Write ``files`` (plain name -> text) and ``runinfo.json`` as one directory, atomically.

    Everything is written into a staging directory beside ``out_dir``, which replaces
    ``out_dir`` by rename: an exception (or Ctrl-C) at any point leaves the previous
    directory as it was; leftovers of a killed writer are tidied by :func:`recover_stale`.
    """
    out = Path(out_dir)
    texts = {}
    for name, text in files.items():
        if name == RUNINFO or Path(name).name != name or name.startswith("."):
            raise ValueError(f"results file name {name!r} is reserved or not a plain name")
        texts[name] = text
    info = dict(runinfo or {})
    info.setdefault("host", host_info())
    texts[RUNINFO] = json.dumps(info, indent=2, sort_keys=True, default=str) + "\n"

    out.parent.mkdir(parents=True, exist_ok=True)
    recover_stale(out)
    staging = _fresh(out, "staging")
    staging.mkdir()
    try:
        for name, text in texts.items():
            (staging / name).write_text(text, encoding="utf-8", newline="")
        old = None
        if out.exists():
            old = _fresh(out, "old")
            os.replace(out, old)
        try:
            os.replace(staging, out)
        except BaseException:
            if old is not None and not out.exists():
                os.replace(old, out)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out


def write_results(
    out_dir,
    metrics: Mapping[str, Any],
    *,
    metrics_md: str,
    per_query: list[Mapping] | None = None,
    rankings: list[Mapping] | None = None,
    runinfo: Mapping[str, Any] | None = None,
    extra_files: Mapping[str, str] | None = None,
) -> Path:
    """Validate ``metrics`` and write the whole results directory atomically
    (:func:`write_directory`); returns its path.  Every file is rendered before anything
    is written."""
    validate_metrics(metrics, source=str(Path(out_dir) / METRICS_JSON))
    files = {METRICS_JSON: canonical_json(dict(metrics)), METRICS_MD: metrics_md}
    if per_query is not None:
        files[PER_QUERY] = _jsonl_text(per_query)
    if rankings is not None:
        files[RANKINGS] = _jsonl_text(rankings)
    for name, text in (extra_files or {}).items():
        if name in files:
            raise ValueError(f"extra results file name {name!r} is reserved or not a plain name")
        files[name] = text
    info = dict(runinfo or {})
    info["run_id"] = run_id(metrics)
    return write_directory(out_dir, files, info)


def _fresh(out: Path, kind: str) -> Path:
    """A new sibling name ``.NAME.{kind}-PID-TOKEN`` (pid first: see recover_stale)."""
    return out.parent / f".{out.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"


# --------------------------------------------------------------------------- validation


def _fail(source, field, message):
    raise FormatError(source, None, field, message)


def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def index_tier(doc: Mapping) -> str | None:
    """The tier of the run's shared index (``index.tier``), or None when it records none.

    Every corpus of a bench run is indexed together: the others' documents compete as
    distractors and shape the collection statistics (BM25's IDF), so each number the run
    reports is as restrictive as the most restrictive indexed corpus.
    """
    index = doc.get("index")
    if isinstance(index, Mapping) and index.get("tier") is not None:
        return index["tier"]
    return None


def effective_tiers(doc: Mapping) -> dict[str, str]:
    """Corpus name -> the tier of this run's numbers on it: the corpus's own (licence) tier,
    made as restrictive as :func:`index_tier` when the run records a shared index."""
    shared = index_tier(doc)
    out = {}
    for corpus in doc["corpora"]:
        own = corpus["tier"]
        out[corpus["name"]] = own if shared is None else most_restrictive_tier([own, shared])
    return out


def _check_licence(source, i: int, corpus: Mapping) -> None:
    """Tier A only for a licence on the publishable list (``ingestion.registry``)."""
    from ingestion.registry import PUBLISHABLE_LICENCES

    if corpus["tier"] == "A" and corpus["licence"] not in PUBLISHABLE_LICENCES:
        _fail(source, f"corpora[{i}].tier",
              f"tier A needs a publishable licence, but corpus {corpus['name']!r} has licence "
              f"{corpus['licence']!r}; publishable: {sorted(PUBLISHABLE_LICENCES)} "
              "(doubt fails closed: tier B)")


def _check_index(source, doc: Mapping, tiers: Mapping[str, str]) -> None:
    """``index.corpora`` names every corpus of the run and ``index.tier`` is their most
    restrictive tier (both or neither)."""
    index = doc["index"]
    if not isinstance(index, Mapping) or ("corpora" not in index and "tier" not in index):
        return
    for name in ("corpora", "tier"):
        if index.get(name) is None:
            _fail(source, f"index.{name}", "missing: index.corpora and index.tier go together")
    names = index["corpora"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) \
            or names != sorted(set(names)):
        _fail(source, "index.corpora", f"must be a sorted list of corpus names, got {names!r}")
    if names != sorted(tiers):
        _fail(source, "index.corpora",
              f"{names} must name every corpus of the run {sorted(tiers)}: they share one index")
    expected = most_restrictive_tier(tiers[n] for n in names)
    if index["tier"] != expected:
        _fail(source, "index.tier",
              f"tier {index['tier']!r} is not {expected}, the most restrictive tier of the "
              f"indexed corpora {names}")


def validate_metrics(doc: Mapping, source: str = METRICS_JSON) -> None:
    """Refuse a metrics.json that is incomplete or inconsistent, naming the field.

    Checks: required fields, schema version, every corpus's tier is A/B/C and tier A only
    with a publishable licence, every row's fields, finite metric values, and each row's
    tier: the most restrictive of its corpora's tiers (a pooled row ``a+b`` takes a's and
    b's) and of the shared index's tier when ``index.tier`` is recorded
    (:func:`effective_tiers`; ``index.corpora`` must then name every corpus of the run).
    """
    if not isinstance(doc, Mapping):
        _fail(source, None, "metrics.json must be a JSON object")
    for name in REQUIRED_FIELDS:
        if name not in doc:
            _fail(source, name, "missing")
    if doc["schema_version"] != SCHEMA_VERSION:
        _fail(source, "schema_version",
              f"unsupported schema version {doc['schema_version']!r}; expected {SCHEMA_VERSION}")
    if not isinstance(doc["corpora"], list) or not doc["corpora"]:
        _fail(source, "corpora", "must be a non-empty list")
    tiers: dict[str, str] = {}
    for i, corpus in enumerate(doc["corpora"]):
        if not isinstance(corpus, Mapping):
            _fail(source, f"corpora[{i}]", "must be an object")
        for name in CORPUS_FIELDS:
            if name not in corpus:
                _fail(source, f"corpora[{i}].{name}", "missing")
        if corpus["tier"] not in TIERS:
            _fail(source, f"corpora[{i}].tier",
                  f"unknown tier {corpus['tier']!r}; expected one of {sorted(TIERS)}")
        if not isinstance(corpus["name"], str) or not corpus["name"] or "+" in corpus["name"]:
            _fail(source, f"corpora[{i}].name",
                  f"must be a non-empty string without '+' (it joins pooled names), got {corpus['name']!r}")
        if corpus["name"] in tiers:
            _fail(source, f"corpora[{i}].name", f"corpus {corpus['name']!r} listed twice")
        _check_licence(source, i, corpus)
        tiers[corpus["name"]] = corpus["tier"]
    _check_index(source, doc, tiers)
    shared = index_tier(doc)
    engine = doc["metric_engine"]
    if not isinstance(engine, Mapping) or not engine.get("name") or not engine.get("version"):
        _fail(source, "metric_engine", "must name the engine and its version")
    if not isinstance(doc["rows"], list) or not doc["rows"]:
        _fail(source, "rows", "must be a non-empty list")
    for i, row in enumerate(doc["rows"]):
        if not isinstance(row, Mapping):
            _fail(source, f"rows[{i}]", "must be an object")
        for name in ROW_FIELDS:
            if name not in row:
                _fail(source, f"rows[{i}].{name}", "missing")
        if row["tier"] not in TIERS:
            _fail(source, f"rows[{i}].tier",
                  f"unknown tier {row['tier']!r}; expected one of {sorted(TIERS)}")
        names = str(row["corpus"]).split("+")
        for name in names:
            if name not in tiers:
                _fail(source, f"rows[{i}].corpus", f"corpus {name!r} is not listed in corpora")
        expected = most_restrictive_tier([tiers[n] for n in names]
                                         + ([shared] if shared is not None else []))
        if row["tier"] != expected:
            what = "pooled corpora" if len(names) > 1 else "corpus"
            index_note = (f" and of the shared index (index.tier {shared})"
                          if shared is not None else "")
            _fail(source, f"rows[{i}].tier",
                  f"tier {row['tier']!r} does not match {what} {row['corpus']!r}: expected "
                  f"{expected}, the most restrictive tier of {sorted(set(names))}{index_note}")
        if not isinstance(row["metrics"], Mapping) or not row["metrics"]:
            _fail(source, f"rows[{i}].metrics", "must be a non-empty object")
        for measure, value in row["metrics"].items():
            if not _finite(value):
                _fail(source, f"rows[{i}].metrics.{measure}", f"not a finite number: {value!r}")
        for name in ("n", "queries_unanswered", "queries_dropped_unjudgeable"):
            if isinstance(row[name], bool) or not isinstance(row[name], int) or row[name] < 0:
                _fail(source, f"rows[{i}].{name}", f"must be a non-negative integer, got {row[name]!r}")
        if row["queries_unanswered"] > row["n"]:
            _fail(source, f"rows[{i}].queries_unanswered",
                  f"{row['queries_unanswered']} unanswered of only {row['n']} scored queries")


def load_metrics(path) -> dict:
    """Read and validate a metrics.json (a file or its results directory)."""
    from harness.formats import read_json_object

    path = Path(path)
    if path.is_dir():
        path = path / METRICS_JSON
    doc = read_json_object(path)
    validate_metrics(doc, source=str(path))
    return doc


def load_per_query(results_dir) -> list[dict]:
    """Per-query rows of a results directory, validated line by line."""
    from harness.formats import read_jsonl

    path = Path(results_dir) / PER_QUERY
    rows = []
    for line, obj in read_jsonl(path):
        for name in PER_QUERY_FIELDS:
            if name not in obj:
                raise FormatError(path, line, name, "missing")
        if not _finite(obj["value"]):
            raise FormatError(path, line, "value", f"not a finite number: {obj['value']!r}")
        rows.append(obj)
    return rows


def load_jsonl_rows(results_dir, name: str) -> list[dict]:
    from harness.formats import read_jsonl

    return [obj for _, obj in read_jsonl(Path(results_dir) / name)]
