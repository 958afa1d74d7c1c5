"""The answerers on the synthetic corpus (every rule) and on hand-built corpora (ties,
undated files, truncation, non-ASCII phrases); the reference and product share nothing."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re

import pytest

from harness.studies.answers import product, reference
from harness.studies.answers.answer import TruncatedResult
from harness.studies.answers.answerers import ANSWERERS, make_answerer
from harness.studies.answers.pipeline import gold_answers, run_answers
from harness.studies.answers.grading import AnswerPolicy
from ingestion.transcripts import fill, open_store
from tests.ingestion.transcripts.helpers import file, meeting_corpus, turn

RULES = ("R3-count-files", "R4-list-files", "R5-count-events", "R6-speaker-top",
         "R7-temporal-count")


def by_rule(corpus):
    out = {}
    for q in corpus.queries:
        if q.scored_on == "answer":
            out.setdefault(dict(q.extra)["rule"], []).append(q)
    return out


def test_the_corpus_has_every_rule(corpus):
    assert sorted(by_rule(corpus)) == sorted(RULES)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("name", ["reference", "product"])
def test_each_rule_is_answered_exactly(corpus, store, name, rule):
    answerer = make_answerer(name)
    for q in by_rule(corpus)[rule]:
        got = answerer.answer(q.text, store, corpus.name)
        assert got.answered, (q.query_id, got.mechanism)
        expected = q.answer if not isinstance(q.answer, list) else sorted(q.answer)
        assert got.value == expected, (q.query_id, q.text, got)
        assert got.mechanism and "declined" not in got.mechanism


def test_r5_counts_occurrences_not_turns_or_files(corpus, store):
    """Some planted sentences hold the event twice: the gold counts occurrences; counting
    turns or files would come out lower."""
    from ingestion.synthetic.spec import count_phrase, event_phrase

    lower = 0
    for q in by_rule(corpus)["R5-count-events"]:
        event = event_phrase(dict(q.extra)["subject"])
        turns = [t for t in corpus.turns if count_phrase(t.text, event)]
        assert sum(count_phrase(t.text, event) for t in turns) == q.answer
        lower += len(turns) < q.answer
        assert make_answerer("reference").answer(q.text, store, corpus.name).value == q.answer
    assert lower >= 1, "no R5 query has a turn holding its event twice: the test proves nothing"


def test_r7_answers_differ_from_the_unfiltered_count(corpus, store):
    """The month filter matters: the same phrase without the month counts more files."""
    for q in by_rule(corpus)["R7-temporal-count"]:
        phrase = dict(q.extra)["phrase"]
        unfiltered = make_answerer("reference").answer(
            f"How many meetings discussed the {phrase}?", store, corpus.name).value
        assert unfiltered == len(q.gold_files) > q.answer
        got = make_answerer("reference").answer(q.text, store, corpus.name)
        assert got.value == q.answer and got.notes["undated_files_excluded"] == 0


def test_none_declines_everything(corpus):
    none = make_answerer("none")
    assert not none.needs_store
    for q in corpus.queries:
        got = none.answer(q.text, None, corpus.name)
        assert not got.answered and got.mechanism.startswith("declined")


def test_pipeline_reference_scores_one_and_none_scores_zero(corpus, store):
    n = len(gold_answers(corpus))
    ref = run_answers([corpus], make_answerer("reference"), AnswerPolicy(), store, progress=False)
    rows = {r["rule"]: r for r in ref.document["rows"]}
    assert rows["all"]["n"] == n and sorted(rows) == sorted(RULES + ("all",))
    assert all(r["EM"] == 1.0 and r["partial"] == 1.0 and r["answered"] == 1.0
               for r in rows.values())
    none = run_answers([corpus], make_answerer("none"), AnswerPolicy(), None, progress=False)
    (row,) = [r for r in none.document["rows"] if r["rule"] == "all"]
    assert (row["EM"], row["partial"], row["answered"], row["unanswered"]) == (0.0, 0.0, 0.0, n)
    assert none.document["floor_rows"] == none.document["rows"]
    assert ref.document["floor_rows"] == none.document["rows"]


def test_a_differently_worded_question_is_declined_and_scores_zero(corpus, store):
    (q,) = by_rule(corpus)["R3-count-files"][:1]
    phrase = dict(q.extra)["phrase"]
    reworded = dataclasses.replace(q, text=f"How many meetings covered the {phrase}?")
    got = make_answerer("reference").answer(reworded.text, store, corpus.name)
    assert not got.answered and "declined" in got.mechanism
    altered = dataclasses.replace(corpus, queries=(reworded,))
    result = run_answers([altered], make_answerer("reference"), AnswerPolicy(), store,
                         progress=False)
    (answer,) = result.document["answers"]
    assert (answer["EM"], answer["partial"], answer["answered"]) == (0.0, 0.0, 0.0)


def test_the_reference_reads_the_question_not_the_answer_key(corpus, store):
    """Scrambling every query's extra (phrase, team, month ...) changes nothing."""
    scrambled = dataclasses.replace(corpus, queries=tuple(
        dataclasses.replace(q, extra=(("rule", dict(q.extra).get("rule")),
                                      ("phrase", "nothing at all")))
        for q in corpus.queries))
    result = run_answers([scrambled], make_answerer("reference"), AnswerPolicy(), store,
                         progress=False)
    assert [r["EM"] for r in result.document["rows"]] == [1.0] * len(result.document["rows"])


