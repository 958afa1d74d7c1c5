"""The metrics claim (``metrics.json``): its fields, its validation, its id, the warehouse
rows it fills and its comparability rules.

A metrics.json is the whole claim of one run: corpora with licence and tier, the index and
retrieval arm, the metric engine, the relevance policy, and one row per corpus x query class
(and ``all``, and a pooled ``all`` row over several corpora at their most restrictive tier).
It pins the files it summarises by sha256 (``files``: per_query.jsonl, rankings.jsonl,
qrels.jsonl, queries.jsonl where the query texts are known and, for a bench run,
calibration.jsonl), so a value moved between queries is caught.  Its id is
the sha256 of its canonical JSON.

The tier written in the file is never trusted: each corpus's tier must be at least as
restrictive as its licence gives (:mod:`harness.core.tiers`), a registered corpus name
never less restrictive than its registry entry, a registered source's licence must be the
registry's, and an unregistered corpus is publishable only when its evidence records the
licence as declared by the user.  Each row's tier is the most restrictive of its corpora
and of the shared index; each row's ``n`` and means must be those of its per-query values
(:meth:`MetricsClaim.check_values`).
"""

from __future__ import annotations

import dataclasses
import math
from datetime import datetime
from typing import Any, ClassVar, Iterable, Mapping

from harness.claims.base import (ABSENT, JSON, SHA256, Claim, Columns, SourceName, TableRows, fail,
                                 mapping, not_laxer, seq)
from harness.claims.base import tier as checked_tier
from harness.core.canonical import canonical_json, canonical_line, sha256_text
from harness.core.corpus_names import CorpusNameError
from harness.core.sources import SOURCES, source_for_corpus
from harness.core.tiers import (PUBLISHABLE_LICENCES, TIERS, licence_tier, most_restrictive_tier,
                                registered_floor, source_tier, tier_for_licence)

#: 2: the claim pins the files it summarises (``files``)
SCHEMA_VERSION = 2

METRICS_JSON = "metrics.json"
METRICS_MD = "metrics.md"
PER_QUERY = "per_query.jsonl"
RANKINGS = "rankings.jsonl"
#: the judgements the run was scored with (``harness score``, ``harness bench``)
QRELS = "qrels.jsonl"
#: the text of each scored query, where it is known (a bench run; ``harness score --queries``)
QUERIES = "queries.jsonl"
CALIBRATION_JSONL = "calibration.jsonl"
RUNINFO = "runinfo.json"
#: the statistics ``harness intervals`` adds to a results directory later (the
#: ``RESULTS_FILE`` of :class:`~harness.claims.intervals.IntervalsClaim` and of
#: :class:`~harness.claims.comparisons.ComparisonsClaim`)
INTERVALS_JSON = "intervals.json"
COMPARISONS_JSON = "comparisons.json"
#: files of a results directory the claim pins when they are present
PINNED_FILES = (PER_QUERY, RANKINGS, QRELS, QUERIES, CALIBRATION_JSONL)

#: top-level fields every metrics.json carries
REQUIRED_FIELDS = (
    "schema_version", "control_name", "corpora", "index", "retrieval", "metric_engine",
    "relevance_policy", "rows", "files",
)
CORPUS_FIELDS = ("name", "version", "licence", "tier", "sha256", "files", "chunks")
ROW_FIELDS = ("corpus", "tier", "query_class", "n", "metrics", "queries_unanswered",
              "queries_dropped_unjudgeable")
PER_QUERY_FIELDS = ("corpus", "tier", "query_class", "query_id", "measure", "value")

#: the class every corpus reports over all its queries
ALL = "all"
#: a row's mean must be its per-query values' mean to this (both files round to 1e-10)
MEAN_TOLERANCE = 1e-9


def run_id(metrics: Mapping[str, Any]) -> str:
    """A run's id: the sha256 of its canonical metrics.json."""
    return sha256_text(canonical_json(metrics))


