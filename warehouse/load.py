"""Reading one results directory into checked, insert-ready Arrow tables (no database).

The harness's own validators come first (:func:`harness.evaluation.results.load_metrics`,
:func:`~harness.evaluation.results.load_per_query`); the checks here are the ones that matter only
once runs sit side by side in one store: per-query and ranking rows must agree with
metrics.json about corpus and tier, name measures the claim reports, not repeat a key, and
average to the claim; runinfo.json must belong to this metrics.json.  Everything is read
and checked before the warehouse is touched, so a refused directory writes nothing.
"""

from __future__ import annotations

import json
import logging
import math
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from harness.core.canonical import canonical_json, canonical_line, sha256_file, sha256_text
from harness.core.formats import FormatError, read_jsonl
from harness.core.tiers import TIERS, most_restrictive_tier
from harness.claims.metrics import ALL
from harness.claims.metrics import (METRICS_JSON, PER_QUERY, RANKINGS, RUNINFO, effective_tiers, index_tier, run_id)
from harness.evaluation.results import load_jsonl_rows, load_metrics, load_per_query
from warehouse import documents
from warehouse.errors import IngestRefused

log = logging.getLogger(__name__)

#: per-query means must reproduce the claim to this tolerance (files round to 1e-10)
MEAN_TOLERANCE = 1e-6
LATENCY_FIELD = "retrieval_latency_ms"
REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class PreparedRun:
    """A checked results directory, ready to be written in one transaction."""

    results_dir: Path
    run_id: str
    metrics: dict
    run_row: dict
    #: table name -> pyarrow Table whose columns are that table's
    tables: dict[str, Any]
    #: (handler, file name, parsed content) for each extra file a handler stores
    extras: list[tuple[Any, str, Any]]
    #: one dict per file of the directory: name, sha256, bytes, stored_by
    files: list[dict]
    unhandled: list[str] = field(default_factory=list)

    @property
    def control_name(self) -> str:
        return self.metrics["control_name"]


def refuse(path, field_name: str | None, message: str, line: int | None = None):
    where = str(path) if line is None else f"{path}:{line}"
    what = f"field '{field_name}': " if field_name else ""
    raise IngestRefused(f"{where}: {what}{message}", path=path, line=line, field=field_name)


def _refused(exc: FormatError) -> IngestRefused:
    return IngestRefused(str(exc), path=exc.path, line=exc.line, field=exc.field)


def _text(value) -> str | None:
    """A column value: strings stay, None stays NULL, anything else as canonical JSON."""
    if value is None or isinstance(value, str):
        return value
    return canonical_line(value)


def _int_or_none(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _nth_record_line(path: Path, index: int) -> int | None:
    """1-based line number of the ``index``-th non-blank line (for error messages)."""
    seen = -1
    with path.open("r", encoding="utf-8") as handle:
        for number, raw in enumerate(handle, start=1):
            if raw.strip():
                seen += 1
                if seen == index:
                    return number
    return None


def _read_json(path: Path, strict: bool = True):
    """A JSON file; ``strict`` also refuses NaN and infinities (not JSON, never a value)."""
    def no_constant(name):
        raise ValueError(f"{name} is not a number JSON allows")

    try:
        return json.loads(path.read_text(encoding="utf-8"),
                          parse_constant=no_constant if strict else None)
    except json.JSONDecodeError as exc:
        refuse(path, None, f"not valid JSON: {exc.msg}", exc.lineno)
    except ValueError as exc:
        refuse(path, None, str(exc))


def code_revision() -> str | None:
    """``git rev-parse HEAD`` of the checkout this code runs from (``+dirty`` when tracked
    files differ from it), or None when that is not a git checkout or git is absent."""
    try:
        head = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"],
                              capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(REPO_ROOT), "diff", "--quiet", "HEAD", "--"],
                               capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("no code revision: %s", exc)
        return None
    return head.stdout.strip() + ("+dirty" if dirty.returncode == 1 else "")


# --------------------------------------------------------------------------- metrics.json


