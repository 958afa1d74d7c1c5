"""The deterministic synthetic meeting generator (no model anywhere; gold by construction).

One seed gives one corpus, byte for byte: every random choice comes from ``random.Random``
instances seeded with ``"{seed}:{stage}"`` strings, and only the operations whose output
Python keeps stable across versions are used (``random``, ``randint``, ``choice``,
``shuffle``).  Every set is sorted before it is iterated or written.

The world: teams x meeting kinds form series; each meeting of a series is titled
``{Team} — {kind} #{n}`` (numbered in date order), has a recorded date (``date_source``
``corpus-record``), a roster drawn from the team (sometimes a guest), and a sequence of topic
blocks drawn from the team's topics, which overlap other teams' topics.  Some meetings are
near-duplicates (a follow-up that revisits the previous meeting's topics with much the same
people), so the corpus is not trivially easy, and lookup questions discriminate partly on
title and roster words (team, kind, speaker) that nobody says.

Turns: an opening round (everyone on the roster speaks), the topic blocks, a closing line.
Turn lengths mix short remarks, medium turns and long monologues (some over 200 words, so the
chunker's sentence splitter is exercised); speakers talk at different rates; some turns
interrupt the previous one; backchannels ("Mm-hmm.") overlap other turns, half of them with a
tied onset, so only the total order (start, end, id) fixes the turn order.
"""

from __future__ import annotations

import logging
import math
import random
from dataclasses import dataclass, field
from datetime import date, timedelta

from ingestion.synthetic import spec, vocab

log = logging.getLogger(__name__)

START_DATE = date(2025, 1, 6)  # a Monday
MIN_MEETINGS = 4
TEAM_POOL = 6
TEAM_TOPICS = 12


def _rng(seed: int, stage: str) -> random.Random:
    return random.Random(f"{seed}:{stage}")


def _sample(rng: random.Random, seq, k: int) -> list:
    items = list(seq)
    rng.shuffle(items)
    return items[:k]


def _weekday(offset: int) -> date:
    weeks, day = divmod(offset, 5)
    return START_DATE + timedelta(days=7 * weeks + day)


@dataclass
class Meeting:
    order: int
    team: str
    kind: str
    recorded: date
    roster: list[str] = field(default_factory=list)
    topics: list[str] = field(default_factory=list)
    number: int = 0
    file_id: str = ""
    turns: list[dict] = field(default_factory=list)
    #: block number -> topic, and block number -> indexes of its primary turns (final order)
    block_topic: dict[int, str] = field(default_factory=dict)
    block_primaries: dict[int, list[int]] = field(default_factory=dict)
    #: topic -> indexes of turns naming it
    mentions: dict[str, list[int]] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return spec.title_of(self.team, self.kind, self.number)

    @property
    def series(self) -> tuple[str, str]:
        return (self.team, self.kind)


# --------------------------------------------------------------------------- the world


