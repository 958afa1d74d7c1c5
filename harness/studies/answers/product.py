"""The product answerer: a generic interrogative-frame parser over the transcript store.

It knows nothing of the synthetic generator (it imports nothing from it and shares no pattern
or code with :mod:`harness.studies.answers.reference`): it strips a generic frame and extracts slots.

* **head**: ``how many <unit>`` (a count), ``which|what <unit>`` (a list), ``who`` (a person);
  the unit is meetings (meeting, session, call, recording, file) or occurrences (times,
  occasions, occurrences);
* **period**: ``in|during <month> <year>`` anywhere, resolved against each file's recorded
  date (files with no recorded date are excluded and reported);
* **topic**: after the unit, one verb (and a particle such as "about"), then the topic with
  its leading article dropped;
* **event**: ``how many times [did <someone>] <verb> <object>`` counts each inflection of the
  verb followed by the object, per occurrence, over turns;
* **person**: ``who <verb> the most <qualifiers> <unit> for|of|in <owner>`` scopes files by
  title (every qualifier and the owner must appear in it) and counts the sessions each
  speaker spoke in.

Topic and title matches are case-insensitive and word-bounded; a read that reaches the row
limit raises :class:`~harness.studies.answers.answer.TruncatedResult`.
"""

from __future__ import annotations

import logging
import re
from datetime import date

from harness.studies.answers.answer import ROW_LIMIT, Answer, TruncatedResult, declined

log = logging.getLogger(__name__)

MEETING_UNITS = frozenset({"meeting", "meetings", "session", "sessions", "call", "calls",
                           "recording", "recordings", "file", "files"})
OCCURRENCE_UNITS = frozenset({"times", "occasions", "occurrences"})
PARTICLES = frozenset({"about", "on", "over", "of"})
ARTICLES = frozenset({"the", "a", "an", "our", "any"})
AUXILIARIES = frozenset({"did", "do", "does", "have", "has", "had"})
OWNER_PREPOSITIONS = frozenset({"for", "of", "in", "with", "from"})
MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august",
               "september", "october", "november", "december")

_SPACE = re.compile(r"\s+")
_ENDING = re.compile(r"[\s?!.]+$")
_PERIOD = re.compile(r"\b(?:in|during)\s+([A-Za-z]+)\.?\s+(\d{4})\b", re.IGNORECASE)
_FILLER = re.compile(r"\b(?:in\s+total|altogether|overall|in\s+all)\b", re.IGNORECASE)

MECHANISMS: dict[str, str] = {
    "count_files": "product: generic frame (how many <unit>), sql ilike + word check, distinct files counted",
    "list_files": "product: generic frame (which <unit>), sql ilike + word check, distinct files listed",
    "count_events": ("product: generic frame (how many times), sql ilike on the object, verb "
                     "inflections + object counted per occurrence over turns"),
    "top_person": ("product: generic frame (who ... the most <unit>), files scoped by title words, "
                   "distinct speakers per file counted (ties: first by casefolded name, flagged)"),
}


def _month(word: str) -> int | None:
    w = word.lower()
    if len(w) < 3:
        return None
    for number, name in enumerate(MONTH_NAMES, start=1):
        if name.startswith(w) or (w == "sept" and number == 9):
            return number
    return None


def _strip_articles(words: list[str]) -> list[str]:
    while words and words[0].lower() in ARTICLES:
        words = words[1:]
    return words


def _words_regex(words) -> re.Pattern:
    """Case-insensitive, word-bounded match of a word sequence (single spaces, as the SQL
    prefilter requires)."""
    return re.compile(r"(?<!\w)" + " ".join(re.escape(w) for w in words) + r"(?!\w)",
                      re.IGNORECASE)


def _like(words) -> str | None:
    """A LIKE pattern for text containing the words (LIKE's wildcards escaped with \\).

    SQLite folds case for ASCII letters only, so a phrase with other letters is narrowed to
    its longest ASCII word (the word check in Python does the rest); None when it has none.
    """
    text = " ".join(words)
    if not text.isascii():
        ascii_words = [w for w in words if w.isascii()]
        if not ascii_words:
            return None
        text = max(ascii_words, key=len)
    for char in ("\\", "%", "_"):
        text = text.replace(char, "\\" + char)
    return "%" + text + "%"


