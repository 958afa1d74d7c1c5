"""The "Answers" page through ``streamlit.testing.v1.AppTest``: the fixture warehouse plus
the hand-made answers documents of ``tests/warehouse/test_answers_documents.py`` (a
``reference`` run over pub (A) and secretcorpus (B), and a ``none`` run over pub).
Expected cells are worked out by hand from those documents' per-query values."""

from __future__ import annotations

import shutil

import pytest

import dashboard as pages
from dashboard import common
from tests.warehouse.answers_builders import none_document, reference_document

PAGE = ("answers.py", "Answers", ":material/rule:")
LOADERS = frozenset({"answer_runs", "answer_table", "answer_details"})


@pytest.fixture(scope="module")
def answers_db(fixture_warehouse, tmp_path_factory):
    from warehouse import ingest_document

    db = tmp_path_factory.mktemp("answers-page") / "answers.duckdb"
    shutil.copy(fixture_warehouse["db"], db)
    ids = {"reference": ingest_document(reference_document(), db).run_id,
           "none": ingest_document(none_document(), db).run_id}
    return db, ids


@pytest.fixture
def page_app(app, monkeypatch):
    """``app`` with the page in the navigation and its loaders allowed (until both are
    registered in ``pages/__init__.py`` and ``dashboard/common.py``)."""
    if PAGE[0] not in [file for file, _, _ in pages.PAGES]:
        monkeypatch.setattr(pages, "PAGES", [*pages.PAGES, PAGE])
    monkeypatch.setattr(common, "LOADERS", common.LOADERS | LOADERS)

    def open_page(db, view: str = "publishable"):
        at = app(db).run()
        at.radio(key="tier_view").set_value(view).run()
        at.switch_page("pages/answers.py").run()
        assert not at.exception, at.exception
        assert not at.error, [e.value for e in at.error]
        return at

    return open_page


def tables(at) -> list:
    return [frame.value for frame in at.dataframe]


def rule_tables(at) -> list:
    return [t for t in tables(at) if "floor EM" in t.columns]


def details(at):
    (table,) = [t for t in tables(at) if "predicted" in t.columns]
    return table


def text(at) -> str:
    return "\n".join(t.to_csv() for t in tables(at)) + "\n".join(
        m.value for m in at.markdown) + "\n".join(s.value for s in at.subheader)


def test_the_answer_loaders_are_registered():
    """The page loads through ``dashboard.common.load``, which only runs allow-listed queries."""
    assert LOADERS <= common.LOADERS, sorted(LOADERS - common.LOADERS)


@pytest.mark.parametrize("view", ["publishable", "internal"])
def test_the_page_renders_per_corpus_and_answerer_with_the_floor(page_app, answers_db, view):
    at = page_app(answers_db[0], view)
    assert [t.value for t in at.title] == ["Answers"]
    headings = [s.value for s in at.subheader]
    if view == "publishable":
        assert headings == ["pub", "Per query"]
        assert "secretcorpus" not in text(at)
    else:
        assert headings == ["pub", "secretcorpus", "pub+secretcorpus", "Per query"]
    # pub: the none run and the reference run, each a table per rule with the floor beside
    pub = rule_tables(at)[:2]
    (reference,) = [t for t in pub if (t["answered"] != "0.0000").any()]
    (none,) = [t for t in pub if (t["answered"] == "0.0000").all()]
    first = reference.iloc[0]
    assert (first["rule"], first["n"], first["unanswered"]) == ("all", 4, 1)
    assert first["EM"] == f"{(1 + 0 + 0 + 0) / 4:.4f}" == "0.2500"
    assert first["partial"] == f"{(1 + 6 / 7 + 1 / 2 + 0) / 4:.4f}"
    assert first["answered"] == f"{3 / 4:.4f}"
    assert (first["floor EM"], first["floor partial"], first["floor answered"]) == (
        "0.0000", "0.0000", "0.0000")
    r4 = reference.set_index("rule").loc["R4-list-files"]
    assert (r4["EM"], r4["partial"]) == ("0.0000", f"{6 / 7:.4f}")
    assert list(reference["rule"]) == ["all", "R3-count-files", "R4-list-files",
                                       "R5-count-events", "R6-speaker-top"]
    assert (none["EM"] == "0.0000").all() and (none["unanswered"] == none["n"]).all()
    # the policy and the production-path flag are stated above each table
    lines = [m.value for m in at.markdown if "answerer" in m.value]
    assert any(line.startswith("**reference** answerer · not the production path") and
               "count tolerance 0 (counts exact)" in line and "set credit `f1`" in line
               for line in lines), lines
    # answers are not retrieval measures, and the page says so
    assert any("not comparable with nDCG" in i.value for i in at.info)
    badges = [m.value for m in at.markdown if "-badge[" in m.value]
    assert badges and all(f"{view} view" in b for b in badges), badges