def _plan_world(seed: int, n_meetings: int) -> tuple[list[Meeting], dict[str, list[str]]]:
    rng = _rng(seed, "world")
    n_series = max(2, n_meetings // 4)
    n_teams = min(len(vocab.TEAMS), max(2, math.ceil(math.sqrt(n_series))))
    n_kinds = min(len(vocab.KINDS), max(1, math.ceil(n_series / n_teams)))
    teams = _sample(rng, vocab.TEAMS, n_teams)
    kinds = _sample(rng, vocab.KINDS, n_kinds)
    people = _sample(rng, [f"{a} {b}" for a in vocab.FIRST_NAMES for b in vocab.LAST_NAMES],
                     n_teams * TEAM_POOL)
    pools = {team: sorted(people[i * TEAM_POOL:(i + 1) * TEAM_POOL]) for i, team in enumerate(teams)}
    team_topics = {team: _sample(rng, sorted(vocab.TOPICS), TEAM_TOPICS) for team in teams}
    series = [(t, k) for t in teams for k in kinds]
    rng.shuffle(series)
    span = min(250, max(40, n_meetings * 4))
    meetings: list[Meeting] = []
    used_dates: dict[tuple[str, str], set] = {}
    for order in range(n_meetings):
        team, kind = series[order % len(series)]
        taken = used_dates.setdefault((team, kind), set())
        while True:
            day = _weekday(rng.randint(0, span - 1))
            if day not in taken:
                taken.add(day)
                break
        meetings.append(Meeting(order, team, kind, day))
    by_series: dict[tuple[str, str], list[Meeting]] = {}
    for m in meetings:
        by_series.setdefault(m.series, []).append(m)
    for group in by_series.values():
        group.sort(key=lambda m: (m.recorded, m.order))
        for number, m in enumerate(group, start=1):
            m.number = number
    for m in meetings:
        m.file_id = f"{spec.ID_PREFIX}{m.order + 1:04d}"
    for key in sorted(by_series):
        previous = None
        for m in by_series[key]:
            others = [p for t in teams if t != m.team for p in pools[t]]
            if previous is not None and rng.random() < 0.2:
                # near-duplicate follow-up: same topics, much the same people
                m.topics = list(previous.topics)
                keep = [p for p in previous.roster if p in pools[m.team]]
                m.roster = sorted(set(keep[:max(3, len(keep) - 1)]))
                while len(m.roster) < 3:
                    m.roster = sorted(set(m.roster) | {rng.choice(pools[m.team])})
            else:
                m.roster = sorted(_sample(rng, pools[m.team], rng.randint(3, 5)))
                if rng.random() < 0.15:
                    m.roster = sorted(set(m.roster) | {rng.choice(sorted(others))})
                topics = _sample(rng, team_topics[m.team], rng.randint(3, 5))
                if len(topics) >= 3 and rng.random() < 0.3:
                    topics.append(topics[0])  # the meeting comes back to its first topic
                m.topics = topics
            previous = m
    return meetings, pools


def _attendance(group: list[Meeting]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in group:
        for person in m.roster:
            counts[person] = counts.get(person, 0) + 1
    return counts


def _make_unique_winner(rng: random.Random, group: list[Meeting]) -> None:
    """Adjust rosters of one series until exactly one person attended the most sessions."""
    for _ in range(100):
        counts = _attendance(group)
        top = max(counts.values())
        tied = sorted(p for p, c in counts.items() if c == top)
        if len(tied) == 1:
            return
        winner = rng.choice(tied)
        absent = [m for m in group if winner not in m.roster]
        if absent:
            m = rng.choice(absent)
            m.roster = sorted(set(m.roster) | {winner})
            continue
        for other in tied:
            if other == winner:
                continue
            removable = [m for m in group if other in m.roster and len(m.roster) > 3]
            if removable:
                m = rng.choice(removable)
                m.roster = sorted(set(m.roster) - {other})
                break
        else:
            return  # cannot separate them; the series is not used for R6


# --------------------------------------------------------------------------- turns


def _word_target(rng: random.Random) -> int:
    r = rng.random()
    if r < 0.6:
        return rng.randint(4, 14)
    if r < 0.93:
        return rng.randint(15, 50)
    return rng.randint(80, 320)


def _skeleton(rng: random.Random, m: Meeting) -> list[dict]:
    """Primary turns (opening round, topic blocks, closing) with speakers and word targets."""
    primaries = []
    opening = list(m.roster)
    rng.shuffle(opening)
    for person in opening:
        primaries.append({"speaker": person, "block": None, "words": 0,
                          "fixed": rng.choice(vocab.OPENERS)})
    previous = opening[-1]
    for block, topic in enumerate(m.topics):
        m.block_topic[block] = topic
        for _ in range(rng.randint(8, 18)):
            speaker = rng.choice([p for p in m.roster if p != previous])
            primaries.append({"speaker": speaker, "block": block, "words": _word_target(rng)})
            previous = speaker
    chair = opening[0] if opening[0] != previous else opening[1]
    primaries.append({"speaker": chair, "block": None, "words": 0, "fixed": rng.choice(vocab.CLOSERS)})
    for p in primaries:
        if "fixed" in p:
            p["words"] = len(p["fixed"].split())
    return primaries


def _timed_turns(rng: random.Random, m: Meeting, primaries: list[dict]) -> list[dict]:
    """Times in integer ms for primaries and backchannels; returns turns in the total order."""
    rate = {p: rng.choice((340, 360, 380, 400, 420, 440, 460)) for p in m.roster}
    last_end: dict[str, int] = {}
    clock_prev = None
    for p in primaries:
        duration = max(p["words"], 2) * rate[p["speaker"]]
        if clock_prev is None:
            start = 0
        elif rng.random() < 0.1 and clock_prev["end"] - clock_prev["start"] > 1500:
            span = clock_prev["end"] - clock_prev["start"]
            start = clock_prev["end"] - rng.randint(300, min(900, span - 600))  # an interruption
        else:
            start = clock_prev["end"] + rng.randint(150, 900)
        start = max(start, last_end.get(p["speaker"], 0) + 100)
        p["start"], p["end"] = start, start + duration
        last_end[p["speaker"]] = p["end"]
        clock_prev = p
    turns = []
    for seq, p in enumerate(primaries):
        p["seq"] = 2 * seq
        turns.append(p)
        if seq == 0 or p["block"] is None or rng.random() >= 0.22:
            continue
        prev_p = primaries[seq - 1]
        next_p = primaries[seq + 1] if seq + 1 < len(primaries) else None
        busy = {prev_p["speaker"], p["speaker"]} | ({next_p["speaker"]} if next_p else set())
        choices = [x for x in m.roster if x not in busy]
        if not choices:
            continue
        text = rng.choice(vocab.BACKCHANNELS)
        length = 250 + 250 * len(text.split())
        if rng.random() < 0.5:
            start = p["start"]  # tied onset with the turn it acknowledges
        else:
            limit = min(p["end"], next_p["start"]) if next_p else p["end"]
            start = p["start"] + max(1, int((limit - p["start"]) * (0.25 + 0.5 * rng.random())))
        turns.append({"speaker": rng.choice(choices), "block": p["block"], "fixed": text,
                      "words": len(text.split()), "start": start, "end": start + length,
                      "seq": 2 * seq + 1, "backchannel": True})
    turns.sort(key=lambda t: (t["start"], t["end"], t["seq"]))
    # a speaker never overlaps themselves: the backchannel involved gives way
    dropped: set[int] = set()
    last: dict[str, dict] = {}
    for t in turns:
        before = last.get(t["speaker"])
        if before is not None and t["start"] < before["end"]:
            if t.get("backchannel"):
                dropped.add(t["seq"])
                continue
            if not before.get("backchannel"):
                raise RuntimeError(f"{m.file_id}: overlapping primary turns of {t['speaker']}")
            dropped.add(before["seq"])
        last[t["speaker"]] = t
    return [t for t in turns if t["seq"] not in dropped]


def _assign_mentions(rng: random.Random, m: Meeting, turns: list[dict]) -> None:
    for index, t in enumerate(turns):
        t["index"] = index
        if t["block"] is not None and not t.get("backchannel"):
            m.block_primaries.setdefault(t["block"], []).append(index)
    for block, primaries in sorted(m.block_primaries.items()):
        chosen = [primaries[0]]
        for k in range(1, len(primaries) - 1):
            if rng.random() < 0.45 or primaries[k + 1] - chosen[-1] > spec.MENTION_GAP:
                chosen.append(primaries[k])
        chosen.append(primaries[-1])
        for index in chosen:
            turns[index]["mention"] = True
        m.mentions.setdefault(m.block_topic[block], []).extend(chosen)


_ALL_TOPICS = None


def _topic_regex():
    global _ALL_TOPICS
    if _ALL_TOPICS is None:
        _ALL_TOPICS = {t: spec.phrase_pattern(t) for t in sorted(vocab.TOPICS)}
    return _ALL_TOPICS


def _fill(rng: random.Random, template: str, topic: str | None, roster: list[str]) -> str:
    words = vocab.TOPICS[topic] if topic else vocab.GENERAL_WORDS
    w, w2 = _sample(rng, words, 2)
    return template.format(
        topic=topic, w=w, w2=w2, verb=rng.choice(vocab.VERBS), adj=rng.choice(vocab.ADJECTIVES),
        day=rng.choice(vocab.DAYS), person=rng.choice(roster).split()[0],
    )


def _topic_text(rng: random.Random, topic: str, target: int, mention: bool, roster) -> str:
    patterns = _topic_regex()
    for _ in range(50):
        sentences = [_fill(rng, rng.choice(vocab.MENTION_SENTENCES), topic, roster)] if mention else []
        while sum(len(s.split()) for s in sentences) < target:
            sentences.append(_fill(rng, rng.choice(vocab.TOPIC_SENTENCES), topic, roster))
        text = " ".join(sentences)
        lower = text.lower()
        named = {t for t, pattern in patterns.items() if t in lower and pattern.search(text)}
        if named == ({topic} if mention else set()):
            return text
    raise RuntimeError(f"could not write a turn about {topic!r} without naming another topic")


def _write_texts(rng: random.Random, m: Meeting, turns: list[dict]) -> None:
    for t in turns:
        if "fixed" in t:
            t["text"] = t["fixed"]
            continue
        topic = m.block_topic[t["block"]]
        t["text"] = _topic_text(rng, topic, t["words"], bool(t.get("mention")), m.roster)


def _build_turns(seed: int, m: Meeting) -> None:
    rng = _rng(seed, f"meeting:{m.file_id}")
    turns = _timed_turns(rng, m, _skeleton(rng, m))
    _assign_mentions(rng, m, turns)
    _write_texts(rng, m, turns)
    m.turns = turns


# --------------------------------------------------------------------------- queries


def _query(query_id: str, rule: str, extra: dict, *, spans=(), files=(), answer=None) -> dict:
    cls = spec.RULE_CLASS[rule]
    extra = dict(extra, rule=rule)
    return {
        "query_id": query_id,
        "text": spec.FRAMES[rule].format(**extra),
        "query_class": cls,
        "gold_spans": [list(s) for s in spans],
        "gold_files": sorted(set(files)),
        "scored_on": "answer" if cls == "aggregation" else "rank",
        "answer": answer,
        "extra": {k: extra[k] for k in sorted(extra)},
    }


def _runs(m: Meeting, topic: str) -> list[tuple[str, int, int]]:
    return [(m.file_id, a, b) for a, b in spec.topic_runs(m.mentions.get(topic, []))]


def _topic_queries(seed: int, meetings: list[Meeting]) -> list[dict]:
    rng = _rng(seed, "topic-queries")
    n = len(meetings)
    by_series: dict[tuple[str, str], list[Meeting]] = {}
    for m in meetings:
        by_series.setdefault(m.series, []).append(m)
    queries = []
    # lookup: (team, kind, topic) names exactly one meeting, which discusses it in one run;
    # or (team, kind, topic) is shared within the series and the meeting's date completes it
    unique, dated = [], []
    for key in sorted(by_series):
        holders: dict[str, list[Meeting]] = {}
        for m in by_series[key]:
            for topic in sorted(set(m.topics)):
                holders.setdefault(topic, []).append(m)
        for topic in sorted(holders):
            for m in holders[topic]:
                if len(_runs(m, topic)) == 1:
                    (unique if len(holders[topic]) == 1 else dated).append((m, topic))
    rng.shuffle(unique)
    rng.shuffle(dated)
    wanted = max(1, round(0.6 * n))
    # a quarter of them name the date anyway (users do), more when unique ones run short
    with_date = dated[:max(wanted // 4, wanted - len(unique))]
    chosen = [(m, t, True) for m, t in with_date]
    chosen += [(m, t, False) for m, t in unique[:wanted - len(chosen)]]
    for i, (m, topic, with_date) in enumerate(sorted(chosen, key=lambda x: (x[0].file_id, x[1])),
                                              start=1):
        (span,) = _runs(m, topic)
        speakers = sorted({m.turns[k]["speaker"] for k in m.mentions[topic]})
        extra = {"team": m.team, "kind": m.kind, "speaker": rng.choice(speakers), "topic": topic}
        rule = "lookup-topic-speaker"
        if with_date:
            rule = "lookup-topic-speaker-date"
            extra.update(date=m.recorded.isoformat(), date_text=spec.date_text(m.recorded.isoformat()))
        queries.append(_query(f"syn-lookup-{i:04d}", rule, extra, spans=[span], files=[m.file_id]))
    # summarize: one topic of one meeting, named by its title; all of that topic's runs
    summarize = [(m, topic) for m in meetings for topic in sorted(set(m.topics))]
    rng.shuffle(summarize)
    for i, (m, topic) in enumerate(sorted(summarize[:max(1, round(0.3 * n))],
                                          key=lambda x: (x[0].file_id, x[1])), start=1):
        extra = {"team": m.team, "kind": m.kind, "number": m.number, "title": m.title, "topic": topic}
        queries.append(_query(f"syn-summarize-{i:04d}", "summarize-topic-meeting", extra,
                              spans=_runs(m, topic), files=[m.file_id]))
    # multi_file: a topic across a series; requires every meeting of it that names the topic
    multi = []
    for key in sorted(by_series):
        topics = sorted({t for m in by_series[key] for t in m.topics})
        for topic in topics:
            holders = [m for m in by_series[key] if topic in m.topics]
            if len(holders) >= 2:
                multi.append((key, topic, holders))
    rng.shuffle(multi)
    for i, ((team, kind), topic, holders) in enumerate(
            sorted(multi[:max(1, round(0.3 * n))], key=lambda x: (x[0], x[1])), start=1):
        spans = [s for m in sorted(holders, key=lambda m: m.file_id) for s in _runs(m, topic)]
        queries.append(_query(f"syn-multi-{i:04d}", "multi-file-topic-series",
                              {"team": team, "kind": kind, "topic": topic},
                              spans=spans, files=[m.file_id for m in holders]))
    return queries


def _plant(rng: random.Random, m: Meeting, sentence: str) -> None:
    candidates = [t for t in m.turns if t["block"] is not None and not t.get("backchannel")]
    turn = rng.choice(candidates)
    turn["text"] = f"{turn['text']} {sentence}"


def _aggregation_queries(seed: int, meetings: list[Meeting]) -> list[dict]:
    rng = _rng(seed, "aggregation")
    n = len(meetings)
    per_rule = min(8, max(1, n // 15))
    codes = _sample(rng, [f"{a} {b}" for a in vocab.CODE_FIRST for b in vocab.CODE_SECOND],
                    5 * per_rule)
    by_id = sorted(meetings, key=lambda m: m.file_id)
    max_files = min(8, max(2, n // 8))
    queries = []

    def phrase_files(k):
        return sorted(_sample(rng, by_id, min(k, n)), key=lambda m: m.file_id)

    for i in range(per_rule):  # R3: how many meetings discussed X
        phrase = f"{codes.pop()} {rng.choice(vocab.PHRASE_NOUNS)}"
        files = phrase_files(rng.randint(2, max_files))
        for m in files:
            for _ in range(rng.randint(1, 2)):
                _plant(rng, m, rng.choice(vocab.PLANT_SENTENCES).format(phrase=phrase))
        queries.append(_query(f"syn-agg-r3-{i + 1:02d}", "R3-count-files", {"phrase": phrase},
                              files=[m.file_id for m in files], answer=len(files)))
    for i in range(per_rule):  # R4: which meetings mention X
        phrase = f"{codes.pop()} {rng.choice(vocab.PHRASE_NOUNS)}"
        files = phrase_files(rng.randint(2, max_files))
        for m in files:
            _plant(rng, m, rng.choice(vocab.PLANT_SENTENCES).format(phrase=phrase))
        ids = [m.file_id for m in files]
        queries.append(_query(f"syn-agg-r4-{i + 1:02d}", "R4-list-files", {"phrase": phrase},
                              files=ids, answer=sorted(ids)))
    for i in range(per_rule):  # R5: how many times in total did we defer X
        subject = f"{codes.pop()} {rng.choice(vocab.EVENT_NOUNS)}"
        files = phrase_files(rng.randint(2, max_files))
        total = 0
        for j, m in enumerate(files):
            for k in range(rng.randint(1, 2)):
                if j == 0 and k == 0 or rng.random() < 0.25:
                    _plant(rng, m, rng.choice(vocab.DOUBLE_EVENT_SENTENCES).format(event=subject))
                    total += 2
                else:
                    _plant(rng, m, rng.choice(vocab.EVENT_SENTENCES).format(event=subject))
                    total += 1
        queries.append(_query(f"syn-agg-r5-{i + 1:02d}", "R5-count-events",
                              {"subject": subject, "event": spec.event_phrase(subject)},
                              files=[m.file_id for m in files], answer=total))
    by_series: dict[tuple[str, str], list[Meeting]] = {}
    for m in meetings:
        by_series.setdefault(m.series, []).append(m)
    eligible = [key for key in sorted(by_series) if len(by_series[key]) >= 2]
    for i, key in enumerate(sorted(_sample(rng, eligible, per_rule))):  # R6
        group = by_series[key]
        counts = _attendance(group)
        top = max(counts.values())
        winners = [p for p, c in counts.items() if c == top]
        if len(winners) != 1:
            continue
        queries.append(_query(f"syn-agg-r6-{i + 1:02d}", "R6-speaker-top",
                              {"team": key[0], "kind": key[1]},
                              files=[m.file_id for m in group],
                              answer={"speaker": winners[0], "count": top}))
    months = sorted({(m.recorded.year, m.recorded.month) for m in meetings})
    for i in range(per_rule):  # R7: how many meetings in <month> discussed X
        year, month = rng.choice(months)
        inside = [m for m in by_id if (m.recorded.year, m.recorded.month) == (year, month)]
        outside = [m for m in by_id if (m.recorded.year, m.recorded.month) != (year, month)]
        if not outside:
            continue
        phrase = f"{codes.pop()} {rng.choice(vocab.PHRASE_NOUNS)}"
        chosen_in = _sample(rng, inside, rng.randint(1, min(3, len(inside))))
        chosen_out = _sample(rng, outside, rng.randint(1, min(3, len(outside))))
        for m in sorted(chosen_in + chosen_out, key=lambda m: m.file_id):
            _plant(rng, m, rng.choice(vocab.PLANT_SENTENCES).format(phrase=phrase))
        extra = {"phrase": phrase, "month": f"{year:04d}-{month:02d}",
                 "month_name": spec.MONTH_NAMES[month - 1], "year": year}
        queries.append(_query(f"syn-agg-r7-{i + 1:02d}", "R7-temporal-count", extra,
                              files=[m.file_id for m in chosen_in + chosen_out],
                              answer=len(chosen_in)))
    return queries


# --------------------------------------------------------------------------- entry


def build(seed: int, n_meetings: int) -> tuple[list[Meeting], list[dict]]:
    """The whole corpus in memory: meetings (with turns) and query records."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if isinstance(n_meetings, bool) or not isinstance(n_meetings, int) or n_meetings < MIN_MEETINGS:
        raise ValueError(f"meetings must be an integer >= {MIN_MEETINGS}, got {n_meetings!r}")
    meetings, _pools = _plan_world(seed, n_meetings)
    rng = _rng(seed, "rosters")
    by_series: dict[tuple[str, str], list[Meeting]] = {}
    for m in meetings:
        by_series.setdefault(m.series, []).append(m)
    for key in sorted(by_series):
        if len(by_series[key]) >= 2:
            _make_unique_winner(rng, by_series[key])
    from tqdm import tqdm

    for m in tqdm(meetings, desc="synthesising meetings", unit="meeting", disable=None):
        _build_turns(seed, m)
    queries = _topic_queries(seed, meetings) + _aggregation_queries(seed, meetings)
    return meetings, sorted(queries, key=lambda q: q["query_id"])


def meeting_record(m: Meeting) -> dict:
    """The JSON object written to ``meetings/<file_id>.json``."""
    turns = [{"index": t["index"], "speaker": t["speaker"], "start": t["start"] / 1000,
              "end": t["end"] / 1000, "text": t["text"]} for t in m.turns]
    return {
        "file_id": m.file_id, "title": m.title, "team": m.team, "kind": m.kind,
        "series_number": m.number, "recorded_date": m.recorded.isoformat(),
        "date_source": spec.DATE_SOURCE, "roster": sorted(m.roster), "timing": "synthetic",
        "duration": max(t["end"] for t in turns), "turns": turns,
    }