def _check_metrics(metrics: Mapping, path: Path) -> None:
    """Checks beyond harness.evaluation.results.validate_metrics that a shared store needs."""
    if not isinstance(metrics["control_name"], str) or not metrics["control_name"]:
        refuse(path, "control_name", "must be a non-empty string")
    if not isinstance(metrics["retrieval"], Mapping):
        refuse(path, "retrieval", "must be an object")
    if metrics["index"] is not None and not isinstance(metrics["index"], Mapping):
        refuse(path, "index", "must be an object or null")
    for i, corpus in enumerate(metrics["corpora"]):
        name = corpus["name"]
        if not isinstance(name, str) or not name or "+" in name:
            refuse(path, f"corpora[{i}].name",
                   f"must be a non-empty string without '+' (it joins pooled names), got {name!r}")
    seen: dict[tuple, int] = {}
    for i, row in enumerate(metrics["rows"]):
        cls = row["query_class"]
        if not isinstance(cls, str) or not cls:
            refuse(path, f"rows[{i}].query_class", f"must be a non-empty string, got {cls!r}")
        key = (row["corpus"], cls)
        if key in seen:
            refuse(path, f"rows[{i}]", f"corpus {key[0]!r} class {cls!r} repeats rows[{seen[key]}]")
        seen[key] = i


def _created_at(runinfo: Mapping, metrics_path: Path) -> datetime:
    for name in ("created_at", "finished_at", "started_at"):
        value = runinfo.get(name)
        if isinstance(value, str):
            try:
                stamp = datetime.fromisoformat(value)
            except ValueError:
                continue
            if stamp.tzinfo is not None:
                stamp = stamp.astimezone(timezone.utc).replace(tzinfo=None)
            return stamp
    mtime = metrics_path.stat().st_mtime
    return datetime.fromtimestamp(mtime, timezone.utc).replace(tzinfo=None)


def _run_row(metrics: Mapping, rid: str, runinfo: Mapping, results_dir: Path) -> dict:
    retrieval = metrics["retrieval"]
    index = metrics["index"] or {}
    engine = metrics["metric_engine"]
    tiers = [c["tier"] for c in metrics["corpora"]]
    revision = metrics.get("code_revision")
    shared = index_tier(metrics)
    return {
        "run_id": rid,
        "control_name": metrics["control_name"],
        "corpus": "+".join(sorted(c["name"] for c in metrics["corpora"])),
        "tier": most_restrictive_tier(tiers + ([shared] if shared is not None else [])),
        "created_at": _created_at(runinfo, results_dir / METRICS_JSON),
        "backend": _text(retrieval.get("backend")),
        "mode": _text(retrieval.get("mode")),
        "stage": _text(retrieval.get("stage")),
        "scope": _text(retrieval.get("scope")),
        "granularity": _text(retrieval.get("granularity")),
        "fusion": None if retrieval.get("fusion") is None else canonical_line(retrieval["fusion"]),
        "retrieval": canonical_line(retrieval),
        "embedding_models": (None if index.get("embedding_models") is None
                             else canonical_line(index["embedding_models"])),
        "embedding_verdict": _text(index.get("embedding_verdict")),
        "embedding_dimension": _int_or_none(index.get("embedding_dimension")),
        "configured_embedding_model": _text(index.get("configured_embedding_model")),
        "index_info": None if metrics["index"] is None else canonical_line(metrics["index"]),
        "metric_engine": str(engine["name"]),
        "metric_engine_version": str(engine["version"]),
        "metric_engine_info": canonical_line(engine),
        "relevance_policy": canonical_line(metrics["relevance_policy"]),
        "code_revision": revision if isinstance(revision, str) and revision else code_revision(),
        "schema_version": metrics["schema_version"],
        "source_dir": str(results_dir.resolve()),
        "metrics_json": canonical_json(metrics),
    }


# --------------------------------------------------------------------------- row files


def _require_types(col: list, allowed: tuple, path: Path, name: str, what: str) -> None:
    kinds = set(map(type, col))
    if kinds <= set(allowed):
        return
    for i, value in enumerate(col):
        if type(value) not in allowed:
            refuse(path, name, f"expected {what}, got {value!r}", _nth_record_line(path, i))


def _require_fields(rows: list[dict], names, path: Path) -> None:
    for name in names:
        for i, row in enumerate(rows):
            if name not in row:
                refuse(path, name, "missing", _nth_record_line(path, i))


