"""The answers claim (``answers.json``, ``harness answer``): aggregation questions answered
by exact mechanisms and scored on the answer, EM / partial / answered (docs/answers.md).

Layout::

    kind, schema_version, corpus, tier
    corpora[]      name, version, licence, tier, sha256, evidence, files, turns,
                   aggregation_queries
    answerer       name, is_production_path, description, row_limit, model (always null)
    policy         every scoring rule (harness.studies.answers.grading.AnswerPolicy)
    scoring        engine, measures, what the mean iterates
    scope, store   what each question is answered over; the store's schema version
    rows[]         corpus, tier, query_class, rule (``all`` and each rule), n, unanswered,
                   EM, partial, answered, scored_on ("answer")
    floor_rows[]   the same rows for the ``none`` answerer over the same gold set
    answers[]      per query: corpus, tier, query_class, query_id, rule, question,
                   answer_kind, gold, predicted, EM, partial, answered, mechanism, notes

Validation: shapes first (so a malformed document is refused naming its field), each
corpus's tier never laxer than its licence gives (:mod:`harness.claims.metrics`), each row's
tier its corpora's most restrictive, every row recomputed from the answers, the floor as the
``none`` answerer's rows over the same gold set, and no key twice.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, ClassVar, Mapping

from harness.claims import base as b
from harness.claims.metrics import check_corpus_licence
from harness.core.canonical import canonical_line
from harness.core.tiers import TIERS, most_restrictive_tier

KIND = "answers"
SCHEMA_VERSION = 1
ANSWERS_JSON = "answers.json"
MEASURES = ("EM", "partial", "answered")
SCORED_ON = "answer"
ANSWER_KINDS = ("count", "file_set", "speaker")
#: document measure -> column (``answered_share``: ``answered`` is a retrieval column)
MEASURE_COLUMNS = {"EM": "em", "partial": "partial", "answered": "answered_share"}
BLOCKS = ("rows", "floor_rows")

REQUIRED_FIELDS = ("kind", "schema_version", "corpus", "tier", "corpora", "answerer", "policy",
                   "scoring", "rows", "floor_rows", "answers")
ROW_FIELDS = ("corpus", "tier", "query_class", "rule", "n", "unanswered", *MEASURES, "scored_on")
ANSWER_FIELDS = ("corpus", "tier", "query_class", "query_id", "rule", "question", "answer_kind",
                 "gold", "predicted", *MEASURES, "mechanism", "notes")

RUN_COLUMNS: b.Columns = (
    ("document_id", "string"), ("run_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("answerer", "string"), ("is_production_path", "bool"), ("answerer_info", "string"),
    ("count_tolerance", "int32"), ("set_credit", "string"), ("policy", "string"),
    ("scoring", "string"), ("document_version", "int32"), ("store_schema_version", "int32"),
    ("created_at", "timestamp"), ("ingested_at", "timestamp"))
CORPUS_COLUMNS: b.Columns = (
    ("document_id", "string"), ("corpus", "string"), ("tier", "string"), ("version", "string"),
    ("licence", "string"), ("evidence", "string"), ("sha256", "string"), ("files", "int64"),
    ("turns", "int64"), ("aggregation_queries", "int64"), ("declared", "string"))
ROW_COLUMNS: b.Columns = (
    ("document_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("query_class", "string"), ("rule", "string"), ("is_floor", "bool"), ("n", "int64"),
    ("unanswered", "int64"), ("em", "double"), ("partial", "double"),
    ("answered_share", "double"))
ANSWER_COLUMNS: b.Columns = (
    ("document_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("query_class", "string"), ("query_id", "string"), ("rule", "string"),
    ("question", "string"), ("answer_kind", "string"), ("gold", "string"),
    ("predicted", "string"), ("em", "double"), ("partial", "double"),
    ("answered_share", "double"), ("mechanism", "string"), ("notes", "string"))


def _shapes(doc: Any, source: str) -> None:
    """What the tables need, typed: fields present, objects and lists where they must be,
    numbers in range, texts non-empty (before anything indexes into them)."""
    doc = b.mapping(doc, source, None)
    b.need(doc, REQUIRED_FIELDS, source)
    for name in ("answerer", "policy", "scoring"):
        b.mapping(doc[name], source, name)
    answerer = doc["answerer"]
    b.need(answerer, ("name", "is_production_path"), source, "answerer.")
    b.text(answerer["name"], source, "answerer.name")
    b.flag(answerer["is_production_path"], source, "answerer.is_production_path")
    policy = doc["policy"]
    b.need(policy, ("count_tolerance", "set_credit"), source, "policy.")
    b.integer(policy["count_tolerance"], source, "policy.count_tolerance")
    b.text(policy["set_credit"], source, "policy.set_credit")
    b.integer(doc["schema_version"], source, "schema_version", lo=1)
    b.integer(b.mapping(doc.get("store") or {}, source, "store").get("schema_version"), source,
              "store.schema_version", nullable=True, lo=1)
    b.text(doc["corpus"], source, "corpus")
    b.tier(doc["tier"], source)
    for i, corpus in enumerate(b.seq(doc["corpora"], source, "corpora")):
        where = f"corpora[{i}]"
        corpus = b.mapping(corpus, source, where)
        b.need(corpus, ("name", "tier"), source, f"{where}.")
        b.text(corpus["name"], source, f"{where}.name")
        if "+" in corpus["name"]:
            b.fail(source, f"{where}.name", f"{corpus['name']!r} holds '+' (it joins pooled "
                                            "names)")
        b.tier(corpus["tier"], source, f"{where}.tier")
        for name in ("files", "turns", "aggregation_queries"):
            b.integer(corpus.get(name), source, f"{where}.{name}", nullable=True)
    for block in BLOCKS:
        for i, row in enumerate(b.seq(doc[block], source, block)):
            where = f"{block}[{i}]"
            row = b.mapping(row, source, where)
            b.need(row, ("corpus", "tier", "query_class", "rule", "n", "unanswered", *MEASURES),
                   source, f"{where}.")
            for name in ("corpus", "query_class", "rule"):
                b.text(row[name], source, f"{where}.{name}")
            b.integer(row["n"], source, f"{where}.n", lo=1)
            b.integer(row["unanswered"], source, f"{where}.unanswered")
            for m in MEASURES:
                b.number(row[m], source, f"{where}.{m}", lo=0.0, hi=1.0)
    for i, answer in enumerate(b.seq(doc["answers"], source, "answers")):
        where = f"answers[{i}]"
        answer = b.mapping(answer, source, where)
        b.need(answer, ("corpus", "tier", "query_class", "query_id", "rule", "question",
                        "answer_kind", "gold", "predicted", *MEASURES, "mechanism", "notes"),
               source, f"{where}.")
        for name in ("corpus", "query_class", "query_id", "rule", "question", "mechanism"):
            b.text(answer[name], source, f"{where}.{name}")
        b.choice(answer["answer_kind"], ANSWER_KINDS, source, f"{where}.answer_kind")
        b.mapping(answer["notes"], source, f"{where}.notes")
        for m in MEASURES:
            b.number(answer[m], source, f"{where}.{m}", lo=0.0, hi=1.0)
        if answer["predicted"] is None and answer["answered"] != 0:
            b.fail(source, f"{where}.answered", "a declined answer (predicted null) was not "
                                                "answered")


def _licences(doc: Mapping[str, Any], source: str) -> None:
    """Each corpus's tier from its licence (never laxer), the document's their most
    restrictive."""
    for i, corpus in enumerate(doc["corpora"]):
        b.need(corpus, ("licence",), source, f"corpora[{i}].")
        check_corpus_licence(corpus, source, f"corpora[{i}]")


def _rows_from_answers(doc: Any, source: str) -> None:
    """Refuse an answers document that is incomplete or inconsistent, naming the field:
    required fields, kind and version, tiers (each row's is its corpora's most restrictive),
    measures in [0, 1], ``unanswered <= n``, and each row's means recomputed from ``answers``."""
    if not isinstance(doc, Mapping):
        b.fail(source, None, "an answers document must be a JSON object")
    for name in REQUIRED_FIELDS:
        if name not in doc:
            b.fail(source, name, "missing")
    if doc["kind"] != KIND:
        b.fail(source, "kind", f"expected {KIND!r}, got {doc['kind']!r}")
    if doc["schema_version"] != SCHEMA_VERSION:
        b.fail(source, "schema_version", f"unsupported schema version {doc['schema_version']!r}; "
              f"expected {SCHEMA_VERSION}")
    tiers: dict[str, str] = {}
    for i, c in enumerate(doc["corpora"]):
        if not isinstance(c, Mapping) or c.get("tier") not in TIERS or not c.get("name"):
            b.fail(source, f"corpora[{i}]", f"needs a name and a tier in {sorted(TIERS)}")
        tiers[c["name"]] = c["tier"]
    if not tiers:
        b.fail(source, "corpora", "must list at least one corpus")
    if doc["tier"] != most_restrictive_tier(tiers.values()):
        b.fail(source, "tier", f"{doc['tier']!r} is not the most restrictive tier of the corpora")
    for i, a in enumerate(doc["answers"]):
        for name in ANSWER_FIELDS:
            if name not in a:
                b.fail(source, f"answers[{i}].{name}", "missing")
        if tiers.get(a["corpus"]) != a["tier"]:
            b.fail(source, f"answers[{i}].tier", f"does not match corpus {a['corpus']!r}")
    for block in ("rows", "floor_rows"):
        for i, row in enumerate(doc[block]):
            where = f"{block}[{i}]"
            for name in ROW_FIELDS:
                if name not in row:
                    b.fail(source, f"{where}.{name}", "missing")
            names = str(row["corpus"]).split("+")
            if any(n not in tiers for n in names):
                b.fail(source, f"{where}.corpus", f"{row['corpus']!r} names an unlisted corpus")
            if row["tier"] != most_restrictive_tier(tiers[n] for n in names):
                b.fail(source, f"{where}.tier", f"{row['tier']!r} does not match {row['corpus']!r}")
            for m in MEASURES:
                value = row[m]
                if isinstance(value, bool) or not isinstance(value, (int, float)) \
                        or not 0.0 <= value <= 1.0:
                    b.fail(source, f"{where}.{m}", f"must be a number in [0, 1], got {value!r}")
            if not isinstance(row["n"], int) or row["n"] < 1 or not 0 <= row["unanswered"] <= row["n"]:
                b.fail(source, f"{where}.n", "n must be >= 1 and unanswered within [0, n]")
    for i, row in enumerate(doc["rows"]):
        members = [a for a in doc["answers"] if a["corpus"] in row["corpus"].split("+")
                   and a["query_class"] == row["query_class"]
                   and (row["rule"] == "all" or a["rule"] == row["rule"])]
        if len(members) != row["n"]:
            b.fail(source, f"rows[{i}].n", f"{row['n']} but {len(members)} answers belong to it")
        for m in MEASURES:
            mean = sum(a[m] for a in members) / len(members)
            if abs(mean - row[m]) > 1e-9:
                b.fail(source, f"rows[{i}].{m}", f"{row[m]!r} is not the mean {mean!r} of its answers")


