"""Answers documents the warehouse and dashboard tests build (a reference run and its
``none`` floor, over a tier-A and a tier-B corpus)."""

from __future__ import annotations

from harness.studies.answers.grading import AnswerPolicy

CORPORA = {"pub": ("A", "MIT"), "secretcorpus": ("B", "CC-BY-NC-4.0")}
SHA256 = "0" * 64  # what tests.warehouse.builders declares for every corpus
CLASS = "aggregation"
KINDS = {"R3-count-files": "count", "R4-list-files": "file_set", "R5-count-events": "count",
         "R6-speaker-top": "speaker", "R7-temporal-count": "count"}
MEASURES = ("EM", "partial", "answered")


def answer(corpus, query_id, rule, gold, predicted, em, partial, *, mechanism=None,
           notes=None) -> dict:
    return {"corpus": corpus, "tier": CORPORA[corpus][0], "query_class": CLASS,
            "query_id": query_id, "rule": rule, "question": f"Question {query_id} ({rule})?",
            "answer_kind": KINDS[rule], "gold": gold, "predicted": predicted, "EM": em,
            "partial": partial, "answered": 0.0 if predicted is None else 1.0,
            "mechanism": mechanism or ("declined: no frame matched" if predicted is None
                                       else f"test: hand-made {rule}"),
            "notes": notes or {}}


SPEAKER_GOLD = {"count": 4, "speaker": "Ana Ruiz"}
REFERENCE_ANSWERS = [
    answer("pub", "p1", "R3-count-files", 3, 3, 1.0, 1.0),
    answer("pub", "p2", "R4-list-files", ["f1", "f2", "f3", "f4"], ["f1", "f2", "f3"], 0.0,
           2 * 1 * (3 / 4) / (1 + 3 / 4)),
    answer("pub", "p3", "R6-speaker-top", SPEAKER_GOLD, {"count": 3, "speaker": "ana  ruiz"},
           0.0, 1 / 2, notes={"tie": False}),
    answer("pub", "p4", "R5-count-events", 2, None, 0.0, 0.0),
    answer("secretcorpus", "s1", "R3-count-files", 2, 2, 1.0, 1.0),
    answer("secretcorpus", "s2", "R7-temporal-count", 5, 4, 0.0, 0.0),
]


def declined_all(answers: list[dict]) -> list[dict]:
    """The same gold queries as the ``none`` answerer leaves them."""
    return [answer(a["corpus"], a["query_id"], a["rule"], a["gold"], None, 0.0, 0.0,
                   mechanism="declined: the none answerer answers nothing") for a in answers]


def _rows(answers: list[dict], floor: bool) -> list[dict]:
    """Per corpus (and pooled, over several) x class x (all + each rule): plain means."""
    names = sorted({a["corpus"] for a in answers})
    groups = {name: [a for a in answers if a["corpus"] == name] for name in names}
    if len(names) > 1:
        groups["+".join(names)] = list(answers)
    rows = []
    for corpus in sorted(groups):
        members = groups[corpus]
        tier = max(CORPORA[c][0] for c in corpus.split("+"))
        for rule in ["all", *sorted({a["rule"] for a in members})]:
            part = [a for a in members if rule == "all" or a["rule"] == rule]
            n = len(part)
            row = {"corpus": corpus, "tier": tier, "query_class": CLASS, "rule": rule, "n": n,
                   "unanswered": n if floor else sum(1 for a in part if a["answered"] == 0),
                   "scored_on": "answer"}
            row.update({m: 0.0 if floor else sum(a[m] for a in part) / n for m in MEASURES})
            rows.append(row)
    return rows


def answers_document(answers: list[dict], *, answerer: str = "reference",
                     production: bool = False, count_tolerance: int = 0,
                     set_credit: str = "f1") -> dict:
    names = sorted({a["corpus"] for a in answers})
    return {
        "kind": "answers", "schema_version": 1, "corpus": "+".join(names),
        "tier": max(CORPORA[n][0] for n in names),
        "corpora": [{"name": n, "version": "1", "licence": CORPORA[n][1], "tier": CORPORA[n][0],
                     "sha256": SHA256, "evidence": f"licence {CORPORA[n][1]} declared (test fixture)",
                     "files": 4, "turns": 40,
                     "aggregation_queries": sum(1 for a in answers if a["corpus"] == n)}
                    for n in names],
        "answerer": {"name": answerer, "is_production_path": production,
                     "description": f"{answerer} (test)", "row_limit": 100, "model": None},
        "policy": AnswerPolicy(count_tolerance, set_credit).to_dict(),
        "scoring": {"engine": "test", "measures": {m: m for m in MEASURES},
                    "mean": "over the gold query set", "scored_on": "answer"},
        "scope": "test", "store": {"schema_version": 1},
        "rows": _rows(answers, floor=False), "floor_rows": _rows(answers, floor=True),
        "answers": answers,
    }


def reference_document() -> dict:
    return answers_document(REFERENCE_ANSWERS)


def none_document(corpora=("pub",)) -> dict:
    return answers_document(declined_all([a for a in REFERENCE_ANSWERS if a["corpus"] in corpora]),
                            answerer="none")
