"""What a synthetic corpus directory holds, shared by the generator, validator and loader.

Layout::

    manifest.json          generator, version, seed, sizes, licence, sha256 of every other
                           file, the generator's own BM25 report, the budget selection
    meetings/synNNNN.json  one meeting: title, team, kind, series number, recorded date,
                           roster, turns (index, speaker, start, end, text)
    queries.jsonl          one query per line: id, text, class, gold spans, gold files,
                           scored_on, answer, extra (the rule and what the question names)

Gold is by construction and re-derivable from the written text:

- a *topic run* is a maximal group of turns naming a topic phrase in which consecutive
  mentions are at most :data:`MENTION_GAP` turns apart; topic gold spans are exactly the
  runs (first and last mentioning turn, inclusive, QMSum's convention);
- aggregation phrases are exact multi-word strings matched case-insensitively on word
  boundaries; occurrences are counted per occurrence, so one turn can hold an event twice.
"""

from __future__ import annotations

import re

GENERATOR = "ingestion.synthetic"
#: bump whenever the generator's output for a given seed changes (it is part of the version)
GENERATOR_VERSION = "1"
LICENCE = "CC0-1.0"
MANIFEST = "manifest.json"
QUERIES = "queries.jsonl"
MEETINGS_DIR = "meetings"
ID_PREFIX = "syn"
DATE_SOURCE = "corpus-record"

#: largest index distance between consecutive mentions of one topic run
MENTION_GAP = 4

#: rule id -> question frame; the query text is exactly ``FRAMES[rule].format(**extra)``
FRAMES: dict[str, str] = {
    "lookup-topic-speaker": "In the {team} {kind}, what did {speaker} say about the {topic}?",
    "lookup-topic-speaker-date": ("In the {team} {kind} on {date_text}, what did {speaker} say "
                                  "about the {topic}?"),
    "summarize-topic-meeting": "Summarise the discussion of the {topic} in {title}.",
    "multi-file-topic-series": ("What did the {team} team discuss about the {topic} across "
                                "its {kind} sessions?"),
    "R3-count-files": "How many meetings discussed the {phrase}?",
    "R4-list-files": "Which meetings mention the {phrase}?",
    "R5-count-events": "How many times in total did we defer the {subject}?",
    "R6-speaker-top": "Who attended the most {kind} sessions for {team}?",
    "R7-temporal-count": "How many meetings in {month_name} {year} discussed the {phrase}?",
}

#: query class of each rule
RULE_CLASS: dict[str, str] = {
    "lookup-topic-speaker": "lookup",
    "lookup-topic-speaker-date": "lookup",
    "summarize-topic-meeting": "summarize",
    "multi-file-topic-series": "multi_file",
    "R3-count-files": "aggregation",
    "R4-list-files": "aggregation",
    "R5-count-events": "aggregation",
    "R6-speaker-top": "aggregation",
    "R7-temporal-count": "aggregation",
}


def title_of(team: str, kind: str, number: int) -> str:
    return f"{team} — {kind} #{number}"


def phrase_pattern(phrase: str) -> re.Pattern:
    """Case-insensitive, word-bounded match of an exact phrase."""
    return re.compile(r"(?<![\w-])" + re.escape(phrase) + r"(?![\w-])", re.IGNORECASE)


def count_phrase(text: str, phrase: str) -> int:
    return len(phrase_pattern(phrase).findall(text))


def topic_runs(indexes, gap: int = MENTION_GAP) -> list[tuple[int, int]]:
    """Group sorted mention indexes into inclusive runs (consecutive mentions <= gap apart)."""
    runs: list[tuple[int, int]] = []
    for index in sorted(indexes):
        if runs and index - runs[-1][1] <= gap:
            runs[-1] = (runs[-1][0], index)
        else:
            runs.append((index, index))
    return runs


MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December")


def date_text(iso: str) -> str:
    """``2025-03-14`` -> ``14 March 2025`` (how a lookup question names a meeting's date)."""
    year, month, day = (int(x) for x in iso.split("-"))
    return f"{day} {MONTH_NAMES[month - 1]} {year}"


def event_phrase(subject: str) -> str:
    """The exact string an R5 event is counted by."""
    return f"deferred the {subject}"