def _members(doc: Mapping[str, Any], row: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    names = row["corpus"].split("+")
    return [a for a in doc["answers"] if a["corpus"] in names
            and a["query_class"] == row["query_class"]
            and (row["rule"] == "all" or a["rule"] == row["rule"])]


def _consistency(doc: Mapping[str, Any], source: str) -> None:
    """What ``validate_document`` leaves: the pooled name, unique keys, unanswered counts,
    and the floor as the ``none`` answerer's rows over the same gold set."""
    names = sorted(x["name"] for x in doc["corpora"])
    if len(set(names)) != len(names):
        b.fail(source, "corpora", f"a corpus is listed twice: {names}")
    if doc["corpus"] != b.pooled_corpus(names):
        b.fail(source, "corpus", f"{doc['corpus']!r} is not the pooled name "
                                 f"{b.pooled_corpus(names)!r} of the corpora")
    seen: dict[tuple[str, str], int] = {}
    for i, a in enumerate(doc["answers"]):
        key = (a["corpus"], a["query_id"])
        if key in seen:
            b.fail(source, f"answers[{i}].query_id",
                   f"query {a['query_id']!r} of corpus {a['corpus']!r} repeats "
                   f"answers[{seen[key]}]")
        seen[key] = i
    keys: dict[str, dict[tuple[str, str, str], Mapping[str, Any]]] = {}
    for block in BLOCKS:
        mine = keys.setdefault(block, {})
        for i, row in enumerate(doc[block]):
            where = f"{block}[{i}]"
            row_key = (row["corpus"], row["query_class"], row["rule"])
            if row_key in mine:
                b.fail(source, where, f"corpus {row_key[0]!r}, class {row_key[1]!r}, rule "
                                      f"{row_key[2]!r} appears twice")
            mine[row_key] = row
            members = _members(doc, row)
            unanswered = sum(1 for a in members if a["answered"] == 0)
            if block == "rows" and row["unanswered"] != unanswered:
                b.fail(source, f"{where}.unanswered", f"{row['unanswered']} but {unanswered} "
                                                      "of its answers were declined")
    rows, floor = keys["rows"], keys["floor_rows"]
    if set(rows) != set(floor):
        odd = sorted(set(rows) ^ set(floor))
        b.fail(source, "floor_rows", f"the floor must hold exactly the rows' corpus x class x "
                                     f"rule; differs at {odd[:5]}")
    for i, row in enumerate(doc["floor_rows"]):
        where = f"floor_rows[{i}]"
        twin = rows[(row["corpus"], row["query_class"], row["rule"])]
        if row["n"] != twin["n"] or row["tier"] != twin["tier"]:
            b.fail(source, f"{where}.n", f"n {row['n']} / tier {row['tier']} differ from the "
                                         f"row it floors (n {twin['n']}, tier {twin['tier']})")
        if row["unanswered"] != row["n"]:
            b.fail(source, f"{where}.unanswered", f"{row['unanswered']} of {row['n']}: the none "
                                                  "answerer declines every query")
        for m in MEASURES:
            if row[m] != 0:
                b.fail(source, f"{where}.{m}", f"{row[m]!r}: the none answerer scores 0")


def _json(value: object) -> str | None:
    return None if value is None else canonical_line(value)


def _text(value: object) -> str | None:
    return value if value is None or isinstance(value, str) else canonical_line(value)


def _measures(row: Mapping[str, Any]) -> dict[str, float]:
    return {column: float(row[m]) for m, column in MEASURE_COLUMNS.items()}


@dataclasses.dataclass(frozen=True)
class AnswersClaim(b.Claim):
    KIND: ClassVar[str] = KIND
    RESULTS_FILE: ClassVar[str] = ANSWERS_JSON
    TABLES: ClassVar[Mapping[str, b.Columns]] = {"answer_runs": RUN_COLUMNS,
                                                 "answer_corpora": CORPUS_COLUMNS,
                                                 "answer_rows": ROW_COLUMNS,
                                                 "answers": ANSWER_COLUMNS}
    #: the table whose ``run_id`` is set when a stored document arrives again beside a run
    RUN_LINK_TABLE: ClassVar[str] = "answer_runs"

    corpus: str
    tier: str
    corpora: list[b.JSON]
    answerer: Mapping[str, Any]
    policy: Mapping[str, Any]
    scoring: Mapping[str, Any]
    rows: list[b.JSON]
    floor_rows: list[b.JSON]
    answers: list[b.JSON]
    kind: str = KIND
    schema_version: int = SCHEMA_VERSION
    scope: Any = b.ABSENT
    store: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        _shapes(doc, source)
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        _licences(doc, source)
        _rows_from_answers(doc, source)
        _consistency(doc, source)

    def check_against_run(self, metrics: Mapping[str, Any], source: str) -> None:
        """An answers.json beside a metrics.json: a corpus both name must carry the same tier
        (and checksum) in both, or the directory contradicts itself."""
        declared = {x["name"]: x for x in metrics["corpora"]}
        for i, corpus in enumerate(self.corpora):
            run = declared.get(corpus["name"])
            if run is None:
                continue
            if corpus["tier"] != run["tier"]:
                b.fail(source, f"corpora[{i}].tier", f"tier {corpus['tier']!r} disagrees with "
                       f"metrics.json, where corpus {corpus['name']!r} is tier {run['tier']}")
            if corpus.get("sha256") and run.get("sha256") and corpus["sha256"] != run["sha256"]:
                b.fail(source, f"corpora[{i}].sha256", f"corpus {corpus['name']!r} was answered on "
                       f"content {str(corpus['sha256'])[:12]} but retrieved on "
                       f"{str(run['sha256'])[:12]}")

    def table_rows(self, document_id: str, stamp: datetime,
                   run_id: str | None = None) -> b.TableRows:
        answerer, policy = self.answerer, self.policy
        return {
            "answer_runs": [{
                "document_id": document_id, "run_id": run_id, "corpus": self.corpus,
                "tier": self.tier, "answerer": answerer["name"],
                "is_production_path": answerer["is_production_path"],
                "answerer_info": _json(answerer), "count_tolerance": policy["count_tolerance"],
                "set_credit": policy["set_credit"], "policy": _json(policy),
                "scoring": _json(self.scoring), "document_version": self.schema_version,
                "store_schema_version": (self.store or {}).get("schema_version")
                if self.store is not b.ABSENT else None,
                "created_at": None, "ingested_at": stamp}],
            "answer_corpora": [{
                "document_id": document_id, "corpus": x["name"], "tier": x["tier"],
                "version": _text(x.get("version")), "licence": _text(x.get("licence")),
                "evidence": _text(x.get("evidence")), "sha256": _text(x.get("sha256")),
                "files": x.get("files"), "turns": x.get("turns"),
                "aggregation_queries": x.get("aggregation_queries"), "declared": _json(x)}
                for x in self.corpora],
            "answer_rows": [{
                "document_id": document_id, "corpus": r["corpus"], "tier": r["tier"],
                "query_class": r["query_class"], "rule": r["rule"],
                "is_floor": block == "floor_rows", "n": r["n"], "unanswered": r["unanswered"],
                **_measures(r)} for block in BLOCKS for r in getattr(self, block)],
            "answers": [{
                "document_id": document_id, "corpus": a["corpus"], "tier": a["tier"],
                "query_class": a["query_class"], "query_id": a["query_id"], "rule": a["rule"],
                "question": a["question"], "answer_kind": a["answer_kind"],
                "gold": _json(a["gold"]), "predicted": _json(a["predicted"]), **_measures(a),
                "mechanism": a["mechanism"], "notes": _json(a["notes"])} for a in self.answers],
        }
