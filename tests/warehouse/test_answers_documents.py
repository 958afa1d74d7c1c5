"""Migration 005: answers documents (kind ``answers``, and ``answers.json`` in a results
directory) in the warehouse, their publishable views and their queries.

Documents are built here by hand: per-query answers with hand-scored EM / partial, and rows
that are their plain means computed in :func:`answers_document` (not by the harness's
scoring code).  Expected values in the tests are written as arithmetic.

``pub`` is tier A (MIT), ``secretcorpus`` tier B (CC-BY-NC-4.0).  The ``reference`` document
answers six queries over both:

===========  =================  ====================  ====================  ==  =========
query        rule               gold                  predicted             EM  partial
===========  =================  ====================  ====================  ==  =========
pub p1       R3-count-files     3                     3                     1   1
pub p2       R4-list-files      f1 f2 f3 f4           f1 f2 f3              0   6/7 (F1)
pub p3       R6-speaker-top     Ana Ruiz, 4           ana  ruiz, 3          0   1/2
pub p4       R5-count-events    2                     declined              0   0
secret s1    R3-count-files     2                     2                     1   1
secret s2    R7-temporal-count  5                     4                     0   0
===========  =================  ====================  ====================  ==  =========

p2: precision 3/3, recall 3/4, F1 = 2 * 1 * 3/4 / (1 + 3/4) = 6/7.  p3: the name is right
(casefolded, whitespace collapsed), the session count wrong: one field of two.
"""

from __future__ import annotations

import copy
import json

import pytest

from harness.core.canonical import canonical_json
from tests.warehouse.answers_builders import (REFERENCE_ANSWERS,
                                              answer, answers_document,
                                              none_document, reference_document)
from tests.warehouse.builders import build_results
from warehouse import connect, ingest_document, ingest_results, queries
from warehouse.errors import IngestRefused, UnknownRun

def _count(db, table: str) -> int:
    with connect(db, read_only=True) as conn:
        return conn.query_one(f"SELECT count(*) FROM {table}")[0]


TABLES = ("documents", "answer_runs", "answer_corpora", "answer_rows", "answers")


def _counts(db) -> dict[str, int]:
    return {t: _count(db, t) for t in TABLES}


def _row(table, corpus, rule="all", answerer="reference"):
    hit = table[(table.corpus == corpus) & (table.rule == rule) & (table.answerer == answerer)]
    assert len(hit) == 1, hit
    return hit.iloc[0]


# --------------------------------------------------------------------------- ingest


def test_an_answers_document_is_stored_with_its_floor_and_answers(db, tmp_path):
    path = tmp_path / "answers.json"
    path.write_text(canonical_json(reference_document()), encoding="utf-8")
    report = ingest_document(path, db)
    assert report.inserted and report.kind == "answers"
    # rows: pub all + 4 rules, secretcorpus all + 2 rules, pooled all + 5 rules; the floor
    # doubles them
    assert _counts(db) == {"documents": 1, "answer_runs": 1, "answer_corpora": 2,
                           "answer_rows": 2 * ((1 + 4) + (1 + 2) + (1 + 5)), "answers": 6}
    with connect(db, read_only=True) as conn:
        assert conn.query_one("SELECT tier, corpus FROM documents") == ("B", "pub+secretcorpus")

    table = queries.answer_table("internal", db_path=db)
    pub = _row(table, "pub")
    assert (pub.n, pub.unanswered, pub.tier) == (4, 1, "A")
    assert pub.em == pytest.approx((1 + 0 + 0 + 0) / 4)
    assert pub.partial == pytest.approx((1 + 6 / 7 + 1 / 2 + 0) / 4)
    assert pub.answered_share == pytest.approx(3 / 4)
    # the none floor beside it: the same four gold queries, none answered
    assert (pub.floor_n, pub.floor_unanswered) == (4, 4)
    assert (pub.floor_em, pub.floor_partial, pub.floor_answered_share) == (0.0, 0.0, 0.0)
    assert _row(table, "pub", "R4-list-files").partial == pytest.approx(6 / 7)
    assert _row(table, "pub", "R6-speaker-top").partial == pytest.approx(0.5)
    pooled = _row(table, "pub+secretcorpus")
    assert (pooled.n, pooled.unanswered, pooled.tier) == (6, 1, "B")
    assert pooled.em == pytest.approx(2 / 6)
    assert pooled.partial == pytest.approx((1 + 6 / 7 + 1 / 2 + 0 + 1 + 0) / 6)
    assert pooled.answered_share == pytest.approx(5 / 6)
    assert (pub.answerer, bool(pub.is_production_path), pub.count_tolerance,
            pub.set_credit) == ("reference", False, 0, "f1")
    # rule 'all' first within each corpus
    assert list(table[table.corpus == "pub"].rule) == [
        "all", "R3-count-files", "R4-list-files", "R5-count-events", "R6-speaker-top"]

    details = queries.answer_details(report.run_id[:12], "internal", db_path=db)
    assert list(details.query_id) == ["p1", "p2", "p3", "p4", "s1", "s2"]
    p2, p3, p4 = (details.set_index("query_id").loc[q] for q in ("p2", "p3", "p4"))
    assert json.loads(p2.gold) == ["f1", "f2", "f3", "f4"]
    assert json.loads(p2.predicted) == ["f1", "f2", "f3"]
    assert json.loads(p3.predicted) == {"count": 3, "speaker": "ana  ruiz"}
    assert json.loads(p3.notes) == {"tie": False}
    assert details.predicted.isna().tolist() == [False, False, False, True, False, False]
    assert p4.answered_share == 0.0
    assert p4.mechanism == "declined: no frame matched"

    runs = queries.answer_runs("internal", db_path=db)
    assert list(runs.document_id) == [report.run_id]
    assert runs.iloc[0].corpora == "pub+secretcorpus" and runs.iloc[0].tier == "B"
    assert json.loads(runs.iloc[0].policy)["set_credit"] == "f1"