def pooled_name(corpora: Iterable[str]) -> str:
    """Name of a row pooled over several corpora: their names sorted and joined by ``+``."""
    return "+".join(sorted(set(corpora)))


def is_finite_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check_per_query_row(obj: Mapping[str, Any], path: SourceName, line: int) -> Mapping[str, Any]:
    """One line of per_query.jsonl: its fields present and its value finite."""
    for name in PER_QUERY_FIELDS:
        if name not in obj:
            fail(path, name, "missing", line)
    if not is_finite_number(obj["value"]):
        fail(path, "value", f"not a finite number: {obj['value']!r}", line)
    return obj


def declared_evidence(licence: str) -> str:
    """The phrase that records a licence the user declared (``--licence``): the only way an
    unregistered corpus is publishable."""
    return f"licence {licence} declared"


def index_tier(doc: Mapping[str, Any]) -> str | None:
    """The tier of the run's shared index (``index.tier``), or None when it records none.

    Every corpus of a bench run is indexed together: the others' documents compete as
    distractors and shape the collection statistics (BM25's IDF), so each number the run
    reports is as restrictive as the most restrictive indexed corpus.
    """
    index = doc.get("index")
    if isinstance(index, Mapping) and index.get("tier") is not None:
        shared: str = index["tier"]  # a tier: the validator checked index.tier
        return shared
    return None


def effective_tiers(doc: Mapping[str, Any]) -> dict[str, str]:
    """Corpus name -> the tier of this run's numbers on it: the corpus's own (licence) tier,
    made as restrictive as :func:`index_tier` when the run records a shared index."""
    shared = index_tier(doc)
    out = {}
    for corpus in doc["corpora"]:
        own = corpus["tier"]
        out[corpus["name"]] = own if shared is None else most_restrictive_tier([own, shared])
    return out


def check_corpus_licence(corpus: Mapping[str, Any], source: SourceName, where: str) -> str:
    """The tier a corpus entry's licence gives it, after refusing an entry whose ``tier``
    claims less (module docstring); returns the claimed tier."""
    name, licence = corpus.get("name"), corpus.get("licence")
    claimed = checked_tier(corpus.get("tier"), source, f"{where}.tier")
    try:
        by_name = source_for_corpus(str(name))  # refuses invisible and look-alike names
    except CorpusNameError as exc:
        fail(source, f"{where}.name", str(exc))
    if not isinstance(licence, str) or not licence:
        fail(source, f"{where}.licence", f"must name a licence (or 'unknown'), got {licence!r}")
    registered = corpus.get("registry_source")
    if registered is not None:
        entry = SOURCES.get(registered) if isinstance(registered, str) else None
        if entry is None:
            fail(source, f"{where}.registry_source", f"{registered!r} is not a registered source")
        if licence != entry.licence:
            fail(source, f"{where}.licence", f"{licence!r} is not the licence of registered "
                                             f"source {registered!r} ({entry.licence})")
        floor = source_tier(entry)
        if by_name is not None and registered != "synthetic" and by_name is not entry:
            fail(source, f"{where}.registry_source", f"corpus {name!r} belongs to registered "
                                                     f"source {by_name.name!r}, not {registered!r}")
    else:
        floor = licence_tier(licence, str(name))
    if claimed == "A" and tier_for_licence(licence) != "A":
        fail(source, f"{where}.tier",
             f"tier A needs a publishable licence, but corpus {name!r} has licence {licence!r}; "
             f"publishable: {sorted(PUBLISHABLE_LICENCES)} (doubt fails closed: tier B)")
    why = (f"corpus {name!r} has licence {licence!r}"
           + (f" and is a registered tier-{registered_floor(str(name))} corpus"
              if registered_floor(str(name)) not in (None, tier_for_licence(licence)) else ""))
    not_laxer(claimed, floor, source, f"{where}.tier", why)
    if registered is None and claimed == "A" \
            and declared_evidence(licence) not in str(corpus.get("evidence") or ""):
        fail(source, f"{where}.evidence",
             f"corpus {name!r} is not a registered source, so tier A needs its licence "
             f"declared by the user ('{declared_evidence(licence)} ...'); the evidence "
             f"says {corpus.get('evidence')!r}")
    return claimed


