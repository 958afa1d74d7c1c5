"""The metrics claim (``metrics.json``): its fields, its validation, its id and its
comparability rules.

A metrics.json is the whole claim of one run: corpora with licence and tier, the index and
retrieval arm, the metric engine, the relevance policy, and one row per corpus x query class
(and ``all``, and a pooled ``all`` row over several corpora at their most restrictive tier).
Its id is the sha256 of its canonical JSON.
"""

from __future__ import annotations

import math
from typing import Iterable, Mapping

from harness.core.canonical import canonical_json, sha256_text
from harness.core.formats import FormatError
from harness.core.tiers import PUBLISHABLE_LICENCES, TIERS, most_restrictive_tier

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


#: the class every corpus reports over all its queries
ALL = "all"


def run_id(metrics: Mapping) -> str:
    """A run's id: the sha256 of its canonical metrics.json."""
    return sha256_text(canonical_json(metrics))


def pooled_name(corpora: Iterable[str]) -> str:
    """Name of a row pooled over several corpora: their names sorted and joined by ``+``."""
    return "+".join(sorted(set(corpora)))


def _fail(source, field, message):
    raise FormatError(source, None, field, message)


def is_finite_number(value) -> bool:
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
    """Tier A only for a licence on the publishable list (``ingestion.attribution``)."""

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
            if not is_finite_number(value):
                _fail(source, f"rows[{i}].metrics.{measure}", f"not a finite number: {value!r}")
        for name in ("n", "queries_unanswered", "queries_dropped_unjudgeable"):
            if isinstance(row[name], bool) or not isinstance(row[name], int) or row[name] < 0:
                _fail(source, f"rows[{i}].{name}", f"must be a non-negative integer, got {row[name]!r}")
        if row["queries_unanswered"] > row["n"]:
            _fail(source, f"rows[{i}].queries_unanswered",
                  f"{row['queries_unanswered']} unanswered of only {row['n']} scored queries")



# --------------------------------------------------------------------------- comparability


#: metric_engine fields that define what a number means (``measures`` may differ freely)
ENGINE_FIELDS = ("name", "version", "semantics", "tie_break", "gain")


def provenance_notes(control: Mapping, candidate: Mapping) -> list[str]:
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


def _index_corpora(doc: Mapping) -> list[str] | None:
    """The corpora sharing a run's index: ``index.corpora``, else (a run with an index
    block that predates it) every corpus of the run; None for a run without an index."""
    index = doc.get("index")
    if not isinstance(index, Mapping):
        return None
    names = index.get("corpora")
    return sorted(names) if names is not None else sorted(c["name"] for c in doc["corpora"])


def comparability_notes(control: Mapping, candidate: Mapping) -> list[str]:
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
