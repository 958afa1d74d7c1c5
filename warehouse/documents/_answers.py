"""Checking and storing answers documents (``answers.json``, docs/answers.md) in the tables
of migration 005.  Shared by the ``answers`` kind (:mod:`.answers`) and the results-directory
file (:mod:`.answers_file`); not a handler itself (the underscore keeps discovery away).

The harness's own ``harness.studies.answers.document.validate_document`` recomputes every row from the
per-query answers; it is called after the shapes it indexes into are checked here, so a
malformed document is refused naming its field instead of failing with a TypeError.  Checks
it does not make are made here: each row's ``unanswered`` is recounted, the floor rows are
the ``none`` answerer's over the same gold set (every value 0, every query unanswered), and
keys repeat nowhere.
"""

from __future__ import annotations

from typing import Mapping

from harness.core.canonical import canonical_line
from warehouse.documents import _common as c

MEASURES = ("EM", "partial", "answered")
#: document measure -> column (``answered_share``: ``answered`` is a retrieval column)
COLUMNS = {"EM": "em", "partial": "partial", "answered": "answered_share"}
BLOCKS = ("rows", "floor_rows")

RUN_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("run_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("answerer", "string"), ("is_production_path", "bool"), ("answerer_info", "string"),
    ("count_tolerance", "int32"), ("set_credit", "string"), ("policy", "string"),
    ("scoring", "string"), ("document_version", "int32"), ("store_schema_version", "int32"),
    ("created_at", "timestamp"), ("ingested_at", "timestamp")])

CORPUS_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("corpus", "string"), ("tier", "string"), ("version", "string"),
    ("licence", "string"), ("evidence", "string"), ("sha256", "string"), ("files", "int64"),
    ("turns", "int64"), ("aggregation_queries", "int64"), ("declared", "string")])

ROW_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("query_class", "string"), ("rule", "string"), ("is_floor", "bool"), ("n", "int64"),
    ("unanswered", "int64"), ("em", "double"), ("partial", "double"),
    ("answered_share", "double")])

ANSWER_COLUMNS = c.arrow_schema([
    ("document_id", "string"), ("corpus", "string"), ("tier", "string"),
    ("query_class", "string"), ("query_id", "string"), ("rule", "string"),
    ("question", "string"), ("answer_kind", "string"), ("gold", "string"),
    ("predicted", "string"), ("em", "double"), ("partial", "double"),
    ("answered_share", "double"), ("mechanism", "string"), ("notes", "string")])


# --------------------------------------------------------------------------- checking


def _shapes(doc, source) -> None:
    """What the tables need, typed: fields present, objects and lists where they must be,
    numbers in range, texts non-empty (before anything indexes into them)."""
    from harness.studies.answers.document import REQUIRED_FIELDS
    from harness.studies.answers.grading import ANSWER_KINDS

    doc = c.mapping(doc, source, None)
    c.need(doc, REQUIRED_FIELDS, source)
    for name in ("answerer", "policy", "scoring"):
        c.mapping(doc[name], source, name)
    answerer = doc["answerer"]
    c.need(answerer, ("name", "is_production_path"), source, "answerer.")
    c.text(answerer["name"], source, "answerer.name")
    c.flag(answerer["is_production_path"], source, "answerer.is_production_path")
    policy = doc["policy"]
    c.need(policy, ("count_tolerance", "set_credit"), source, "policy.")
    c.integer(policy["count_tolerance"], source, "policy.count_tolerance")
    c.text(policy["set_credit"], source, "policy.set_credit")
    c.integer(doc["schema_version"], source, "schema_version", lo=1)
    c.integer(c.mapping(doc.get("store") or {}, source, "store").get("schema_version"), source,
              "store.schema_version", nullable=True, lo=1)
    c.text(doc["corpus"], source, "corpus")
    c.tier(doc["tier"], source)
    for i, corpus in enumerate(c.seq(doc["corpora"], source, "corpora")):
        where = f"corpora[{i}]"
        corpus = c.mapping(corpus, source, where)
        c.need(corpus, ("name", "tier"), source, f"{where}.")
        c.text(corpus["name"], source, f"{where}.name")
        if "+" in corpus["name"]:
            c.fail(source, f"{where}.name", f"{corpus['name']!r} holds '+' (it joins pooled "
                                            "names)")
        c.tier(corpus["tier"], source, f"{where}.tier")
        for name in ("files", "turns", "aggregation_queries"):
            c.integer(corpus.get(name), source, f"{where}.{name}", nullable=True)
    for block in BLOCKS:
        for i, row in enumerate(c.seq(doc[block], source, block)):
            where = f"{block}[{i}]"
            row = c.mapping(row, source, where)
            c.need(row, ("corpus", "tier", "query_class", "rule", "n", "unanswered", *MEASURES),
                   source, f"{where}.")
            for name in ("corpus", "query_class", "rule"):
                c.text(row[name], source, f"{where}.{name}")
            c.integer(row["n"], source, f"{where}.n", lo=1)
            c.integer(row["unanswered"], source, f"{where}.unanswered")
            for m in MEASURES:
                c.number(row[m], source, f"{where}.{m}", lo=0.0, hi=1.0)
    for i, answer in enumerate(c.seq(doc["answers"], source, "answers")):
        where = f"answers[{i}]"
        answer = c.mapping(answer, source, where)
        c.need(answer, ("corpus", "tier", "query_class", "query_id", "rule", "question",
                        "answer_kind", "gold", "predicted", *MEASURES, "mechanism", "notes"),
               source, f"{where}.")
        for name in ("corpus", "query_class", "query_id", "rule", "question", "mechanism"):
            c.text(answer[name], source, f"{where}.{name}")
        c.choice(answer["answer_kind"], ANSWER_KINDS, source, f"{where}.answer_kind")
        c.mapping(answer["notes"], source, f"{where}.notes")
        for m in MEASURES:
            c.number(answer[m], source, f"{where}.{m}", lo=0.0, hi=1.0)
        if answer["predicted"] is None and answer["answered"] != 0:
            c.fail(source, f"{where}.answered", "a declined answer (predicted null) was not "
                                                "answered")