# --------------------------------------------------------------------------- the claim

#: warehouse columns (the run row's provenance columns are the warehouse's own)
CORPORA_COLUMNS: Columns = (
    ("run_id", "string"), ("name", "string"), ("version", "string"), ("licence", "string"),
    ("tier", "string"), ("evidence", "string"), ("sha256", "string"), ("files", "int64"),
    ("chunks", "int64"), ("declared", "string"))
METRIC_ROW_COLUMNS: Columns = (
    ("run_id", "string"), ("corpus", "string"), ("tier", "string"), ("query_class", "string"),
    ("measure", "string"), ("value", "double"), ("n", "int64"),
    ("queries_unanswered", "int64"), ("queries_dropped_unjudgeable", "int64"))
PER_QUERY_COLUMNS: Columns = (
    ("corpus", "string"), ("tier", "string"), ("query_class", "string"), ("query_id", "string"),
    ("measure", "string"), ("value", "double"), ("answered", "bool"))
RANKING_COLUMNS: Columns = (
    ("corpus", "string"), ("tier", "string"), ("query_id", "string"), ("rank", "int32"),
    ("doc_id", "string"), ("score", "double"))
QUERY_COLUMNS: Columns = (
    ("corpus", "string"), ("tier", "string"), ("query_id", "string"), ("text", "string"))
