"""Scoring an answer, not a rank: EM, partial and answered for aggregation queries.

An aggregation query's gold is a count (int), a file set (list of file ids) or a speaker
with a session count (``{"speaker", "count"}``); no ranking measure can say whether such an
answer is right, so these queries have their own engine and their own measure names, none of
which appears in the retrieval tables:

* ``EM``: exact match under :class:`AnswerPolicy` (the gate);
* ``partial``: diagnostic partial credit, never a substitute for EM;
* ``answered``: whether the answerer attempted the query at all.

Means iterate the gold query set, as trec_eval ``-c`` iterates the qrels: a query the
answerer declined or never saw scores 0 on all three and stays in the denominator.  Set F1
is van Rijsbergen's F-measure with beta = 1 (harmonic mean of precision and recall).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Iterable, Sequence

from harness.claims.answers import ANSWER_KINDS, MEASURES, SCORED_ON
from harness.core.tiers import most_restrictive_tier

log = logging.getLogger(__name__)

#: the engine's measures, in table order; none is a retrieval measure name

COUNT, FILE_SET, SPEAKER = ANSWER_KINDS

#: --answer-set-credit values -> what ``partial`` is for a file set
SET_CREDITS: dict[str, str] = {
    "f1": "F1 of the predicted against the gold file set (diagnostic; EM stays set equality)",
    "exact": "collapsed onto EM: no partial credit for a file set",
}

ALL = "all"


@dataclass(frozen=True)
class AnswerPolicy:
    """Every scoring rule as a parameter; :meth:`to_dict` is written into every results file."""

    count_tolerance: int = 0
    set_credit: str = "f1"

    def __post_init__(self):
        tol = self.count_tolerance
        if isinstance(tol, bool) or not isinstance(tol, int) or tol < 0:
            raise ValueError(f"answer count tolerance must be a non-negative integer, got {tol!r}")
        if self.set_credit not in SET_CREDITS:
            raise ValueError(f"unknown answer set credit {self.set_credit!r}; expected one of "
                             f"{sorted(SET_CREDITS)}")

    def to_dict(self) -> dict:
        return {
            "count_tolerance": self.count_tolerance,
            "count": (f"EM when |predicted - gold| <= {self.count_tolerance}; partial equals EM "
                      "(no interpolated credit for a number)"),
            "set_credit": self.set_credit,
            "file_set": "EM is set equality; partial is " + SET_CREDITS[self.set_credit],
            "speaker": ("two fields, name and session count, both needed for EM; partial = "
                        "fields right / 2; names compared casefolded with whitespace collapsed "
                        "(the only tolerance); the count field uses the count tolerance"),
            "unanswered": ("scores 0 on EM, partial and answered and is counted: means iterate "
                           "the gold query set"),
            "type_mismatch": "an answer of the wrong kind (e.g. a list for a count) scores 0",
            "sets": "every set is emitted sorted",
        }


@dataclass(frozen=True)
class GoldAnswer:
    """One query scored on its answer: where it comes from and its canonical gold value."""

    query_id: str
    corpus: str
    query_class: str
    rule: str
    question: str
    kind: str
    gold: object


def normalise_name(name: str) -> str:
    """Casefolded with runs of whitespace collapsed to one space: the only tolerance."""
    return " ".join(str(name).split()).casefold()


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def answer_kind(value) -> str | None:
    """The kind of an answer value, or None when it is none of the three."""
    if _is_count(value):
        return COUNT
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return FILE_SET
    if (isinstance(value, Mapping) and set(value) == {"speaker", "count"}
            and isinstance(value["speaker"], str) and _is_count(value["count"])):
        return SPEAKER
    return None


def canonical_value(value):
    """An answer in the form written to a results file: sets sorted and deduplicated."""
    kind = answer_kind(value)
    if kind == FILE_SET:
        return sorted(set(value))
    if kind == SPEAKER:
        return {"speaker": value["speaker"], "count": int(value["count"])}
    return value


def gold_from_query(query) -> GoldAnswer:
    """The gold of a :class:`harness.core.records.Query` scored on its answer; refuses a query
    whose gold is missing or of no known kind (naming the corpus, query and field)."""
    where = f"corpus {query.corpus!r}, query {query.query_id!r}"
    if query.scored_on != SCORED_ON:
        raise ValueError(f"{where}: field 'scored_on' is {query.scored_on!r}, not {SCORED_ON!r}")
    kind = answer_kind(query.answer)
    if kind is None:
        raise ValueError(f"{where}: field 'answer' {query.answer!r} is not a count, a list of "
                         "file ids or {'speaker', 'count'}")
    rule = dict(query.extra).get("rule") or "unspecified"
    return GoldAnswer(query.query_id, query.corpus, query.query_class or "aggregation",
                      str(rule), query.text, kind, canonical_value(query.answer))


def set_f1(predicted: Iterable[str], gold: Iterable[str]) -> float:
    p, g = set(predicted), set(gold)
    if not p and not g:
        return 1.0
    return 2 * len(p & g) / (len(p) + len(g))


def score_answer(gold: GoldAnswer, predicted, policy: AnswerPolicy) -> tuple[float, float]:
    """``(EM, partial)`` of one attempted answer (a declined query is not scored here)."""
    if answer_kind(predicted) != gold.kind:
        return 0.0, 0.0
    if gold.kind == COUNT:
        em = 1.0 if abs(predicted - gold.gold) <= policy.count_tolerance else 0.0
        return em, em
    if gold.kind == FILE_SET:
        em = 1.0 if set(predicted) == set(gold.gold) else 0.0
        return em, (em if policy.set_credit == "exact" else set_f1(predicted, gold.gold))
    name_ok = normalise_name(predicted["speaker"]) == normalise_name(gold.gold["speaker"])
    count_ok = abs(predicted["count"] - gold.gold["count"]) <= policy.count_tolerance
    return float(name_ok and count_ok), (int(name_ok) + int(count_ok)) / 2


def evaluate(golds: Sequence[GoldAnswer], answers: Mapping, policy: AnswerPolicy,
             tiers: Mapping[str, str]) -> list[dict]:
    """One record per gold query (iterating the gold set, never the answers).

    ``answers`` maps ``(corpus, query_id)`` to an object with ``value`` (None when declined),
    ``mechanism`` and ``notes``; a gold query with no entry is unanswered.  Answers for
    queries outside the gold set are ignored and logged.
    """
    keys = [(g.corpus, g.query_id) for g in golds]
    if len(set(keys)) != len(keys):
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        raise ValueError(f"gold query ids repeat within a corpus: {dupes[:5]}")
    strays = sorted(set(answers) - set(keys))
    if strays:
        log.warning("%d answers are for queries outside the gold set and are ignored: %s",
                    len(strays), strays[:5])
    records = []
    for g in sorted(golds, key=lambda g: (g.corpus, g.query_id)):
        if g.corpus not in tiers:
            raise ValueError(f"no licence tier for corpus {g.corpus!r}")
        got = answers.get((g.corpus, g.query_id))
        value = None if got is None else got.value
        if value is None:
            em = partial = answered = 0.0
            mechanism = got.mechanism if got is not None else "no answer returned"
            notes = dict(got.notes) if got is not None else {}
        else:
            em, partial = score_answer(g, value, policy)
            answered = 1.0
            mechanism, notes = got.mechanism, dict(got.notes)
        records.append({
            "corpus": g.corpus, "tier": tiers[g.corpus], "query_class": g.query_class,
            "query_id": g.query_id, "rule": g.rule, "question": g.question,
            "answer_kind": g.kind, "gold": g.gold,
            "predicted": None if value is None else canonical_value(value),
            "EM": em, "partial": partial, "answered": answered,
            "mechanism": mechanism, "notes": notes,
        })
    return records


def _row(corpus: str, tier: str, query_class: str, rule: str, members: list[dict]) -> dict:
    n = len(members)
    row = {"corpus": corpus, "tier": tier, "query_class": query_class, "rule": rule, "n": n,
           "unanswered": sum(1 for r in members if r["answered"] == 0.0),
           "scored_on": SCORED_ON}
    for measure in MEASURES:
        row[measure] = sum(r[measure] for r in members) / n
    return row


def answer_rows(records: Sequence[dict]) -> list[dict]:
    """Rows per corpus x query class x (``all`` + each rule), and pooled ``a+b`` rows when
    several corpora contributed (their tier: the most restrictive)."""
    if not records:
        raise ValueError("no gold queries scored on their answer: nothing to tabulate")
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        groups.setdefault((r["corpus"], r["query_class"]), []).append(r)
    corpora = sorted({r["corpus"] for r in records})
    if len(corpora) > 1:
        for r in records:
            groups.setdefault(("+".join(corpora), r["query_class"]), []).append(r)
    tiers = {}
    for r in records:
        tiers.setdefault(r["corpus"], r["tier"])
    rows = []
    for (corpus, cls) in sorted(groups):
        members = groups[(corpus, cls)]
        tier = most_restrictive_tier(tiers[c] for c in corpus.split("+"))
        rows.append(_row(corpus, tier, cls, ALL, members))
        for rule in sorted({r["rule"] for r in members}):
            rows.append(_row(corpus, tier, cls, rule, [r for r in members if r["rule"] == rule]))
    return rows