def _members(doc, row) -> list[Mapping]:
    names = row["corpus"].split("+")
    return [a for a in doc["answers"] if a["corpus"] in names
            and a["query_class"] == row["query_class"]
            and (row["rule"] == "all" or a["rule"] == row["rule"])]


def _consistency(doc, source) -> None:
    """What ``validate_document`` leaves: the pooled name, unique keys, unanswered counts,
    and the floor as the ``none`` answerer's rows over the same gold set."""
    names = sorted(x["name"] for x in doc["corpora"])
    if len(set(names)) != len(names):
        c.fail(source, "corpora", f"a corpus is listed twice: {names}")
    if doc["corpus"] != c.pooled_corpus(names):
        c.fail(source, "corpus", f"{doc['corpus']!r} is not the pooled name "
                                 f"{c.pooled_corpus(names)!r} of the corpora")
    seen: dict[tuple[str, str], int] = {}
    for i, a in enumerate(doc["answers"]):
        key = (a["corpus"], a["query_id"])
        if key in seen:
            c.fail(source, f"answers[{i}].query_id",
                   f"query {a['query_id']!r} of corpus {a['corpus']!r} repeats "
                   f"answers[{seen[key]}]")
        seen[key] = i
    keys: dict[str, dict[tuple[str, str, str], Mapping]] = {}
    for block in BLOCKS:
        mine = keys.setdefault(block, {})
        for i, row in enumerate(doc[block]):
            where = f"{block}[{i}]"
            key = (row["corpus"], row["query_class"], row["rule"])
            if key in mine:
                c.fail(source, where, f"corpus {key[0]!r}, class {key[1]!r}, rule {key[2]!r} "
                                      "appears twice")
            mine[key] = row
            members = _members(doc, row)
            unanswered = sum(1 for a in members if a["answered"] == 0)
            if block == "rows" and row["unanswered"] != unanswered:
                c.fail(source, f"{where}.unanswered", f"{row['unanswered']} but {unanswered} "
                                                      "of its answers were declined")
    rows, floor = keys["rows"], keys["floor_rows"]
    if set(rows) != set(floor):
        odd = sorted(set(rows) ^ set(floor))
        c.fail(source, "floor_rows", f"the floor must hold exactly the rows' corpus x class x "
                                     f"rule; differs at {odd[:5]}")
    for i, row in enumerate(doc["floor_rows"]):
        where = f"floor_rows[{i}]"
        twin = rows[(row["corpus"], row["query_class"], row["rule"])]
        if row["n"] != twin["n"] or row["tier"] != twin["tier"]:
            c.fail(source, f"{where}.n", f"n {row['n']} / tier {row['tier']} differ from the "
                                         f"row it floors (n {twin['n']}, tier {twin['tier']})")
        if row["unanswered"] != row["n"]:
            c.fail(source, f"{where}.unanswered", f"{row['unanswered']} of {row['n']}: the none "
                                                  "answerer declines every query")
        for m in MEASURES:
            if row[m] != 0:
                c.fail(source, f"{where}.{m}", f"{row[m]!r}: the none answerer scores 0")