LATENCY_COLUMNS: Columns = (
    ("run_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("samples", "double_list"), ("concurrency", "int32"), ("reported", "string"))


def _text(value: object) -> str | None:
    """A column value: strings stay, None stays NULL, anything else as canonical JSON."""
    if value is None or isinstance(value, str):
        return value
    return canonical_line(value)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclasses.dataclass(frozen=True)
class MetricsClaim(Claim):
    """One run's ``metrics.json`` (module docstring)."""

    KIND: ClassVar[str] = "metrics"
    TABLES: ClassVar[Mapping[str, Columns]] = {
        "metric_rows": METRIC_ROW_COLUMNS, "corpora": CORPORA_COLUMNS,
        "per_query": (("run_id", "string"), *PER_QUERY_COLUMNS),
        "rankings": (("run_id", "string"), *RANKING_COLUMNS),
        "queries": (("run_id", "string"), *QUERY_COLUMNS), "latency": LATENCY_COLUMNS}

    control_name: str
    corpora: list[JSON]
    index: Any
    retrieval: Mapping[str, Any]
    metric_engine: Mapping[str, Any]
    relevance_policy: Mapping[str, Any]
    rows: list[JSON]
    schema_version: int = SCHEMA_VERSION
    judgements: Any = ABSENT
    #: file name -> sha256 of the files the claim summarises (set when they are written)
    files: Any = ABSENT
    #: a deployed system measured over HTTP or a command (what was asked of it)
    system_under_test: Any = ABSENT
    code_revision: Any = ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str = METRICS_JSON) -> None:
        _validate(doc, source)

    def with_pins(self, pins: Mapping[str, str]) -> "MetricsClaim":
        return dataclasses.replace(self, files=dict(sorted(pins.items())),
                                   schema_version=SCHEMA_VERSION)

    def identity(self) -> str:
        """The run id: the sha256 of the canonical metrics.json."""
        return run_id(self.to_dict())

    def claimed_tier(self) -> str:
        shared = index_tier(self.to_dict())
        return most_restrictive_tier([c["tier"] for c in self.corpora]
                                     + ([shared] if shared is not None else []))

    def corpus_label(self) -> str:
        return pooled_name(c["name"] for c in self.corpora)

    def effective_tiers(self) -> dict[str, str]:
        return effective_tiers(self.to_dict())

    def check_pins(self, actual: Mapping[str, str], source: str) -> None:
        """Every pinned file is there with its pinned sha256, and every pinnable file that
        is there is pinned (``actual``: file name -> sha256 of the files present)."""
        pins = dict(self.files)
        for name in PINNED_FILES:
            if name in actual and name not in pins:
                fail(source, "files", f"{name} is in the results directory but the claim does "
                                      "not pin it")
        for name, digest in sorted(pins.items()):
            if name not in actual:
                fail(source, f"files.{name}", f"pinned, but {name} is missing")
            if actual[name] != digest:
                fail(source, f"files.{name}",
                     f"{name} has sha256 {actual[name][:12]}..., but the claim pins "
                     f"{digest[:12]}...: the file was changed after the claim was written")

    def check_values(self, groups: Mapping[tuple[str, str, str], tuple[int, float, int]],
                     source: str) -> None:
        """Every row, for every class and the pooled one, reproduced from per-query values.

        ``groups[(corpus, query_class, measure)] = (queries, mean, unanswered)`` over the
        per-query rows of that corpus and class; ``(corpus, 'all', m)`` over all of the
        corpus's rows and ``('a+b', 'all', m)`` over a pooled row's corpora.  ``unanswered``
        is the count of per-query rows marked ``answered: false`` (-1 when unrecorded).
        """
        for i, row in enumerate(self.rows):
            for measure, claimed in sorted(row["metrics"].items()):
                # no values (n = 0): the row is skipped or refused before ``mean`` is read
                n, mean, unanswered = groups.get((row["corpus"], row["query_class"], measure),
                                                 (0, math.nan, -1))
                if n == row["n"] == 0:
                    continue
                if n != row["n"]:
                    fail(source, f"rows[{i}].n",
                         f"{PER_QUERY} holds {n} {measure!r} values of corpus "
                         f"{row['corpus']!r} class {row['query_class']!r}, but the row says "
                         f"n={row['n']}")
                if not math.isclose(mean, claimed, rel_tol=0.0, abs_tol=MEAN_TOLERANCE):
                    fail(source, f"rows[{i}].metrics.{measure}",
                         f"{claimed!r}, but the {PER_QUERY} values of corpus {row['corpus']!r} "
                         f"class {row['query_class']!r} average {mean:.10f}")
                if unanswered >= 0 and unanswered != row["queries_unanswered"]:
                    fail(source, f"rows[{i}].queries_unanswered",
                         f"{row['queries_unanswered']}, but {unanswered} {PER_QUERY} rows of "
                         f"corpus {row['corpus']!r} class {row['query_class']!r} are unanswered")

    def comparability(self, other: "MetricsClaim") -> list[str]:
        """Why a delta between this run and ``other`` would compare two different
        measurements (:func:`comparability_notes`); empty when it would not."""
        return comparability_notes(self.to_dict(), other.to_dict())

    def run_row(self, run_id: str) -> JSON:
        """The claim's columns of the warehouse ``runs`` row (provenance columns such as
        when and from where it was ingested are the warehouse's)."""
        retrieval, index, engine = self.retrieval, self.index or {}, self.metric_engine
        revision = self.code_revision if isinstance(self.code_revision, str) else None
        return {
            "run_id": run_id, "control_name": self.control_name,
            "corpus": self.corpus_label(), "tier": self.claimed_tier(),
            "backend": _text(retrieval.get("backend")), "mode": _text(retrieval.get("mode")),
            "stage": _text(retrieval.get("stage")), "scope": _text(retrieval.get("scope")),
            "granularity": _text(retrieval.get("granularity")),
            "fusion": None if retrieval.get("fusion") is None
            else canonical_line(retrieval["fusion"]),
            "retrieval": canonical_line(retrieval),
            "embedding_models": (None if index.get("embedding_models") is None
                                 else canonical_line(index["embedding_models"])),
            "embedding_verdict": _text(index.get("embedding_verdict")),
            "embedding_dimension": _int_or_none(index.get("embedding_dimension")),
            "configured_embedding_model": _text(index.get("configured_embedding_model")),
            "index_info": None if self.index is None else canonical_line(self.index),
            "metric_engine": str(engine["name"]),
            "metric_engine_version": str(engine["version"]),
            "metric_engine_info": canonical_line(engine),
            "relevance_policy": canonical_line(self.relevance_policy),
            "code_revision": revision, "schema_version": self.schema_version,
            "metrics_json": self.canonical_json(),
        }

    def table_rows(self, document_id: str, stamp: datetime | None = None,
                   run_id: str | None = None) -> TableRows:
        rid = run_id or document_id
        return {
            "corpora": [{
                "run_id": rid, "name": c["name"], "version": _text(c["version"]),
                "licence": _text(c["licence"]), "tier": c["tier"],
                "evidence": _text(c.get("evidence")), "sha256": _text(c["sha256"]),
                "files": _int_or_none(c["files"]), "chunks": _int_or_none(c["chunks"]),
                "declared": canonical_line(c)} for c in self.corpora],
            "metric_rows": [{
                "run_id": rid, "corpus": row["corpus"], "tier": row["tier"],
                "query_class": row["query_class"], "measure": measure, "value": float(value),
                "n": row["n"], "queries_unanswered": row["queries_unanswered"],
                "queries_dropped_unjudgeable": row["queries_dropped_unjudgeable"]}
                for row in self.rows for measure, value in sorted(row["metrics"].items())],
        }


def validate_metrics(doc: Mapping[str, Any], source: str = METRICS_JSON) -> None:
    """Refuse a metrics.json that is incomplete or inconsistent, naming the field
    (:class:`MetricsClaim`)."""
    _validate(doc, source)


# --------------------------------------------------------------------------- validation


def _check_index(source: SourceName, doc: Mapping[str, Any], tiers: Mapping[str, str]) -> None:
    """``index.corpora`` names every corpus of the run and ``index.tier`` is their most
    restrictive tier (both or neither)."""
    index = doc["index"]
    if index is not None and not isinstance(index, Mapping):
        fail(source, "index", "must be an object or null")
    if not isinstance(index, Mapping) or ("corpora" not in index and "tier" not in index):
        return
    for name in ("corpora", "tier"):
        if index.get(name) is None:
            fail(source, f"index.{name}", "missing: index.corpora and index.tier go together")
    names = index["corpora"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names) \
            or names != sorted(set(names)):
        fail(source, "index.corpora", f"must be a sorted list of corpus names, got {names!r}")
    if names != sorted(tiers):
        fail(source, "index.corpora",
             f"{names} must name every corpus of the run {sorted(tiers)}: they share one index")
    expected = most_restrictive_tier(tiers[n] for n in names)
    if index["tier"] != expected:
        fail(source, "index.tier",
             f"tier {index['tier']!r} is not {expected}, the most restrictive tier of the "
             f"indexed corpora {names}")


def _check_pins_shape(files: object, source: SourceName) -> None:
    pins = mapping(files, source, "files")
    for name, digest in pins.items():
        if name not in PINNED_FILES:
            fail(source, f"files.{name}", f"not a file the claim pins ({list(PINNED_FILES)})")
        if not isinstance(digest, str) or not SHA256.match(digest):
            fail(source, f"files.{name}", f"must be a sha256 (64 hex digits), got {digest!r}")
    if PER_QUERY not in pins:
        fail(source, f"files.{PER_QUERY}", "missing: every run pins its per-query values")


#: kinds of ``system_under_test`` (``harness bench --backend http | command``)
SYSTEM_KINDS = ("http", "command")


def _check_system_under_test(sut: Any, source: str) -> None:
    """A deployed system's block: its kind, and header *names* only (a value would be a
    secret written into a claim)."""
    mapping(sut, source, "system_under_test")
    if sut.get("kind") not in SYSTEM_KINDS:
        fail(source, "system_under_test.kind",
             f"{sut.get('kind')!r}; expected one of {list(SYSTEM_KINDS)}")
    headers = sut.get("headers", [])
    if not isinstance(headers, list) or not all(
            isinstance(h, str) and h and ":" not in h and " " not in h.strip() for h in headers):
        fail(source, "system_under_test.headers",
             "must be a list of header names (never 'Name: value': values are not recorded)")


def _validate(doc: Any, source: str) -> None:
    """Required fields, schema version, corpora (tier from the licence, never laxer),
    the shared index, the engine, the pins, and every row: its fields, finite values, no
    repeated (corpus, class), and its tier: the most restrictive of its corpora's and of the
    shared index's."""
    if not isinstance(doc, Mapping):
        fail(source, None, "metrics.json must be a JSON object")
    if "schema_version" in doc and doc["schema_version"] == 1:
        fail(source, "schema_version", "1: written by an older version that did not pin "
                                       "its per-query files; rerun the command to write it again")
    for name in REQUIRED_FIELDS:
        if name not in doc:
            fail(source, name, "missing")
    if doc["schema_version"] != SCHEMA_VERSION:
        fail(source, "schema_version",
             f"unsupported schema version {doc['schema_version']!r}; expected {SCHEMA_VERSION}")
    if not isinstance(doc["control_name"], str) or not doc["control_name"]:
        fail(source, "control_name", "must be a non-empty string")
    if not isinstance(doc["retrieval"], Mapping):
        fail(source, "retrieval", "must be an object")
    if not isinstance(doc["relevance_policy"], Mapping):
        fail(source, "relevance_policy", "must be an object")
    seq(doc["corpora"], source, "corpora")
    if not doc["corpora"]:
        fail(source, "corpora", "must be a non-empty list")
    tiers: dict[str, str] = {}
    for i, corpus in enumerate(doc["corpora"]):
        mapping(corpus, source, f"corpora[{i}]")
        for name in CORPUS_FIELDS:
            if name not in corpus:
                fail(source, f"corpora[{i}].{name}", "missing")
        if not isinstance(corpus["name"], str) or not corpus["name"] or "+" in corpus["name"]:
            fail(source, f"corpora[{i}].name", "must be a non-empty string without '+' (it "
                                               f"joins pooled names), got {corpus['name']!r}")
        if corpus["name"] in tiers:
            fail(source, f"corpora[{i}].name", f"corpus {corpus['name']!r} listed twice")
        tiers[corpus["name"]] = check_corpus_licence(corpus, source, f"corpora[{i}]")
    _check_index(source, doc, tiers)
    shared = index_tier(doc)
    engine = doc["metric_engine"]
    if not isinstance(engine, Mapping) or not engine.get("name") or not engine.get("version"):
        fail(source, "metric_engine", "must name the engine and its version")
    _check_pins_shape(doc["files"], source)
    if "system_under_test" in doc:
        _check_system_under_test(doc["system_under_test"], source)
    seq(doc["rows"], source, "rows")
    if not doc["rows"]:
        fail(source, "rows", "must be a non-empty list")
    seen: dict[tuple[str, str], int] = {}
    for i, row in enumerate(doc["rows"]):
        mapping(row, source, f"rows[{i}]")
        for name in ROW_FIELDS:
            if name not in row:
                fail(source, f"rows[{i}].{name}", "missing")
        if row["tier"] not in TIERS:
            fail(source, f"rows[{i}].tier",
                 f"unknown licence tier {row['tier']!r}; expected one of {sorted(TIERS)}")
        cls = row["query_class"]
        if not isinstance(cls, str) or not cls:
            fail(source, f"rows[{i}].query_class", f"must be a non-empty string, got {cls!r}")
        names = str(row["corpus"]).split("+")
        for name in names:
            if name not in tiers:
                fail(source, f"rows[{i}].corpus", f"corpus {name!r} is not listed in corpora")
        key = (row["corpus"], cls)
        if key in seen:
            fail(source, f"rows[{i}]", f"corpus {key[0]!r} class {cls!r} repeats rows[{seen[key]}]")
        seen[key] = i
        expected = most_restrictive_tier([tiers[n] for n in names]
                                         + ([shared] if shared is not None else []))
        if row["tier"] != expected:
            what = "pooled corpora" if len(names) > 1 else "corpus"
            index_note = (f" and of the shared index (index.tier {shared})"
                          if shared is not None else "")
            fail(source, f"rows[{i}].tier",
                 f"tier {row['tier']!r} does not match {what} {row['corpus']!r}: expected "
                 f"{expected}, the most restrictive tier of {sorted(set(names))}{index_note}")
        if not isinstance(row["metrics"], Mapping) or not row["metrics"]:
            fail(source, f"rows[{i}].metrics", "must be a non-empty object")
        for measure, value in row["metrics"].items():
            if not is_finite_number(value):
                fail(source, f"rows[{i}].metrics.{measure}", f"not a finite number: {value!r}")
        for name in ("n", "queries_unanswered", "queries_dropped_unjudgeable"):
            if isinstance(row[name], bool) or not isinstance(row[name], int) or row[name] < 0:
                fail(source, f"rows[{i}].{name}", f"must be a non-negative integer, got {row[name]!r}")
        if row["queries_unanswered"] > row["n"]:
            fail(source, f"rows[{i}].queries_unanswered",
                 f"{row['queries_unanswered']} unanswered of only {row['n']} scored queries")


# --------------------------------------------------------------------------- comparability


#: metric_engine fields that define what a number means (``measures`` may differ freely)
ENGINE_FIELDS = ("name", "version", "semantics", "tie_break", "gain")


def provenance_notes(control: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[str]:
    """Differences that make a delta compare two different measurements."""
    notes = []
    ce, ke = control.get("metric_engine") or {}, candidate.get("metric_engine") or {}
    for name in ENGINE_FIELDS:
        if ce.get(name) != ke.get(name):
            notes.append(f"- metric_engine.{name} differs: {ce.get(name)!r} vs {ke.get(name)!r}")
    if control.get("relevance_policy") != candidate.get("relevance_policy"):
        notes.append("- relevance_policy differs: the two files judge relevance differently")
    cc = {c["name"]: c for c in control.get("corpora", [])}
    kc = {c["name"]: c for c in candidate.get("corpora", [])}
    for name in sorted(set(cc) & set(kc)):
        for field in ("version", "sha256", "tier"):
            if cc[name].get(field) != kc[name].get(field):
                notes.append(f"- corpus {name}: {field} differs "
                             f"({cc[name].get(field)!r} vs {kc[name].get(field)!r})")
    return notes


#: retrieval fields that change what a metric row measures (a delta across them compares
#: two different experiments, not two arms of one)
SETUP_FIELDS = ("granularity", "scope", "stage")


def _index_corpora(doc: Mapping[str, Any]) -> list[str] | None:
    """The corpora sharing a run's index: ``index.corpora``, else (a run with an index
    block that predates it) every corpus of the run; None for a run without an index."""
    index = doc.get("index")
    if not isinstance(index, Mapping):
        return None
    names = index.get("corpora")
    return sorted(names) if names is not None else sorted(c["name"] for c in doc["corpora"])


def comparability_notes(control: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[str]:
    """Everything that keeps a delta between two runs from being a delta: the
    :func:`provenance_notes`, a different granularity, scope or stage, and a different set
    of corpora in the shared index (other corpora's documents are distractors and change
    the collection statistics, so the same corpus scores differently beside them)."""
    notes = provenance_notes(control, candidate)
    cr, kr = control.get("retrieval") or {}, candidate.get("retrieval") or {}
    for name in SETUP_FIELDS:
        if cr.get(name) != kr.get(name):
            notes.append(f"- retrieval.{name} differs: {cr.get(name)!r} vs {kr.get(name)!r}")
    ci, ki = _index_corpora(control), _index_corpora(candidate)
    if ci is not None and ki is not None and ci != ki:
        notes.append(f"- index corpora differ: {ci} vs {ki} (documents of other corpora "
                     "compete in a shared index)")
    return notes