def test_switching_the_tier_view_changes_the_rows(page_app, answers_db):
    at = page_app(answers_db[0], "publishable")
    public = text(at)
    at.radio(key="tier_view").set_value("internal").run()
    internal = text(at)
    assert "secretcorpus" not in public and "secretcorpus" in internal
    pooled = [t for t in rule_tables(at) if len(t) == 1 + 5][0].iloc[0]
    assert (pooled["n"], pooled["EM"], pooled["answered"]) == (6, f"{2 / 6:.4f}", f"{5 / 6:.4f}")


def test_the_drill_down_shows_question_gold_predicted_and_mechanism(page_app, answers_db):
    db, ids = answers_db
    at = page_app(db, "publishable")
    # the none run is newer, but an answerer's run is offered first
    assert at.selectbox(key="answers_document_publishable").value == ids["reference"]
    at.selectbox(key="answers_document_publishable").set_value(ids["none"]).run()
    assert details(at)["predicted"].tolist() == ["(declined)"] * 4
    at.selectbox(key="answers_document_publishable").set_value(ids["reference"]).run()
    table = details(at).set_index("query")
    # the tier-B corpus's queries are withheld in the publishable view
    assert list(table.index) == ["p1", "p2", "p3", "p4"]
    assert (table.loc["p2", "gold"], table.loc["p2", "predicted"]) == ("f1, f2, f3, f4",
                                                                      "f1, f2, f3")
    assert table.loc["p3", "gold"] == "Ana Ruiz (4 sessions)"
    assert table.loc["p3", "predicted"] == "ana  ruiz (3 sessions)"
    assert table.loc["p4", "predicted"] == "(declined)"
    assert table.loc["p4", "mechanism"] == "declined: no frame matched"
    assert table.loc["p1", "question"] == "Question p1 (R3-count-files)?"
    assert table.loc["p3", "notes"] == "tie: false"
    assert (table.loc["p2", "EM"], table.loc["p2", "partial"]) == ("0.0000", f"{6 / 7:.4f}")
    at.checkbox(key="answers_misses_publishable").check().run()
    assert list(details(at)["query"]) == ["p2", "p3", "p4"]
    at.radio(key="tier_view").set_value("internal").run()
    at.selectbox(key="answers_document_internal").set_value(ids["reference"]).run()
    assert list(details(at)["query"]) == ["p1", "p2", "p3", "p4", "s1", "s2"]


def test_a_filter_narrows_the_tables(page_app, answers_db):
    at = page_app(answers_db[0], "internal")
    at.multiselect(key="answers_answerers_internal").set_value(["none"]).run()
    assert [s.value for s in at.subheader] == ["pub", "Per query"]
    assert len(rule_tables(at)) == 1
    at.multiselect(key="answers_answerers_internal").set_value([]).run()
    assert any("Choose at least one" in i.value for i in at.info)


def test_guidance_without_answers(page_app, tmp_path):
    from tests.warehouse.builders import simple_run
    from warehouse import ingest_document, ingest_results, migrate

    # runs but no answers: how to make some
    runs_only = tmp_path / "runs-only.duckdb"
    ingest_results(simple_run(tmp_path / "run"), runs_only)
    at = page_app(runs_only, "internal")
    assert any("No answers run is stored yet" in i.value for i in at.info)
    assert any("harness answer" in c.value for c in at.code)
    # an empty warehouse: the dashboard's guidance
    empty = tmp_path / "empty.duckdb"
    migrate(empty)
    at = page_app(empty, "internal")
    assert any("holds no runs yet" in i.value for i in at.info)
    assert any("make demo" in c.value for c in at.code)
    # no warehouse at all
    at = page_app(tmp_path / "absent.duckdb", "publishable")
    assert any("no warehouse at" in i.value for i in at.info)
    assert not (tmp_path / "absent.duckdb").exists()
    # answers of a tier-B corpus only: nothing publishable, and the page says where to look
    secret = tmp_path / "secret.duckdb"
    migrate(secret)
    ingest_document(none_document(corpora=("secretcorpus",)), secret)
    at = page_app(secret, "publishable")
    assert any("No answer row is visible in the publishable view" in i.value for i in at.info)
    assert not at.dataframe
    at.radio(key="tier_view").set_value("internal").run()
    assert [s.value for s in at.subheader] == ["secretcorpus", "Per query"]