def _first_duplicate(table, keys: tuple[str, ...]):
    """Index of the first row repeating an earlier row's ``keys``, else None."""
    import duckdb
    import pyarrow as pa

    indexed = table.select(list(keys)).append_column(
        "i", pa.array(range(len(table)), pa.int64()))
    con = duckdb.connect()
    try:
        con.register("t", indexed)
        cols = ", ".join(keys)
        row = con.execute(
            f"SELECT min(i) FROM (SELECT i, row_number() OVER (PARTITION BY {cols} ORDER BY i) "
            "AS k FROM t) WHERE k > 1").fetchone()
    finally:
        con.close()
    return None if row is None or row[0] is None else int(row[0])


def _per_query_arrow_schema():
    import pyarrow as pa

    return pa.schema([("corpus", pa.string()), ("tier", pa.string()),
                      ("query_class", pa.string()), ("query_id", pa.string()),
                      ("measure", pa.string()), ("value", pa.float64()),
                      ("answered", pa.bool_())])


def _fast_per_query(path: Path):
    """per_query.jsonl parsed by Arrow's JSON reader, or None whenever the file might hold
    anything :func:`harness.evaluation.results.load_per_query` would refuse or read differently.

    Accepted only if: every line is one JSON object whose fields have the expected types;
    no required field is null or absent (a null ``query_class`` is ambiguous with an absent
    one, so it also sends the file down the exact path); every value is finite; and there
    are exactly as many rows as lines.  Otherwise the exact path decides and words the error.
    """
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    data = path.read_bytes()
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    options = pj.ParseOptions(explicit_schema=_per_query_arrow_schema(),
                              unexpected_field_behavior="ignore")
    try:
        table = pj.read_json(pa.BufferReader(data), parse_options=options)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        log.debug("%s: exact per-query path (%s)", path, exc)
        return None
    if table.num_rows != lines or table.num_rows == 0:
        return None
    for name in ("corpus", "tier", "query_class", "query_id", "measure", "value"):
        if table.column(name).null_count:
            return None
    if not pc.all(pc.is_finite(table.column("value"))).as_py():
        return None
    return table


def _exact_per_query(results_dir: Path, path: Path):
    """The harness's validator, line by line, then the column types it leaves open."""
    import pyarrow as pa

    try:
        rows = load_per_query(results_dir)
    except FormatError as exc:
        raise _refused(exc) from None
    columns = {}
    for name, allowed, what in (("corpus", (str,), "a corpus name"),
                                ("tier", (str,), "a tier"),
                                ("query_class", (str, type(None)), "a class name or null"),
                                ("query_id", (str,), "a string"),
                                ("measure", (str,), "a measure name")):
        columns[name] = [r[name] for r in rows]
        _require_types(columns[name], allowed, path, name, what)
    columns["value"] = [float(r["value"]) for r in rows]
    columns["answered"] = [r.get("answered") for r in rows]
    _require_types(columns["answered"], (bool, type(None)), path, "answered",
                   "true, false or null")
    return pa.table(columns, schema=_per_query_arrow_schema())


def _per_query_table(results_dir: Path, metrics: Mapping):
    """per_query.jsonl as an Arrow table, checked against metrics.json."""
    path = results_dir / PER_QUERY
    if not path.is_file():
        refuse(path, None, "missing: every run stores its per-query values")
    table = _fast_per_query(path)
    if table is None:
        table = _exact_per_query(results_dir, path)
    _check_per_query(table, metrics, path)
    return table