# --------------------------------------------------------------------------- hand-built


@pytest.fixture
def small_store(tmp_path):
    files = [
        file("a1", title="Ops — weekly sync #1", team="Ops", kind="weekly sync",
             recorded_date="2025-03-03", roster=["Zoe Quinn", "adam Brandt", "Cy Holm"]),
        file("a2", title="Ops — weekly sync #2", team="Ops", kind="weekly sync",
             recorded_date="2025-04-07", roster=["Zoe Quinn", "adam Brandt"]),
        file("a3", title="Ops — design review #1", team="Ops", kind="design review",
             recorded_date=None, roster=["Cy Holm"]),
    ]
    turns = [
        turn("a1", 0, "Zoe Quinn", 0, 1, "We talked about the Ärger Lantern audit today."),
        turn("a1", 1, "adam Brandt", 1, 2, "Then we deferred the Pike rollout and we deferred "
                                           "the Pike rollout again."),
        turn("a1", 2, "Cy Holm", 2, 3, "The Ärger Lantern audits are separate."),
        turn("a2", 0, "Zoe Quinn", 0, 1, "the ärger lantern audit, once more"),
        turn("a2", 1, "adam Brandt", 1, 2, "We deferred the Pike rollout."),
        turn("a3", 0, "Cy Holm", 0, 1, "Undated, but the Ärger Lantern audit came up."),
    ]
    s = open_store("sqlite:///" + str(tmp_path / "small.sqlite"))
    fill(s, meeting_corpus(files, turns, name="small"), progress=False)
    yield s
    s.close()


@pytest.mark.parametrize("name", ["reference", "product"])
def test_phrases_with_non_ascii_letters_match_across_case(small_store, name):
    """SQLite's lower() folds ASCII only: a naive SQL filter would miss 'ärger' for 'Ärger'
    and return a count that looks right.  'audits' is not the phrase (word boundary)."""
    q = "How many meetings discussed the Ärger Lantern audit?"
    assert make_answerer(name).answer(q, small_store, "small").value == 3
    listed = make_answerer(name).answer("Which meetings mention the Ärger Lantern audit?",
                                        small_store, "small").value
    assert listed == ["a1", "a2", "a3"]


@pytest.mark.parametrize("name", ["reference", "product"])
def test_undated_files_are_excluded_from_a_month_and_reported(small_store, name):
    got = make_answerer(name).answer(
        "How many meetings in March 2025 discussed the Ärger Lantern audit?", small_store, "small")
    assert got.value == 1  # a1 only: a2 is April, a3 has no date
    assert got.notes["undated_files_excluded"] == 1


@pytest.mark.parametrize("name", ["reference", "product"])
def test_events_are_counted_per_occurrence(small_store, name):
    got = make_answerer(name).answer("How many times in total did we defer the Pike rollout?",
                                     small_store, "small")
    assert got.value == 2 + 1