def test_the_same_document_twice_is_a_no_op(db, tmp_path):
    first = ingest_document(reference_document(), db)
    before = _counts(db)
    again = ingest_document(reference_document(), db)
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(reference_document(), indent=2), encoding="utf-8")
    from_file = ingest_document(path, db)  # other whitespace and key order: same content
    assert first.inserted and not again.inserted and not from_file.inserted
    assert first.run_id == again.run_id == from_file.run_id
    assert "already" in again.message
    assert _counts(db) == before


def _mutate(doc, change):
    doc = copy.deepcopy(doc)
    change(doc)
    return doc


def _set(path, value):
    def change(doc):
        *parents, last = path
        target = doc
        for key in parents:
            target = target[key]
        target[last] = value
    return change


MALFORMED = {
    # a row that is not the mean of its answers (EM 1/4 claimed as 0.5)
    "rows[0].EM": _set(("rows", 0, "EM"), 0.5),
    "rows[0].unanswered": _set(("rows", 0, "unanswered"), 0),
    "rows[0].n": _set(("rows", 0, "n"), "four"),
    "rows": _set(("rows",), "not a list"),
    "answers[1].EM": _set(("answers", 1, "EM"), "high"),
    "answers[0]": _set(("answers", 0), 7),
    "answers[3].answered": _set(("answers", 3, "answered"), 1.0),
    "answers[1].answer_kind": _set(("answers", 1, "answer_kind"), "ranking"),
    # the floor is the none answerer's: nothing answered, nothing right
    "floor_rows[0].EM": _set(("floor_rows", 0, "EM"), 0.25),
    "floor_rows[2].unanswered": _set(("floor_rows", 2, "unanswered"), 0),
    "floor_rows": lambda doc: doc["floor_rows"].pop(),
    "policy.set_credit": lambda doc: doc["policy"].pop("set_credit"),
    "answerer.is_production_path": _set(("answerer", "is_production_path"), "no"),
    "corpus": _set(("corpus",), "pub"),
    "tier": _set(("tier",), "A"),
    "answers[4].tier": _set(("answers", 4, "tier"), "A"),
    "answers[1].query_id": _set(("answers", 1, "query_id"), "p1"),
    "kind": _set(("kind",), "answer"),
}


@pytest.mark.parametrize("field", sorted(MALFORMED))
def test_a_malformed_document_is_refused_naming_the_field_with_nothing_written(db, field):
    ingest_document(none_document(), db)
    before = _counts(db)
    doc = _mutate(reference_document(), MALFORMED[field])
    with pytest.raises(IngestRefused) as refused:
        ingest_document(doc, db)
    message = str(refused.value)
    assert f"field '{field}'" in message, message
    assert _counts(db) == before


def test_a_refused_document_does_not_create_a_warehouse(tmp_path):
    db = tmp_path / "fresh.duckdb"
    with pytest.raises(IngestRefused, match=r"field 'rows\[0\]\.EM'"):
        ingest_document(_mutate(reference_document(), MALFORMED["rows[0].EM"]), db)
    assert not db.exists()


