"""Reading one results directory into checked, insert-ready Arrow tables (no database).

The claim decides what is valid (:class:`harness.claims.metrics.MetricsClaim`: its fields,
tiers recomputed from licences, the files it pins); this module reads the files and gives
the claim what it checks against: the sha256 of every pinned file, and the per-query values
grouped per row (every class, every corpus's ``all``, every pooled row), computed here with
DuckDB over Arrow.  Per-query and ranking rows must also agree with metrics.json about
corpus and tier, name measures the claim reports and not repeat a key; runinfo.json must
belong to this metrics.json.  Everything is read and checked before the warehouse is
touched, so a refused directory writes nothing.
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

from harness.claims import Claim
from harness.claims.metrics import (ALL, METRICS_JSON, PER_QUERY, PER_QUERY_COLUMNS, PINNED_FILES,
                                    QUERIES, RANKINGS, RUNINFO, MetricsClaim, check_per_query_row,
                                    index_tier)
from harness.core.canonical import canonical_json, sha256_file, sha256_text
from harness.core.formats import FormatError, read_json_object, read_jsonl
from warehouse import tables as claim_tables
from warehouse.errors import IngestRefused

log = logging.getLogger(__name__)

LATENCY_FIELD = "retrieval_latency_ms"
REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass
class PreparedRun:
    """A checked results directory, ready to be written in one transaction."""

    results_dir: Path
    run_id: str
    claim: MetricsClaim
    metrics: dict
    run_row: dict
    #: table name -> pyarrow Table whose columns are that table's
    tables: dict[str, Any]
    #: (file name, claim) for each extra file the warehouse stores
    extras: list[tuple[str, Claim]]
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


def _run_row(claim: MetricsClaim, rid: str, runinfo: Mapping, results_dir: Path) -> dict:
    """The ``runs`` row: the claim's columns and where and when it was made."""
    row = claim.run_row(rid)
    row.update(created_at=_created_at(runinfo, results_dir / METRICS_JSON),
               code_revision=row["code_revision"] or code_revision(),
               source_dir=str(results_dir.resolve()))
    return row


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
    return claim_tables.arrow_schema(PER_QUERY_COLUMNS)


def _fast_per_query(path: Path):
    """per_query.jsonl parsed by Arrow's JSON reader, or None whenever the file might hold
    anything the exact reader (:func:`_exact_per_query`) would refuse or read differently.

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
    """The claim's row check, line by line, then the column types it leaves open."""
    import pyarrow as pa

    try:
        rows = [check_per_query_row(obj, path, line) for line, obj in read_jsonl(path)]
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


def _per_query_table(results_dir: Path, claim: MetricsClaim):
    """per_query.jsonl as an Arrow table, checked against metrics.json."""
    path = results_dir / PER_QUERY
    if not path.is_file():
        refuse(path, None, "missing: every run stores its per-query values")
    table = _fast_per_query(path)
    if table is None:
        table = _exact_per_query(results_dir, path)
    _check_per_query(table, claim, path)
    return table


#: every row of the claim as the per-query rows it summarises: the rows of its corpora
#: (a pooled row ``a+b`` names several), of its class unless the class is ``all``
_GROUPS = f"""
SELECT r.corpus, r.query_class, t.measure, count(DISTINCT (t.corpus, t.query_id)) AS n,
       avg(t.value),
       CASE WHEN bool_and(t.answered IS NOT NULL)
            THEN count(DISTINCT (t.corpus, t.query_id)) FILTER (WHERE NOT t.answered)
            ELSE -1 END
FROM t JOIN claim_rows AS r
  ON list_contains(string_split(r.corpus, '+'), t.corpus)
 AND (r.query_class = '{ALL}' OR t.query_class = r.query_class)
GROUP BY ALL
"""


def _check_per_query(table, claim: MetricsClaim, path: Path) -> None:
    """Corpus and tier as metrics.json declares them, measures it reports, no repeated
    (corpus, query_id, measure), non-empty ids; then every row of the claim reproduced
    from these values (:meth:`MetricsClaim.check_values`)."""
    import duckdb
    import pyarrow as pa

    metrics = claim.to_dict()
    tiers = claim.effective_tiers()
    reported = sorted({m for row in metrics["rows"] for m in row["metrics"]})
    indexed = table.append_column("i", pa.array(range(len(table)), pa.int64()))
    con = duckdb.connect()
    try:
        con.register("t", indexed)
        con.register("declared", pa.table({"name": list(tiers), "tier": list(tiers.values())}))
        con.register("claim_rows", pa.table({
            "corpus": [r["corpus"] for r in metrics["rows"]],
            "query_class": [r["query_class"] for r in metrics["rows"]]}))

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
        groups = {(c, q, m): (n, mean, unanswered) for c, q, m, n, mean, unanswered
                  in con.execute(_GROUPS).fetchall()}
    finally:
        con.close()
    try:
        claim.check_values(groups, str(path.parent / METRICS_JSON))
    except FormatError as exc:
        raise _refused(exc) from None


def _index_note(metrics: Mapping) -> str:
    shared = index_tier(metrics)
    return "" if shared is None else (f" (its own tier made as restrictive as the shared "
                                      f"index, index.tier {shared})")


