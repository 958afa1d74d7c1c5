"""The synthetic corpus validator: re-derives every gold set from the written text.

Each check is a small function registered in :data:`CHECKS` by name; :func:`validate` runs all
of them and returns every failure (check name + message), so a corrupt corpus names what is
wrong.  A check that meets a malformed record fails with that as its message instead of
crashing.  The loader refuses a corpus with any failure; the generator refuses to publish one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from ingestion.synthetic import spec


@dataclass(frozen=True)
class Failure:
    check: str
    message: str


class Context:
    """The written corpus, read once, with the text look-ups the checks share."""

    def __init__(self, root: Path):
        self.root = root
        self.manifest = json.loads((root / spec.MANIFEST).read_text(encoding="utf-8"))
        self.meeting_files: list[tuple[str, dict]] = []
        for file in sorted((root / spec.MEETINGS_DIR).glob("*.json")):
            self.meeting_files.append((file.stem, json.loads(file.read_text(encoding="utf-8"))))
        self.meetings = {m["file_id"]: m for _, m in self.meeting_files}
        self.queries = []
        with (root / spec.QUERIES).open(encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    self.queries.append(json.loads(line))
        self._mentions: dict[tuple[str, str], list[int]] = {}
        self._lower = {f: "\n".join(t["text"] for t in m["turns"]).lower()
                       for f, m in self.meetings.items()}

    def queries_of(self, rule: str) -> list[dict]:
        return [q for q in self.queries if q.get("extra", {}).get("rule") == rule]

    def mentions(self, file_id: str, phrase: str) -> list[int]:
        """Indexes of the turns of ``file_id`` naming ``phrase``."""
        key = (file_id, phrase)
        if key not in self._mentions:
            if phrase.lower() not in self._lower[file_id]:  # cheap pre-filter, then the exact rule
                self._mentions[key] = []
            else:
                pattern = spec.phrase_pattern(phrase)
                self._mentions[key] = [t["index"] for t in self.meetings[file_id]["turns"]
                                       if pattern.search(t["text"])]
        return self._mentions[key]

    def files_mentioning(self, phrase: str) -> list[str]:
        return sorted(f for f in self.meetings if self.mentions(f, phrase))

    def series(self, team: str, kind: str) -> list[str]:
        return sorted(f for f, m in self.meetings.items() if m["team"] == team and m["kind"] == kind)

    def runs(self, file_id: str, phrase: str) -> list[list]:
        return [[file_id, a, b] for a, b in spec.topic_runs(self.mentions(file_id, phrase))]


# --------------------------------------------------------------------------- checks


def check_manifest(ctx: Context) -> list[str]:
    out = []
    m = ctx.manifest
    if m.get("generator") != spec.GENERATOR:
        out.append(f"generator is {m.get('generator')!r}, expected {spec.GENERATOR!r}")
    if m.get("licence") != spec.LICENCE:
        out.append(f"licence is {m.get('licence')!r}, expected {spec.LICENCE!r}")
    for key in ("seed", "meetings_requested"):
        if isinstance(m.get(key), bool) or not isinstance(m.get(key), int):
            out.append(f"field {key!r} must be an integer, got {m.get(key)!r}")
    listed = m.get("files") or {}
    on_disk = sorted([f"{spec.MEETINGS_DIR}/{stem}.json" for stem, _ in ctx.meeting_files]
                     + [spec.QUERIES])
    for rel in sorted(set(on_disk) - set(listed)):
        out.append(f"{rel} is not listed in the manifest")
    for rel in sorted(set(listed) - set(on_disk)):
        out.append(f"{rel} is listed in the manifest but missing")
    for rel in sorted(set(listed) & set(on_disk)):
        actual = hashlib.sha256((ctx.root / rel).read_bytes()).hexdigest()
        if actual != listed[rel]:
            out.append(f"{rel}: sha256 {actual} differs from the manifest's {listed[rel]}")
    counts = m.get("counts") or {}
    if counts.get("files") != len(ctx.meetings) or counts.get("queries") != len(ctx.queries):
        out.append(f"counts {counts.get('files')} files / {counts.get('queries')} queries differ "
                   f"from the {len(ctx.meetings)} / {len(ctx.queries)} written")
    return out


def check_ids(ctx: Context) -> list[str]:
    out = []
    seen = set()
    for stem, m in ctx.meeting_files:
        fid = m.get("file_id")
        if fid != stem:
            out.append(f"{spec.MEETINGS_DIR}/{stem}.json holds file_id {fid!r}")
        if not str(fid).startswith(spec.ID_PREFIX):
            out.append(f"file id {fid!r} lacks the {spec.ID_PREFIX!r} prefix")
        if fid in seen:
            out.append(f"file id {fid!r} is used twice")
        seen.add(fid)
    qids = set()
    for q in ctx.queries:
        qid = q.get("query_id")
        if not str(qid).startswith(spec.ID_PREFIX):
            out.append(f"query id {qid!r} lacks the {spec.ID_PREFIX!r} prefix")
        if qid in qids:
            out.append(f"query id {qid!r} is used twice")
        qids.add(qid)
    return out


def check_turn_order(ctx: Context) -> list[str]:
    out = []
    for fid, m in sorted(ctx.meetings.items()):
        turns = m["turns"]
        if [t["index"] for t in turns] != list(range(len(turns))):
            out.append(f"{fid}: turn indexes are not 0..{len(turns) - 1} in order")
            continue
        keys = [(t["start"], t["end"], t["index"]) for t in turns]
        for a, b in zip(keys, keys[1:]):
            if not a < b:
                out.append(f"{fid}: turn {b[2]} is out of the (start, end, index) order")
                break
        for t in turns:
            if not 0 <= t["start"] < t["end"]:
                out.append(f"{fid}: turn {t['index']} has start {t['start']} / end {t['end']}")
                break
    return out


def check_rosters(ctx: Context) -> list[str]:
    out = []
    for fid, m in sorted(ctx.meetings.items()):
        roster = m["roster"]
        if roster != sorted(set(roster)):
            out.append(f"{fid}: roster is not sorted and unique")
        speakers = {t["speaker"] for t in m["turns"]}
        for s in sorted(speakers - set(roster)):
            out.append(f"{fid}: speaker {s!r} is not on the roster")
        for s in sorted(set(roster) - speakers):
            out.append(f"{fid}: {s!r} is on the roster but never speaks")
        last_end: dict[str, float] = {}
        for t in sorted(m["turns"], key=lambda t: (t["start"], t["end"], t["index"])):
            if t["start"] < last_end.get(t["speaker"], float("-inf")):
                out.append(f"{fid}: turn {t['index']} overlaps an earlier turn of {t['speaker']!r}")
            last_end[t["speaker"]] = max(last_end.get(t["speaker"], float("-inf")), t["end"])
    return out


def check_titles(ctx: Context) -> list[str]:
    out = []
    series: dict[tuple[str, str], list[dict]] = {}
    for fid, m in sorted(ctx.meetings.items()):
        expected = spec.title_of(m["team"], m["kind"], m["series_number"])
        if m["title"] != expected:
            out.append(f"{fid}: title {m['title']!r}, expected {expected!r}")
        series.setdefault((m["team"], m["kind"]), []).append(m)
    for key, group in sorted(series.items()):
        group = sorted(group, key=lambda m: m["series_number"])
        numbers = [m["series_number"] for m in group]
        whole = ctx.manifest.get("budget") is None  # a budget subset keeps original numbers
        if (whole and numbers != list(range(1, len(group) + 1))) or len(set(numbers)) != len(numbers) \
                or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in numbers):
            out.append(f"series {key}: numbers {numbers} are not "
                       + (f"1..{len(group)}" if whole else "distinct positive integers"))
        dates = [m["recorded_date"] for m in group]
        if any(not a < b for a, b in zip(dates, dates[1:])):
            out.append(f"series {key}: numbering does not follow the recorded dates {dates}")
    return out


def check_dates(ctx: Context) -> list[str]:
    out = []
    for fid, m in sorted(ctx.meetings.items()):
        try:
            day = date.fromisoformat(m["recorded_date"])
        except (TypeError, ValueError):
            out.append(f"{fid}: recorded_date {m.get('recorded_date')!r} is not an ISO date")
            continue
        if day.isoformat() != m["recorded_date"] or day.weekday() > 4:
            out.append(f"{fid}: recorded_date {m['recorded_date']!r} is not a canonical weekday")
        if m.get("date_source") != spec.DATE_SOURCE:
            out.append(f"{fid}: date_source {m.get('date_source')!r}, expected {spec.DATE_SOURCE!r}")
        if m.get("timing") != "synthetic":
            out.append(f"{fid}: timing {m.get('timing')!r}, expected 'synthetic'")
    return out


def check_spans(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries:
        qid, rule = q["query_id"], q["extra"].get("rule")
        if rule not in spec.RULE_CLASS:
            out.append(f"{qid}: unknown rule {rule!r}")
            continue
        cls = spec.RULE_CLASS[rule]
        if q["query_class"] != cls:
            out.append(f"{qid}: class {q['query_class']!r}, rule {rule!r} is {cls!r}")
        expected_on = "answer" if cls == "aggregation" else "rank"
        if q["scored_on"] != expected_on:
            out.append(f"{qid}: scored_on {q['scored_on']!r}, expected {expected_on!r}")
        files = q["gold_files"]
        if files != sorted(set(files)) or not files:
            out.append(f"{qid}: gold_files must be a non-empty sorted set, got {files}")
        for f in files:
            if f not in ctx.meetings:
                out.append(f"{qid}: gold file {f!r} does not exist")
        if cls == "aggregation":
            if q["gold_spans"]:
                out.append(f"{qid}: an aggregation query carries no turn spans")
            continue
        if not q["gold_spans"]:
            out.append(f"{qid}: a rank-scored query needs gold spans")
        for f, a, b in q["gold_spans"]:
            n = len(ctx.meetings[f]["turns"]) if f in ctx.meetings else 0
            if not (isinstance(a, int) and isinstance(b, int) and 0 <= a <= b < n):
                out.append(f"{qid}: span {[f, a, b]} is not an inclusive range inside {n} turns")
        if sorted({s[0] for s in q["gold_spans"]}) != files:
            out.append(f"{qid}: gold_files {files} differ from the files of its spans")
    return out


def check_lookup(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries_of("lookup-topic-speaker") + ctx.queries_of("lookup-topic-speaker-date"):
        x = q["extra"]
        found = [f for f in ctx.series(x["team"], x["kind"]) if ctx.mentions(f, x["topic"])]
        if "date" in x:
            if x["date_text"] != spec.date_text(x["date"]):
                out.append(f"{q['query_id']}: date_text {x['date_text']!r} is not {x['date']}")
                continue
            found = [f for f in found if ctx.meetings[f]["recorded_date"] == x["date"]]
        if found != q["gold_files"] or len(found) != 1:
            out.append(f"{q['query_id']}: {x['team']} {x['kind']} meetings naming "
                       f"{x['topic']!r} are {found}, gold says {q['gold_files']}")
            continue
        runs = ctx.runs(found[0], x["topic"])
        if len(runs) != 1 or runs != q["gold_spans"]:
            out.append(f"{q['query_id']}: topic runs {runs} differ from gold {q['gold_spans']}")
            continue
        turns = ctx.meetings[found[0]]["turns"]
        speakers = {turns[i]["speaker"] for i in ctx.mentions(found[0], x["topic"])}
        if x["speaker"] not in speakers:
            out.append(f"{q['query_id']}: {x['speaker']!r} never names {x['topic']!r} there")
    return out


def check_summarize(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries_of("summarize-topic-meeting"):
        x = q["extra"]
        titled = sorted(f for f, m in ctx.meetings.items() if m["title"] == x["title"])
        if titled != q["gold_files"] or len(titled) != 1:
            out.append(f"{q['query_id']}: meetings titled {x['title']!r} are {titled}, "
                       f"gold says {q['gold_files']}")
            continue
        runs = ctx.runs(titled[0], x["topic"])
        if not runs or runs != q["gold_spans"]:
            out.append(f"{q['query_id']}: topic runs {runs} differ from gold {q['gold_spans']}")
    return out


def check_multi_file(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries_of("multi-file-topic-series"):
        x = q["extra"]
        found = [f for f in ctx.series(x["team"], x["kind"]) if ctx.mentions(f, x["topic"])]
        if found != q["gold_files"] or len(found) < 2:
            out.append(f"{q['query_id']}: the series' meetings naming {x['topic']!r} are "
                       f"{found}, gold says {q['gold_files']} (at least 2 required)")
            continue
        runs = [r for f in found for r in ctx.runs(f, x["topic"])]
        if runs != q["gold_spans"]:
            out.append(f"{q['query_id']}: topic runs {runs} differ from gold {q['gold_spans']}")
    return out


def check_r3(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries_of("R3-count-files"):
        found = ctx.files_mentioning(q["extra"]["phrase"])
        if found != q["gold_files"] or q["answer"] != len(found):
            out.append(f"{q['query_id']}: {len(found)} meetings name the phrase ({found}); gold "
                       f"files {q['gold_files']}, answer {q['answer']!r}")
    return out


def check_r4(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries_of("R4-list-files"):
        found = ctx.files_mentioning(q["extra"]["phrase"])
        if found != q["gold_files"] or q["answer"] != found:
            out.append(f"{q['query_id']}: meetings naming the phrase are {found}; gold files "
                       f"{q['gold_files']}, answer {q['answer']!r}")
    return out


def check_r5(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries_of("R5-count-events"):
        event = q["extra"]["event"]
        if event != spec.event_phrase(q["extra"]["subject"]):
            out.append(f"{q['query_id']}: event {event!r} is not the subject's event phrase")
            continue
        total, files = 0, []
        for fid in ctx.files_mentioning(event):
            n = sum(spec.count_phrase(t["text"], event) for t in ctx.meetings[fid]["turns"])
            total += n
            if n:
                files.append(fid)
        if total != q["answer"] or files != q["gold_files"]:
            out.append(f"{q['query_id']}: {total} occurrences in {files}; gold answer "
                       f"{q['answer']!r}, files {q['gold_files']}")
    return out


def check_r6(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries_of("R6-speaker-top"):
        x = q["extra"]
        series = ctx.series(x["team"], x["kind"])
        counts: dict[str, int] = {}
        for f in series:
            for person in ctx.meetings[f]["roster"]:
                counts[person] = counts.get(person, 0) + 1
        top = max(counts.values()) if counts else 0
        winners = sorted(p for p, c in counts.items() if c == top)
        expected = {"speaker": winners[0], "count": top} if len(winners) == 1 else None
        if series != q["gold_files"] or expected is None or q["answer"] != expected:
            out.append(f"{q['query_id']}: attendance winners {winners} with {top} sessions in "
                       f"{series}; gold answer {q['answer']!r}, files {q['gold_files']}")
    return out


def check_r7(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries_of("R7-temporal-count"):
        x = q["extra"]
        found = ctx.files_mentioning(x["phrase"])
        inside = [f for f in found if ctx.meetings[f]["recorded_date"][:7] == x["month"]]
        if found != q["gold_files"] or q["answer"] != len(inside):
            out.append(f"{q['query_id']}: {len(inside)} of {found} fall in {x['month']}; gold "
                       f"answer {q['answer']!r}, files {q['gold_files']}")
        elif len(inside) == len(found):
            out.append(f"{q['query_id']}: no mention outside {x['month']}, so the month filter "
                       "is never tested")
    return out


def check_frames(ctx: Context) -> list[str]:
    out = []
    for q in ctx.queries:
        rule = q["extra"].get("rule")
        if rule not in spec.FRAMES:
            out.append(f"{q['query_id']}: no question frame for rule {rule!r}")
            continue
        expected = spec.FRAMES[rule].format(**q["extra"])
        if q["text"] != expected:
            out.append(f"{q['query_id']}: text {q['text']!r} does not match its frame {expected!r}")
    return out


#: check name -> function(Context) -> list of messages
CHECKS = {
    "manifest": check_manifest,
    "ids": check_ids,
    "turn_order": check_turn_order,
    "rosters": check_rosters,
    "titles": check_titles,
    "dates": check_dates,
    "spans": check_spans,
    "lookup": check_lookup,
    "summarize": check_summarize,
    "multi_file": check_multi_file,
    "R3": check_r3,
    "R4": check_r4,
    "R5": check_r5,
    "R6": check_r6,
    "R7": check_r7,
    "frames": check_frames,
}


def validate(path, checks=None) -> list[Failure]:
    """Every failure of the corpus at ``path`` (empty list: valid).  ``checks`` limits the run
    to some names of :data:`CHECKS`."""
    root = Path(path)
    names = sorted(CHECKS) if checks is None else list(checks)
    unknown = [n for n in names if n not in CHECKS]
    if unknown:
        raise ValueError(f"unknown validator checks {unknown}; known: {sorted(CHECKS)}")
    try:
        ctx = Context(root)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [Failure("readable", f"{root}: cannot read the corpus: {exc}")]
    failures = []
    for name in names:
        try:
            messages = CHECKS[name](ctx)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            messages = [f"malformed record ({type(exc).__name__}: {exc})"]
        failures.extend(Failure(name, message) for message in messages)
    return failures