def _check_per_query(table, metrics: Mapping, path: Path) -> None:
    """Corpus and tier as metrics.json declares them, measures it reports, no repeated
    (corpus, query_id, measure), non-empty ids; then :func:`_check_against_claim`."""
    import duckdb
    import pyarrow as pa

    tiers = effective_tiers(metrics)
    reported = sorted({m for row in metrics["rows"] for m in row["metrics"]})
    indexed = table.append_column("i", pa.array(range(len(table)), pa.int64()))
    con = duckdb.connect()
    try:
        con.register("t", indexed)
        con.register("declared", pa.table({"name": list(tiers), "tier": list(tiers.values())}))

        def first(where: str, params=()):
            found = con.execute(f"SELECT min(i) FROM t WHERE {where}", list(params)).fetchone()
            return None if found[0] is None else int(found[0])

        def at(i):
            return dict(zip(table.column_names, (table.column(c)[i].as_py()
                                                 for c in table.column_names)))

        i = first("corpus NOT IN (SELECT name FROM declared)")
        if i is not None:
            refuse(path, "corpus", f"corpus {at(i)['corpus']!r} is not listed in metrics.json "
                   f"corpora {sorted(tiers)}", _nth_record_line(path, i))
        i = first("tier <> (SELECT d.tier FROM declared AS d WHERE d.name = t.corpus)")
        if i is not None:
            row = at(i)
            refuse(path, "tier", f"tier {row['tier']!r} disagrees with metrics.json, where "
                   f"corpus {row['corpus']!r} is tier {tiers[row['corpus']]}"
                   + _index_note(metrics), _nth_record_line(path, i))
        i = first("NOT list_contains(?::VARCHAR[], measure)", [reported])
        if i is not None:
            refuse(path, "measure", f"measure {at(i)['measure']!r} is not reported in "
                   f"metrics.json rows {reported}", _nth_record_line(path, i))
        i = first("query_id = ''")
        if i is not None:
            refuse(path, "query_id", "empty", _nth_record_line(path, i))
        i = first("i IN (SELECT i FROM (SELECT i, row_number() OVER "
                  "(PARTITION BY corpus, query_id, measure ORDER BY i) AS k FROM t) WHERE k > 1)")
        if i is not None:
            row = at(i)
            refuse(path, "query_id", f"query {row['query_id']!r} of corpus {row['corpus']!r} "
                   f"has two {row['measure']!r} values", _nth_record_line(path, i))
        found = {(c, m): (n, mean) for c, m, n, mean in con.execute(
            "SELECT corpus, measure, count(DISTINCT query_id), avg(value) FROM t GROUP BY ALL"
        ).fetchall()}
    finally:
        con.close()
    _check_against_claim(found, metrics, path)


def _index_note(metrics: Mapping) -> str:
    shared = index_tier(metrics)
    return "" if shared is None else (f" (its own tier made as restrictive as the shared "
                                      f"index, index.tier {shared})")


def _check_against_claim(found: Mapping, metrics: Mapping, path: Path) -> None:
    """Each corpus's ``all`` row: its n queries, and its means, come from these rows.

    ``found[(corpus, measure)] = (distinct queries, mean value)`` over per_query.jsonl.
    """
    for i, row in enumerate(metrics["rows"]):
        if row["query_class"] != ALL or "+" in row["corpus"]:
            continue
        for measure, claimed in sorted(row["metrics"].items()):
            n, mean = found.get((row["corpus"], measure), (0, None))
            if n == row["n"] == 0:
                continue
            if n != row["n"]:
                refuse(path, "query_id",
                       f"corpus {row['corpus']!r} has {n} per-query {measure!r} values, but "
                       f"metrics.json rows[{i}] (class all) says n={row['n']}")
            if not math.isclose(mean, claimed, rel_tol=0.0, abs_tol=MEAN_TOLERANCE):
                refuse(path, "value",
                       f"corpus {row['corpus']!r} {measure!r} per-query values average "
                       f"{mean:.10f}, but metrics.json rows[{i}] claims {claimed!r}")


def _rankings_table(results_dir: Path, metrics: Mapping):
    import pyarrow as pa

    path = results_dir / RANKINGS
    if not path.is_file():
        return None
    try:
        rows = load_jsonl_rows(results_dir, RANKINGS)
    except FormatError as exc:
        raise _refused(exc) from None
    tiers = effective_tiers(metrics)
    _require_fields(rows, ("query_id", "rank", "doc_id", "score"), path)
    if len(tiers) == 1:
        only = next(iter(tiers))
        corpus = [r.get("corpus", only) for r in rows]
    else:
        _require_fields(rows, ("corpus",), path)
        corpus = [r["corpus"] for r in rows]
    _require_types(corpus, (str,), path, "corpus", "a corpus name")
    unknown = set(corpus) - set(tiers)
    if unknown:
        i = next(i for i, c in enumerate(corpus) if c in unknown)
        refuse(path, "corpus", f"corpus {corpus[i]!r} is not listed in metrics.json corpora",
               _nth_record_line(path, i))
    query_id = [r["query_id"] for r in rows]
    _require_types(query_id, (str,), path, "query_id", "a string")
    doc_id = [r["doc_id"] for r in rows]
    _require_types(doc_id, (str,), path, "doc_id", "a string")
    rank = [r["rank"] for r in rows]
    _require_types(rank, (int,), path, "rank", "an integer")
    if rank and min(rank) < 1:
        i = next(i for i, k in enumerate(rank) if k < 1)
        refuse(path, "rank", f"ranks start at 1, got {rank[i]}", _nth_record_line(path, i))
    score = [r["score"] for r in rows]
    _require_types(score, (float, int), path, "score", "a number")
    for i, value in enumerate(score):
        if not math.isfinite(value):
            refuse(path, "score", f"not a finite number: {value!r}", _nth_record_line(path, i))
    table = pa.table({
        "corpus": pa.array(corpus, pa.string()),
        "tier": pa.array([tiers[c] for c in corpus], pa.string()),
        "query_id": pa.array(query_id, pa.string()),
        "rank": pa.array(rank, pa.int32()),
        "doc_id": pa.array(doc_id, pa.string()),
        "score": pa.array([float(s) for s in score], pa.float64()),
    })
    dup = _first_duplicate(table, ("corpus", "query_id", "rank"))
    if dup is not None:
        refuse(path, "rank", f"query {query_id[dup]!r} has two documents at rank {rank[dup]}",
               _nth_record_line(path, dup))
    return table