# --------------------------------------------------------------------------- tiers


def test_tier_b_answers_never_appear_in_the_publishable_view(db):
    ingest_document(reference_document(), db)
    ingest_document(answers_document([a for a in REFERENCE_ANSWERS
                                      if a["corpus"] == "secretcorpus"], answerer="product",
                                     production=True), db)
    internal = queries.answer_table("internal", db_path=db)
    assert set(internal.corpus) == {"pub", "secretcorpus", "pub+secretcorpus"}
    public = queries.answer_table("publishable", db_path=db)
    # only pub's rows of the mixed document; the pooled row holds a tier-B corpus, the
    # product document is tier B throughout
    assert set(public.corpus) == {"pub"} and set(public.tier) == {"A"}
    assert set(public.answerer) == {"reference"}
    assert "secretcorpus" not in public.to_csv()
    runs = queries.answer_runs("publishable", db_path=db)
    assert list(runs.corpora) == ["pub"] and list(runs.tier) == ["A"]
    assert "secretcorpus" not in runs.to_csv()
    doc_id = runs.iloc[0].document_id
    assert list(queries.answer_details(doc_id, "publishable", db_path=db).query_id) == [
        "p1", "p2", "p3", "p4"]
    assert len(queries.answer_details(doc_id, "internal", db_path=db)) == 6
    with connect(db, read_only=True) as conn:
        for view in ("answer_runs_publishable", "answer_corpora_publishable",
                     "answer_rows_publishable", "answers_publishable"):
            assert {t for (t,) in conn.query_all(f"SELECT DISTINCT tier FROM {view}")} <= {"A"}
            names = {c for (c,) in conn.query_all(f"SELECT DISTINCT corpus FROM {view}")}
            assert not any("secretcorpus" in name for name in names), (view, names)
        # the whole mixed run is not publishable as a run (one of its corpora is tier B)
        assert conn.query_one("SELECT count(*) FROM answer_runs_publishable")[0] == 0


def test_the_publishable_view_fails_closed_on_inconsistent_rows(db):
    ingest_document(none_document(), db)
    assert len(queries.answer_table("publishable", db_path=db)) == 1 + 4
    with connect(db, read_only=False) as conn:
        conn.execute("UPDATE answer_corpora SET tier = 'B'")
    assert queries.answer_table("publishable", db_path=db).empty
    assert queries.answer_runs("publishable", db_path=db).empty
    assert len(queries.answer_table("internal", db_path=db)) == 1 + 4


def test_answer_columns_share_no_name_with_retrieval(db):
    """No column of the answer tables is named after a retrieval measure, and the answer
    measures' columns appear in no retrieval table (an answer score cannot be misread)."""
    from harness.core.measures import MEASURES as RETRIEVAL_MEASURES
    from warehouse import migrate

    migrate(db)
    with connect(db, read_only=True) as conn:
        columns = conn.query_all("SELECT table_name, column_name FROM information_schema.columns "
                                 "WHERE table_schema = 'main'")
    answer_tables = {"answer_runs", "answer_corpora", "answer_rows", "answers"}
    answer_columns = {c.lower() for t, c in columns if t in answer_tables}
    retrieval_columns = {c.lower() for t, c in columns
                         if not t.startswith("answer") and t not in ("schema_migrations",)}
    assert {"em", "partial", "answered_share"} <= answer_columns
    assert not {"em", "partial", "answered_share"} & retrieval_columns
    assert not answer_columns & {m.lower() for m in RETRIEVAL_MEASURES}


# --------------------------------------------------------------------------- queries