def _stem(verb: str) -> str:
    """A prefix shared by a verb's inflections (postpone/postponed, delay/delayed,
    defer/deferred, carry/carried, make/making)."""
    v = verb.lower()
    if len(v) > 3 and (v.endswith("e") or (v.endswith("y") and v[-2] not in "aeiou")):
        return v[:-1]
    return v


def parse(question: str) -> dict | None:
    """The generic frame of a question as a dict (``intent`` plus slots), or None."""
    text = _ENDING.sub("", _SPACE.sub(" ", question).strip())
    period = None
    found = _PERIOD.search(text)
    if found and _month(found.group(1)):
        period = (int(found.group(2)), _month(found.group(1)))
        text = (text[:found.start()] + " " + text[found.end():]).strip()
    text = _SPACE.sub(" ", _FILLER.sub(" ", text)).strip()
    words = text.split(" ")
    lowered = [w.lower() for w in words]
    if lowered[:2] == ["how", "many"] and len(words) > 2:
        unit, rest = lowered[2], words[3:]
        if unit in MEETING_UNITS:
            return _topic_slots("count_files", rest, period)
        if unit in OCCURRENCE_UNITS:
            return _event_slots(rest, period)
        return None
    if lowered[:1] in (["which"], ["what"]) and len(words) > 1 and lowered[1] in MEETING_UNITS:
        return _topic_slots("list_files", words[2:], period)
    if lowered[:1] == ["who"]:
        return _person_slots(words[1:], period)
    return None


def _topic_slots(intent: str, rest: list[str], period) -> dict | None:
    if len(rest) < 2:
        return None
    rest = rest[1:]  # the verb
    if rest and rest[0].lower() in PARTICLES:
        rest = rest[1:]
    topic = _strip_articles(rest)
    if not topic:
        return None
    return {"intent": intent, "topic": topic, "period": period}


def _event_slots(rest: list[str], period) -> dict | None:
    if rest and rest[0].lower() in AUXILIARIES:
        rest = rest[2:]  # the auxiliary and whoever did it
    if len(rest) < 2 or not _strip_articles(rest[1:]):
        return None
    return {"intent": "count_events", "verb": rest[0], "object": rest[1:], "period": period}


def _person_slots(rest: list[str], period) -> dict | None:
    lowered = [w.lower() for w in rest]
    if len(rest) < 4 or lowered[1:3] != ["the", "most"]:
        return None
    tail = rest[3:]
    # the unit is the last unit noun that ends the phrase or precedes the owner ("planning
    # session sessions for X": the kind itself may hold a unit word)
    units = [i for i, w in enumerate(tail) if w.lower() in MEETING_UNITS
             and (i + 1 == len(tail) or tail[i + 1].lower() in OWNER_PREPOSITIONS)]
    if not units:
        return None
    cut = units[-1]
    qualifiers, owner = tail[:cut], tail[cut + 1:]
    if owner and owner[0].lower() in OWNER_PREPOSITIONS:
        owner = _strip_articles(owner[1:])
    scope = [group for group in (qualifiers, owner) if group]
    if not scope:
        return None
    return {"intent": "top_person", "scope": scope, "period": period}


def _period_bounds(period) -> tuple[date, date]:
    year, month = period
    first = date(year, month, 1)
    following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return first, following