def _latency_row(runinfo: Mapping, path: Path, run_row: Mapping) -> dict | None:
    block = runinfo.get(LATENCY_FIELD)
    if block is None:
        return None
    if not isinstance(block, Mapping):
        refuse(path, LATENCY_FIELD, "must be an object")
    samples = block.get("samples")
    if not isinstance(samples, list):
        refuse(path, f"{LATENCY_FIELD}.samples", "must be a list of milliseconds")
    if not samples:
        log.info("%s: no latency samples recorded; no latency stored", path)
        return None
    if "n" in block and block["n"] != len(samples):
        refuse(path, f"{LATENCY_FIELD}.n", f"says {block['n']!r} samples, the list holds "
               f"{len(samples)}")
    for i, value in enumerate(samples):
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or not math.isfinite(value) or value < 0):
            refuse(path, f"{LATENCY_FIELD}.samples[{i}]",
                   f"not a non-negative finite number: {value!r}")
    concurrency = block.get("concurrency")
    if concurrency is not None and (_int_or_none(concurrency) is None or concurrency < 1):
        refuse(path, f"{LATENCY_FIELD}.concurrency",
               f"must be a positive integer, got {concurrency!r}")
    reported = {k: None if isinstance(v, float) and not math.isfinite(v) else v
                for k, v in block.items() if k != "samples"}
    return {"corpus": run_row["corpus"], "tier": run_row["tier"],
            "samples": [float(v) for v in samples], "concurrency": concurrency,
            "reported": json.dumps(reported, sort_keys=True, default=str)}


# --------------------------------------------------------------------------- the directory


def _parse_extra(path: Path):
    if path.suffix == ".json":
        return _read_json(path)
    if path.suffix == ".jsonl":
        try:
            return [obj for _, obj in read_jsonl(path)]
        except FormatError as exc:
            raise _refused(exc) from None
    return path.read_text(encoding="utf-8")


def _with_run_id(table, rid: str):
    import pyarrow as pa

    return table.add_column(0, "run_id", pa.array([rid] * len(table), pa.string()))