def test_latest_keeps_the_newest_run_per_corpus_answerer_and_policy(db):
    mixed = ingest_document(reference_document(), db).run_id
    # a rerun over pub alone that now gets p2 right (same answerer, same policy)
    fixed = [dict(a) for a in REFERENCE_ANSWERS if a["corpus"] == "pub"]
    fixed[1] = answer("pub", "p2", "R4-list-files", ["f1", "f2", "f3", "f4"],
                      ["f1", "f2", "f3", "f4"], 1.0, 1.0)
    rerun = ingest_document(answers_document(fixed), db).run_id
    # the same answers under --answer-set-credit exact: p2's partial collapses onto its EM
    collapsed = [dict(a) for a in REFERENCE_ANSWERS]
    collapsed[1]["partial"] = 0.0
    exact = ingest_document(answers_document(collapsed, set_credit="exact"), db)
    assert exact.inserted

    latest = queries.answer_table("internal", corpora=["pub"], db_path=db)
    by_policy = {s: latest[latest.set_credit == s] for s in ("f1", "exact")}
    assert set(by_policy["f1"].document_id) == {rerun}
    assert _row(by_policy["f1"], "pub").em == pytest.approx(2 / 4)
    assert set(by_policy["exact"].document_id) == {exact.run_id}
    # the pooled row exists only in the mixed documents: the newest of those per policy
    pooled = queries.answer_table("internal", corpora=["pub+secretcorpus"], db_path=db)
    assert set(pooled.document_id) == {mixed, exact.run_id}
    every = queries.answer_table("internal", corpora=["pub"], latest=False, db_path=db)
    assert set(every.document_id) == {mixed, rerun, exact.run_id}
    assert queries.answer_table("internal", answerers=["none"], db_path=db).empty
    hostile = ["pub'); DROP TABLE answers; --"]
    assert queries.answer_table("internal", corpora=hostile, db_path=db).empty
    assert _count(db, "answers") == 6 + 4 + 6


def test_answer_details_needs_a_known_document(db):
    ingest_document(none_document(), db)
    with pytest.raises(UnknownRun, match="no answers document 'abc'"):
        queries.answer_details("abc", "internal", db_path=db)
    with pytest.raises(UnknownRun, match="no answers document"):
        queries.answer_details("f" * 64, "internal", db_path=db)
    with pytest.raises(ValueError, match="unknown view 'public'"):
        queries.answer_details("abc", "public", db_path=db)


# --------------------------------------------------------------------------- results directory


def _run_with_answers(out, doc, tier="A"):
    values = {("pub", f"p{i}"): {"nDCG@10": i / 10} for i in range(1, 5)}
    licence = "MIT" if tier == "A" else "CC-BY-NC-4.0"
    return build_results(out, values, corpora={"pub": (tier, licence)}, control_name="arm",
                         extra_files={"answers.json": canonical_json(doc)})


def test_answers_json_beside_metrics_json_is_stored_with_its_run(db, tmp_path):
    pub_only = answers_document([a for a in REFERENCE_ANSWERS if a["corpus"] == "pub"])
    report = ingest_results(_run_with_answers(tmp_path / "r", pub_only), db)
    with connect(db, read_only=True) as conn:
        linked = conn.query_all("SELECT a.run_id, a.created_at = r.created_at FROM answer_runs "
                                "AS a JOIN runs AS r USING (run_id)")
        stored_by = conn.query_one("SELECT stored_by FROM run_files WHERE name = 'answers.json'")
    assert linked == [(report.run_id, True)]
    assert stored_by == ("claim kind answers",)
    assert _row(queries.answer_table("publishable", db_path=db), "pub").em == pytest.approx(1 / 4)
    before = _counts(db)
    assert not ingest_results(tmp_path / "r", db).inserted
    # the same file as a standalone document: its rows are already there
    assert ingest_document(tmp_path / "r" / "answers.json", db).inserted  # a documents row
    assert {k: v for k, v in _counts(db).items() if k != "documents"} == {
        k: v for k, v in before.items() if k != "documents"}


def test_a_standalone_answers_document_is_linked_to_its_run_later(db, tmp_path):
    pub_only = answers_document([a for a in REFERENCE_ANSWERS if a["corpus"] == "pub"])
    ingest_document(pub_only, db)
    with connect(db, read_only=True) as conn:
        assert conn.query_all("SELECT run_id FROM answer_runs") == [(None,)]
    run = ingest_results(_run_with_answers(tmp_path / "r", pub_only), db)
    with connect(db, read_only=True) as conn:
        assert conn.query_all("SELECT run_id FROM answer_runs") == [(run.run_id,)]
    assert _count(db, "answers") == 4


def test_answers_json_contradicting_its_run_is_refused(db, tmp_path):
    pub_only = answers_document([a for a in REFERENCE_ANSWERS if a["corpus"] == "pub"])
    # metrics.json says pub is tier B; the answers say A: the directory contradicts itself
    with pytest.raises(IngestRefused, match=r"answers\.json: field 'corpora\[0\]\.tier'"):
        ingest_results(_run_with_answers(tmp_path / "b", pub_only, tier="B"), db)
    bad = _mutate(pub_only, MALFORMED["rows[0].EM"])
    with pytest.raises(IngestRefused, match=r"field 'rows\[0\]\.EM'"):
        ingest_results(_run_with_answers(tmp_path / "bad", bad), db)
    assert not db.exists()