@pytest.mark.parametrize("name", ["reference", "product"])
def test_a_tie_is_resolved_by_name_and_flagged(small_store, name):
    """Zoe Quinn and adam Brandt both attended 2 weekly syncs; 'adam' sorts first casefolded
    (a plain byte order would put 'Zoe' before 'adam')."""
    got = make_answerer(name).answer("Who attended the most weekly sync sessions for Ops?",
                                     small_store, "small")
    assert got.value == {"speaker": "adam Brandt", "count": 2}
    assert got.notes["tie"] is True and got.notes["tied"] == ["adam Brandt", "Zoe Quinn"]


@pytest.mark.parametrize("name", ["reference", "product"])
def test_a_truncated_read_raises_instead_of_counting(small_store, name):
    answerer = make_answerer(name, row_limit=1)
    with pytest.raises(TruncatedResult, match="limit"):
        answerer.answer("How many meetings discussed the Ärger Lantern audit?", small_store,
                        "small")
    assert make_answerer(name, row_limit=4).answer(
        "How many meetings discussed the Ärger Lantern audit?", small_store, "small").value == 3


def test_the_reference_declines_an_unknown_series(small_store):
    got = make_answerer("reference").answer("Who attended the most standup sessions for Ops?",
                                            small_store, "small")
    assert not got.answered


def test_the_product_parses_generic_frames_the_reference_declines():
    assert reference.parse("How many calls covered the Cedar audit?") is None
    assert product.parse("How many calls covered the Cedar audit?") == {
        "intent": "count_files", "topic": ["Cedar", "audit"], "period": None}
    assert product.parse("which sessions talked about a Cedar audit during Sept 2024")[
        "period"] == (2024, 9)
    assert product.parse("Summarise the Cedar audit.") is None
    # a kind that itself holds a unit word ("planning session") keeps it as a qualifier
    assert product.parse("Who attended the most planning session sessions for Analytics?") == {
        "intent": "top_person", "scope": [["planning", "session"], ["Analytics"]],
        "period": None}


def test_make_answerer_lists_the_registry():
    with pytest.raises(ValueError, match=re.escape(str(sorted(ANSWERERS)))):
        make_answerer("oracle")


# --------------------------------------------------------------------------- independence


def _regex_texts(module) -> set[str]:
    """Every regex the module compiles: module-level patterns, patterns built by its
    functions (reference: from the generator's frames), and literal regex arguments."""
    texts = set()
    for value in vars(module).values():
        if isinstance(value, re.Pattern):
            texts.add(value.pattern)
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
                and node.args and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)):
            texts.add(node.args[0].value)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and (
                "(?" in node.value or "\\" in node.value):
            texts.add(node.value)
    return texts


def test_reference_and_product_share_no_regex_text_or_code():
    ref = _regex_texts(reference) | {p.pattern for p in reference.frame_patterns().values()}
    prod = _regex_texts(product)
    assert ref and prod
    assert not ref & prod, f"shared regex text: {sorted(ref & prod)}"
    # no literal wording of the generator's frames inside any product pattern
    from ingestion.synthetic.spec import FRAMES
    for rule in RULES:
        for literal in re.split(r"\{\w+\}", FRAMES[rule]):
            words = literal.strip(" ?.,")
            if len(words.split()) >= 2:
                assert not any(words.lower() in p.lower() for p in prod), (rule, words)
    imported = {node.module for node in ast.walk(ast.parse(inspect.getsource(product)))
                if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(ast.parse(inspect.getsource(product)))
                 if isinstance(node, ast.Import) for alias in node.names}
    assert not {m for m in imported if m and (m.startswith("ingestion.synthetic")
                                              or m == "harness.studies.answers.reference")}
    ref_funcs = {n.name for n in ast.walk(ast.parse(inspect.getsource(reference)))
                 if isinstance(n, ast.FunctionDef) and not n.name.startswith("__")}
    prod_funcs = {n.name for n in ast.walk(ast.parse(inspect.getsource(product)))
                  if isinstance(n, ast.FunctionDef) and not n.name.startswith("__")}
    assert ref_funcs & prod_funcs <= {"answer", "parse"}