def validate_answers(doc, source) -> None:
    """Refuse a malformed or inconsistent answers document, naming the field (a ValueError)."""
    from harness.studies.answers.document import validate_document

    _shapes(doc, source)
    validate_document(doc, source)  # FormatError is a ValueError naming source and field
    _consistency(doc, source)


def check_against_run(doc, source, metrics: Mapping) -> None:
    """An answers.json beside a metrics.json: a corpus both name must carry the same tier
    (and checksum) in both, or the directory contradicts itself."""
    declared = {x["name"]: x for x in metrics["corpora"]}
    for i, corpus in enumerate(doc["corpora"]):
        run = declared.get(corpus["name"])
        if run is None:
            continue
        if corpus["tier"] != run["tier"]:
            c.fail(source, f"corpora[{i}].tier", f"tier {corpus['tier']!r} disagrees with "
                   f"metrics.json, where corpus {corpus['name']!r} is tier {run['tier']}")
        if corpus.get("sha256") and run.get("sha256") and corpus["sha256"] != run["sha256"]:
            c.fail(source, f"corpora[{i}].sha256", f"corpus {corpus['name']!r} was answered on "
                   f"content {str(corpus['sha256'])[:12]} but retrieved on "
                   f"{str(run['sha256'])[:12]}")


# --------------------------------------------------------------------------- storing


def _json(value) -> str | None:
    return None if value is None else canonical_line(value)


def _text(value) -> str | None:
    return value if value is None or isinstance(value, str) else canonical_line(value)


def _measures(row: Mapping) -> dict:
    return {column: float(row[m]) for m, column in COLUMNS.items()}


def store_answers(conn, doc, run_id: str | None = None) -> int:
    """Insert one answers document's rows (nothing when its id is already stored; a stored
    standalone document is then linked to ``run_id``).  Returns the rows inserted."""
    doc = c.canonical(doc)
    doc_id = c.content_id(doc)
    created = None
    if run_id is not None:
        found = conn.query_one("SELECT created_at FROM runs WHERE run_id = ?", [run_id])
        created = found[0] if found else None
    if c.already_stored(conn, "answer_runs", doc_id):
        if run_id is not None:
            conn.execute("UPDATE answer_runs SET run_id = ?, created_at = ? "
                         "WHERE document_id = ? AND run_id IS NULL", [run_id, created, doc_id])
        return 0
    answerer, policy = doc["answerer"], doc["policy"]
    inserted = c.insert(conn, "answer_runs", RUN_COLUMNS, [{
        "document_id": doc_id, "run_id": run_id, "corpus": doc["corpus"], "tier": doc["tier"],
        "answerer": answerer["name"], "is_production_path": answerer["is_production_path"],
        "answerer_info": _json(answerer), "count_tolerance": policy["count_tolerance"],
        "set_credit": policy["set_credit"], "policy": _json(policy),
        "scoring": _json(doc["scoring"]), "document_version": doc["schema_version"],
        "store_schema_version": (doc.get("store") or {}).get("schema_version"),
        "created_at": created, "ingested_at": c.now()}])
    inserted += c.insert(conn, "answer_corpora", CORPUS_COLUMNS, [{
        "document_id": doc_id, "corpus": x["name"], "tier": x["tier"],
        "version": _text(x.get("version")), "licence": _text(x.get("licence")),
        "evidence": _text(x.get("evidence")), "sha256": _text(x.get("sha256")),
        "files": x.get("files"), "turns": x.get("turns"),
        "aggregation_queries": x.get("aggregation_queries"), "declared": _json(x)}
        for x in doc["corpora"]])
    inserted += c.insert(conn, "answer_rows", ROW_COLUMNS, [{
        "document_id": doc_id, "corpus": r["corpus"], "tier": r["tier"],
        "query_class": r["query_class"], "rule": r["rule"], "is_floor": block == "floor_rows",
        "n": r["n"], "unanswered": r["unanswered"], **_measures(r)}
        for block in BLOCKS for r in doc[block]])
    inserted += c.insert(conn, "answers", ANSWER_COLUMNS, [{
        "document_id": doc_id, "corpus": a["corpus"], "tier": a["tier"],
        "query_class": a["query_class"], "query_id": a["query_id"], "rule": a["rule"],
        "question": a["question"], "answer_kind": a["answer_kind"], "gold": _json(a["gold"]),
        "predicted": _json(a["predicted"]), **_measures(a), "mechanism": a["mechanism"],
        "notes": _json(a["notes"])} for a in doc["answers"]])
    return inserted
