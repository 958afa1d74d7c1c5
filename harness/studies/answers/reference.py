"""The reference answerer: the instrument's control, matched to the synthetic generator.

It recognises exactly the generator's five aggregation frames (its regexes are compiled from
:data:`ingestion.synthetic.spec.FRAMES`, so they cannot drift from them) and answers from the
transcript store by exact mechanisms:

========================  ==================================================================
rule                      mechanism
========================  ==================================================================
R3-count-files            turns containing the phrase (SQL), word-bounded re-check, distinct files
R4-list-files             the same, listing the distinct files
R5-count-events           turns containing the event (SQL), non-overlapping occurrences per turn
R6-speaker-top            rosters of the team's files of that kind (SQL), sessions per attendee
R7-temporal-count         R3 restricted in SQL to files recorded in that month
========================  ==================================================================

Occurrences are counted over turns, never over retrieval chunks (overlapping chunks count a
long turn's tail twice).  A read that reaches the row limit raises
:class:`~harness.studies.answers.answer.TruncatedResult`.  Anything worded differently is declined.
It uses the generator's phrase semantics (:func:`ingestion.synthetic.spec.phrase_pattern`),
which is why it is a control and not the product: ``is_production_path`` is false.
"""

from __future__ import annotations

import functools
import logging
import re

from harness.studies.answers.answer import ROW_LIMIT, Answer, TruncatedResult, declined

log = logging.getLogger(__name__)

#: the five aggregation rules of the generator, in the order they are tried
RULES = ("R3-count-files", "R4-list-files", "R5-count-events", "R6-speaker-top",
         "R7-temporal-count")

MECHANISMS: dict[str, str] = {
    "R3-count-files": "sql: turns containing the phrase, word-bounded re-check, distinct files counted",
    "R4-list-files": "sql: turns containing the phrase, word-bounded re-check, distinct files listed",
    "R5-count-events": ("sql: turns containing the event phrase, non-overlapping occurrences "
                        "counted per turn and summed"),
    "R6-speaker-top": ("sql: rosters of the files of the team and kind, sessions per attendee, "
                       "top count (ties: first by casefolded name, flagged)"),
    "R7-temporal-count": ("sql: turns containing the phrase in files whose recorded_date falls "
                          "in the month, word-bounded re-check, distinct files counted; "
                          "undated files excluded and reported"),
}


def _slot(name: str) -> str:
    from ingestion.synthetic import spec

    if name == "month_name":
        return "(?P<month_name>" + "|".join(re.escape(m) for m in spec.MONTH_NAMES) + ")"
    if name == "year":
        return r"(?P<year>[0-9]{4})"
    return f"(?P<{name}>\\S(?:.*\\S)?)"


def frame_regex(frame: str) -> str:
    """An anchored regex for one generator frame: literal text escaped, each ``{slot}`` a
    named group."""
    parts = re.split(r"(\{\w+\})", frame)
    return "^" + "".join(_slot(p[1:-1]) if p.startswith("{") else re.escape(p)
                         for p in parts) + "$"


@functools.cache
def frame_patterns() -> dict[str, re.Pattern]:
    from ingestion.synthetic import spec

    missing = [rule for rule in RULES if rule not in spec.FRAMES]
    if missing:
        raise ValueError(f"the synthetic generator names no frame for rules {missing}; it "
                         f"names {sorted(spec.FRAMES)}")
    return {rule: re.compile(frame_regex(spec.FRAMES[rule])) for rule in RULES}


def parse(question: str) -> tuple[str, dict] | None:
    """``(rule, slots)`` when the question is exactly one of the five frames, else None."""
    text = question.strip()
    for rule, pattern in frame_patterns().items():
        match = pattern.match(text)
        if match:
            return rule, match.groupdict()
    return None


def _sql_fragment(phrase: str) -> str:
    """The text the SQL prefilter looks for: the lower-cased phrase when it is ASCII (SQLite's
    lower() folds ASCII only), else its longest ASCII word, else nothing (scan every turn)."""
    if phrase.isascii():
        return phrase.lower()
    words = sorted((w for w in phrase.split() if w.isascii()), key=lambda w: (-len(w), w))
    return words[0].lower() if words else ""