def load_results(results_dir) -> PreparedRun:
    """Read and check a results directory; raises :class:`IngestRefused` naming file and
    field.  Nothing here touches the warehouse."""
    import pyarrow as pa

    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        refuse(results_dir, None, "not a results directory")
    try:
        metrics = load_metrics(results_dir)
    except FormatError as exc:
        raise _refused(exc) from None
    metrics_path = results_dir / METRICS_JSON
    _check_metrics(metrics, metrics_path)
    rid = run_id(metrics)

    runinfo: dict = {}
    runinfo_path = results_dir / RUNINFO
    if runinfo_path.is_file():
        # outside the claim: only the fields read below are checked (NaN elsewhere is let be)
        runinfo = _read_json(runinfo_path, strict=False)
        if not isinstance(runinfo, dict):
            refuse(runinfo_path, None, "must be a JSON object")
        recorded = runinfo.get("run_id")
        if recorded is not None and recorded != rid:
            refuse(runinfo_path, "run_id",
                   f"{recorded!r} is not the sha256 of this metrics.json ({rid}): the claim "
                   "was changed after it was written")

    run_row = _run_row(metrics, rid, runinfo, results_dir)
    tables = {}
    tables["corpora"] = pa.Table.from_pylist([{
        "run_id": rid, "name": c["name"], "version": _text(c["version"]),
        "licence": _text(c["licence"]), "tier": c["tier"], "evidence": _text(c.get("evidence")),
        "sha256": _text(c["sha256"]), "files": _int_or_none(c["files"]),
        "chunks": _int_or_none(c["chunks"]), "declared": canonical_line(c),
    } for c in metrics["corpora"]], schema=pa.schema([
        ("run_id", pa.string()), ("name", pa.string()), ("version", pa.string()),
        ("licence", pa.string()), ("tier", pa.string()), ("evidence", pa.string()),
        ("sha256", pa.string()), ("files", pa.int64()), ("chunks", pa.int64()),
        ("declared", pa.string())]))
    metric_rows = [
        {"run_id": rid, "corpus": row["corpus"], "tier": row["tier"],
         "query_class": row["query_class"], "measure": measure, "value": float(value),
         "n": row["n"], "queries_unanswered": row["queries_unanswered"],
         "queries_dropped_unjudgeable": row["queries_dropped_unjudgeable"]}
        for row in metrics["rows"] for measure, value in sorted(row["metrics"].items())]
    tables["metric_rows"] = pa.Table.from_pylist(metric_rows, schema=pa.schema([
        ("run_id", pa.string()), ("corpus", pa.string()), ("tier", pa.string()),
        ("query_class", pa.string()), ("measure", pa.string()), ("value", pa.float64()),
        ("n", pa.int64()), ("queries_unanswered", pa.int64()),
        ("queries_dropped_unjudgeable", pa.int64())]))
    tables["per_query"] = _with_run_id(_per_query_table(results_dir, metrics), rid)
    rankings = _rankings_table(results_dir, metrics)
    if rankings is not None:
        tables["rankings"] = _with_run_id(rankings, rid)
    latency = _latency_row(runinfo, runinfo_path, run_row)
    if latency is not None:
        tables["latency"] = pa.Table.from_pylist([{"run_id": rid, **latency}], schema=pa.schema([
            ("run_id", pa.string()), ("corpus", pa.string()), ("tier", pa.string()),
            ("samples", pa.list_(pa.float64())), ("concurrency", pa.int32()),
            ("reported", pa.string())]))

    handlers = documents.results_files()
    extras, files, unhandled = [], [], []
    for path in sorted(results_dir.iterdir()):
        if not path.is_file() or path.name.startswith("."):
            continue
        handler = handlers.get(path.name)
        files.append({"name": path.name, "sha256": sha256_file(path),
                      "bytes": path.stat().st_size,
                      "stored_by": getattr(handler, "__name__", repr(handler)) if handler else None})
        if handler is not None:
            content = _parse_extra(path)
            check = getattr(handler, "validate", None)
            if check is not None:
                try:
                    check(content, str(path), metrics)
                except IngestRefused:
                    raise
                except ValueError as exc:
                    raise IngestRefused(str(exc), path=path) from None
            extras.append((handler, path.name, content))
        elif path.name not in documents.CORE_FILES:
            unhandled.append(path.name)
    return PreparedRun(results_dir, rid, metrics, run_row, tables, extras, files, unhandled)


def load_document(path_or_mapping) -> tuple[dict, str]:
    """A standalone document and a name for its source; refuses non-objects and NaN."""
    if isinstance(path_or_mapping, Mapping):
        return dict(path_or_mapping), "<document>"
    path = Path(path_or_mapping)
    if not path.is_file():
        refuse(path, None, "no such file")
    doc = _read_json(path)
    if not isinstance(doc, dict):
        refuse(path, None, "a document must be a JSON object")
    return doc, str(path)


def document_identity(doc: Mapping, source: str) -> tuple[str, str]:
    """``(document_id, canonical text)``: the sha256 of the canonical document."""
    try:
        text = canonical_json(doc)
    except (TypeError, ValueError) as exc:
        refuse(source, None, str(exc))
    return sha256_text(text), text


def document_tier(doc: Mapping, source: str) -> str | None:
    """The tier a document declares (validated), or None when it declares none."""
    tier = doc.get("tier")
    if tier is None:
        return None
    if tier not in TIERS:
        refuse(source, "tier", f"unknown tier {tier!r}; expected one of {sorted(TIERS)}")
    return tier