class ProductAnswerer:
    """The product's aggregation path: generic parsing, exact SQL, no model."""

    name = "product"
    is_production_path = True
    needs_store = True
    description = ("generic interrogative-frame parser (how many / which / who with slot "
                   "extraction) over the transcript store; resolves periods against recorded "
                   "dates; no model")

    def __init__(self, row_limit: int = ROW_LIMIT):
        self.row_limit = row_limit

    def answer(self, question: str, store, corpus: str) -> Answer:
        frame = parse(question)
        if frame is None:
            return declined("no generic question frame (how many / which / who) recognised")
        with store.engine.connect() as conn:
            return getattr(self, "_" + frame["intent"])(conn, corpus, frame)

    def _fetch(self, conn, query, what: str) -> list:
        rows = list(conn.execute(query.limit(self.row_limit + 1)))
        if len(rows) > self.row_limit:
            raise TruncatedResult(f"{what}: the read reached its limit of {self.row_limit} rows; "
                                  "refusing to answer from a truncated result")
        return rows

    def _turns_with(self, conn, corpus: str, words: list[str], period, *, dated=True) -> list:
        from sqlalchemy import select

        from ingestion.transcripts.schema import files, turns

        query = select(turns.c.file_id, turns.c.text).where(turns.c.corpus == corpus)
        like = _like(words)
        if like is not None:
            query = query.where(turns.c.text.ilike(like, escape="\\"))
        if period is not None:
            query = query.join(files, (files.c.corpus == turns.c.corpus)
                               & (files.c.id == turns.c.file_id))
            if dated:
                first, following = _period_bounds(period)
                query = query.where(files.c.recorded_date >= first,
                                    files.c.recorded_date < following)
            else:
                query = query.where(files.c.recorded_date.is_(None))
        query = query.order_by(turns.c.file_id, turns.c.start, turns.c.end, turns.c.id)
        return self._fetch(conn, query, f"corpus {corpus!r}, turns naming {' '.join(words)!r}")

    def _files_naming(self, conn, corpus, words, period, dated=True) -> list[str]:
        pattern = _words_regex(words)
        return sorted({f for f, text in self._turns_with(conn, corpus, words, period, dated=dated)
                       if pattern.search(text)})

    def _with_period(self, conn, corpus, frame, value, mechanism) -> Answer:
        notes = {}
        if frame["period"] is not None:
            year, month = frame["period"]
            notes["period"] = f"{year:04d}-{month:02d}"
            notes["undated_files_excluded"] = len(
                self._files_naming(conn, corpus, frame["topic"], frame["period"], dated=False))
            mechanism += "; recorded_date within the period (undated files excluded)"
        return Answer(value, mechanism, notes)

    def _count_files(self, conn, corpus, frame) -> Answer:
        found = self._files_naming(conn, corpus, frame["topic"], frame["period"])
        return self._with_period(conn, corpus, frame, len(found), MECHANISMS["count_files"])

    def _list_files(self, conn, corpus, frame) -> Answer:
        found = self._files_naming(conn, corpus, frame["topic"], frame["period"])
        return self._with_period(conn, corpus, frame, found, MECHANISMS["list_files"])

    def _count_events(self, conn, corpus, frame) -> Answer:
        obj = frame["object"]
        pattern = re.compile(r"(?<!\w)" + re.escape(_stem(frame["verb"])) + r"\w*\s+"
                             + r"\s+".join(re.escape(w) for w in obj) + r"(?!\w)", re.IGNORECASE)
        rows = self._turns_with(conn, corpus, obj, frame["period"])
        total = sum(len(pattern.findall(text)) for _, text in rows)
        notes = {}
        if frame["period"] is not None:
            notes["period"] = "{:04d}-{:02d}".format(*frame["period"])
        return Answer(total, MECHANISMS["count_events"], notes)

    def _top_person(self, conn, corpus, frame) -> Answer:
        from sqlalchemy import func, select

        from ingestion.transcripts.schema import files, turns

        query = select(files.c.id, files.c.title).where(files.c.corpus == corpus)
        for group in frame["scope"]:
            like = _like(group)
            if like is not None:
                query = query.where(files.c.title.ilike(like, escape="\\"))
        if frame["period"] is not None:
            first, following = _period_bounds(frame["period"])
            query = query.where(files.c.recorded_date >= first, files.c.recorded_date < following)
        patterns = [_words_regex(group) for group in frame["scope"]]
        scoped = sorted(fid for fid, title in self._fetch(conn, query.order_by(files.c.id),
                                                          f"corpus {corpus!r}, titled files")
                        if all(p.search(title or "") for p in patterns))
        if not scoped:
            return declined("no file title names " + " and ".join(
                repr(" ".join(g)) for g in frame["scope"]))
        counts: dict[str, int] = {}
        for start in range(0, len(scoped), 500):
            part = scoped[start:start + 500]
            sessions = func.count(func.distinct(turns.c.file_id))
            grouped = (select(turns.c.speaker, sessions)
                       .where(turns.c.corpus == corpus, turns.c.file_id.in_(part),
                              turns.c.speaker.is_not(None))
                       .group_by(turns.c.speaker))
            for speaker, n in conn.execute(grouped):
                counts[speaker] = counts.get(speaker, 0) + int(n)
        if not counts:
            return declined("the scoped files have no named speakers")
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].casefold(), kv[0]))
        best = ranked[0][1]
        notes = {"files_in_scope": len(scoped), "speakers": len(ranked)}
        tied = [name for name, n in ranked if n == best]
        if len(tied) > 1:
            notes.update(tie=True, tied=tied)
        return Answer({"speaker": ranked[0][0], "count": best}, MECHANISMS["top_person"], notes)