def _rankings_table(results_dir: Path, claim: MetricsClaim):
    import pyarrow as pa

    path = results_dir / RANKINGS
    if not path.is_file():
        return None
    try:
        rows = [obj for _, obj in read_jsonl(path)]
    except FormatError as exc:
        raise _refused(exc) from None
    tiers = claim.effective_tiers()
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


def _queries_table(results_dir: Path, claim: MetricsClaim):
    """``queries.jsonl``: one text per (corpus, query), at the tier metrics.json gives the
    corpus (the file's own tier is not trusted), only for queries the run scored."""
    import pyarrow as pa

    path = results_dir / QUERIES
    if not path.is_file():
        return None
    try:
        rows = [obj for _, obj in read_jsonl(path)]
    except FormatError as exc:
        raise _refused(exc) from None
    tiers = claim.effective_tiers()
    _require_fields(rows, ("corpus", "query_id", "text"), path)
    corpus = [r["corpus"] for r in rows]
    _require_types(corpus, (str,), path, "corpus", "a corpus name")
    unknown = set(corpus) - set(tiers)
    if unknown:
        i = next(i for i, c in enumerate(corpus) if c in unknown)
        refuse(path, "corpus", f"corpus {corpus[i]!r} is not listed in metrics.json corpora",
               _nth_record_line(path, i))
    query_id = [r["query_id"] for r in rows]
    _require_types(query_id, (str,), path, "query_id", "a string")
    text = [r["text"] for r in rows]
    _require_types(text, (str,), path, "text", "a string")
    table = pa.table({
        "corpus": pa.array(corpus, pa.string()),
        "tier": pa.array([tiers[c] for c in corpus], pa.string()),
        "query_id": pa.array(query_id, pa.string()),
        "text": pa.array(text, pa.string()),
    })
    dup = _first_duplicate(table, ("corpus", "query_id"))
    if dup is not None:
        refuse(path, "query_id", f"query {query_id[dup]!r} of corpus {corpus[dup]!r} has two "
               "texts", _nth_record_line(path, dup))
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
    if concurrency is not None and (isinstance(concurrency, bool)
                                    or not isinstance(concurrency, int) or concurrency < 1):
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


def _load_claim(results_dir: Path) -> MetricsClaim:
    path = results_dir / METRICS_JSON
    try:
        return MetricsClaim.from_dict(read_json_object(path), str(path))
    except FormatError as exc:
        raise _refused(exc) from None


def _extra_claim(kind: type[Claim], path: Path, metrics: Mapping) -> Claim:
    """An extra file of the directory as its claim, checked against this run."""
    try:
        claim = kind.from_dict(_parse_extra(path), str(path))
        claim.check_against_run(metrics, str(path))
    except FormatError as exc:
        raise _refused(exc) from None
    except IngestRefused:
        raise
    except ValueError as exc:
        raise IngestRefused(str(exc), path=path) from None
    return claim


def load_results(results_dir) -> PreparedRun:
    """Read and check a results directory; raises :class:`IngestRefused` naming file and
    field.  Nothing here touches the warehouse."""
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        refuse(results_dir, None, "not a results directory")
    claim = _load_claim(results_dir)
    metrics = claim.to_dict()
    metrics_path = results_dir / METRICS_JSON
    rid = claim.identity()

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

    digests = {path.name: sha256_file(path) for path in sorted(results_dir.iterdir())
               if path.is_file() and not path.name.startswith(".")}

    run_row = _run_row(claim, rid, runinfo, results_dir)
    tables = {name: claim_tables.arrow_table(rows, MetricsClaim.TABLES[name])
              for name, rows in claim.table_rows(rid, run_id=rid).items()}
    tables["per_query"] = _with_run_id(_per_query_table(results_dir, claim), rid)
    rankings = _rankings_table(results_dir, claim)
    if rankings is not None:
        tables["rankings"] = _with_run_id(rankings, rid)
    queries = _queries_table(results_dir, claim)
    if queries is not None:
        tables["queries"] = _with_run_id(queries, rid)
    latency = _latency_row(runinfo, runinfo_path, run_row)
    if latency is not None:
        tables["latency"] = claim_tables.arrow_table([{"run_id": rid, **latency}],
                                                     MetricsClaim.TABLES["latency"])

    extras, files, unhandled = [], [], []
    for name, digest in digests.items():
        path = results_dir / name
        kind = claim_tables.RESULTS_FILES.get(name)
        files.append({"name": name, "sha256": digest, "bytes": path.stat().st_size,
                      "stored_by": f"claim kind {kind.KIND}" if kind else None})
        if kind is not None:
            extras.append((name, _extra_claim(kind, path, metrics)))
        elif name not in claim_tables.CORE_FILES:
            unhandled.append(name)
    # last, so a malformed file is refused naming its line first: a pin that does not match
    # is a file changed after the claim was written (values moved between queries, say)
    try:
        claim.check_pins({n: d for n, d in digests.items() if n in PINNED_FILES},
                         str(metrics_path))
    except FormatError as exc:
        raise _refused(exc) from None
    return PreparedRun(results_dir, rid, claim, metrics, run_row, tables, extras, files,
                       unhandled)


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