class ReferenceAnswerer:
    """Exact mechanisms over the transcript store for the generator's five frames."""

    name = "reference"
    is_production_path = False
    needs_store = True
    description = ("rules parser over the synthetic generator's five question frames, then "
                   "exact SQL over the transcript store; the instrument's control, not the "
                   "product's answer")

    def __init__(self, row_limit: int = ROW_LIMIT):
        self.row_limit = row_limit

    def answer(self, question: str, store, corpus: str) -> Answer:
        parsed = parse(question)
        if parsed is None:
            return declined("the question matches none of the five generator frames")
        rule, slots = parsed
        with store.engine.connect() as conn:
            return getattr(self, "_" + rule.split("-")[0].lower())(conn, corpus, slots, rule)

    # ------------------------------------------------------------------ reads

    def _matching_turns(self, conn, corpus: str, phrase: str, *, month=None,
                        undated: bool = False) -> list[tuple[str, str]]:
        """``(file_id, text)`` of the corpus's turns whose text contains ``phrase``
        (case-insensitive prefilter in SQL), optionally only in files recorded in ``month``
        ``(year, month)`` or only in undated files; raises at the row limit."""
        from sqlalchemy import extract, func, select

        from ingestion.transcripts.schema import files, turns

        query = select(turns.c.file_id, turns.c.text).where(turns.c.corpus == corpus)
        fragment = _sql_fragment(phrase)
        if fragment:
            query = query.where(func.lower(turns.c.text).contains(fragment, autoescape=True))
        if month is not None or undated:
            query = query.join(files, (files.c.corpus == turns.c.corpus)
                               & (files.c.id == turns.c.file_id))
            if undated:
                query = query.where(files.c.recorded_date.is_(None))
            else:
                year, number = month
                query = query.where(extract("year", files.c.recorded_date) == year,
                                    extract("month", files.c.recorded_date) == number)
        query = query.order_by(turns.c.file_id, turns.c.start, turns.c.end,
                               turns.c.id).limit(self.row_limit + 1)
        rows = [(r[0], r[1]) for r in conn.execute(query)]
        if len(rows) > self.row_limit:
            raise TruncatedResult(
                f"corpus {corpus!r}: more than {self.row_limit} turns contain {phrase!r}; the "
                "read was truncated, so no count is returned (raise the row limit)")
        return rows

    def _files_mentioning(self, conn, corpus, phrase, **where) -> list[str]:
        from ingestion.synthetic.spec import phrase_pattern

        pattern = phrase_pattern(phrase)
        return sorted({file_id for file_id, text in
                       self._matching_turns(conn, corpus, phrase, **where)
                       if pattern.search(text)})

    # ------------------------------------------------------------------ rules

    def _r3(self, conn, corpus, slots, rule) -> Answer:
        return Answer(len(self._files_mentioning(conn, corpus, slots["phrase"])), MECHANISMS[rule])

    def _r4(self, conn, corpus, slots, rule) -> Answer:
        return Answer(self._files_mentioning(conn, corpus, slots["phrase"]), MECHANISMS[rule])

    def _r5(self, conn, corpus, slots, rule) -> Answer:
        from ingestion.synthetic.spec import event_phrase, phrase_pattern

        event = event_phrase(slots["subject"])
        pattern = phrase_pattern(event)
        total = sum(len(pattern.findall(text))
                    for _, text in self._matching_turns(conn, corpus, event))
        return Answer(total, MECHANISMS[rule])

    def _r6(self, conn, corpus, slots, rule) -> Answer:
        from sqlalchemy import func, select

        from ingestion.transcripts.schema import files, rosters

        sessions = func.count(func.distinct(rosters.c.file_id))
        query = (select(rosters.c.speaker, sessions)
                 .join(files, (files.c.corpus == rosters.c.corpus)
                       & (files.c.id == rosters.c.file_id))
                 .where(files.c.corpus == corpus, files.c.team == slots["team"],
                        files.c.kind == slots["kind"])
                 .group_by(rosters.c.speaker))
        counts = [(str(name), int(n)) for name, n in conn.execute(query)]
        if not counts:
            return declined(f"no {slots['kind']!r} files of team {slots['team']!r} with a roster")
        # ordered here, not in SQL: string collation differs between databases
        counts.sort(key=lambda c: (-c[1], c[0].casefold(), c[0]))
        top = counts[0][1]
        tied = [name for name, n in counts if n == top]
        notes = {"attendees": len(counts)}
        if len(tied) > 1:
            notes.update(tie=True, tied=tied)
        return Answer({"speaker": counts[0][0], "count": top}, MECHANISMS[rule], notes)

    def _r7(self, conn, corpus, slots, rule) -> Answer:
        from ingestion.synthetic import spec

        month = (int(slots["year"]), spec.MONTH_NAMES.index(slots["month_name"]) + 1)
        inside = self._files_mentioning(conn, corpus, slots["phrase"], month=month)
        undated = self._files_mentioning(conn, corpus, slots["phrase"], undated=True)
        return Answer(len(inside), MECHANISMS[rule],
                      {"month": f"{month[0]:04d}-{month[1]:02d}",
                       "undated_files_excluded": len(undated)})
