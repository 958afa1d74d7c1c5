"""The synthetic meeting corpus: determinism, realism features, gold by construction, the
validator (each check rejects a corpus corrupted for it), budget closure, the CLI."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from harness.core.canonical import canonical_json, canonical_line
from ingestion import load_corpus
from ingestion.cli import main
from ingestion.synthetic import generate, spec, vocab
from ingestion.synthetic.validate import CHECKS, validate

from .conftest import SYNTH_MEETINGS, SYNTH_SEED


def file_digests(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_two_runs_with_one_seed_are_byte_identical(synthetic_dir, tmp_path):
    again = generate(SYNTH_SEED, SYNTH_MEETINGS, tmp_path / "again")
    first, second = file_digests(synthetic_dir), file_digests(again)
    assert len(first) == SYNTH_MEETINGS + 2  # meetings, queries.jsonl, manifest.json
    assert first == second
    other = file_digests(generate(SYNTH_SEED + 1, SYNTH_MEETINGS, tmp_path / "other"))
    assert other["queries.jsonl"] != first["queries.jsonl"]


def test_the_valid_corpus_passes_every_check(synthetic_dir):
    assert len(CHECKS) >= 10
    assert validate(synthetic_dir) == []


@pytest.fixture(scope="module")
def corpus(synthetic_dir):
    return load_corpus(f"synthetic:{synthetic_dir}")


def test_corpus_model_and_provenance(corpus):
    assert corpus.name == "synthetic"
    assert (corpus.source.licence, corpus.source.tier) == ("CC0-1.0", "A")
    assert f"seed {SYNTH_SEED}" in corpus.source.version
    assert all(f.file_id.startswith("syn") for f in corpus.files)
    assert all(q.query_id.startswith("syn") for q in corpus.queries)
    for f in corpus.files:
        assert f.title == f"{f.team} — {f.kind} #{f.title.rsplit('#', 1)[1]}"
        assert (f.date_source, f.timing) == ("corpus-record", "synthetic")
        assert f.recorded_date and len(f.roster) >= 3
    classes = {q.query_class for q in corpus.queries}
    assert classes == {"lookup", "summarize", "multi_file", "aggregation"}


def test_transcripts_have_overlaps_tied_onsets_backchannels_and_long_turns(corpus):
    by_file = corpus.turns_by_file()
    tied = overlaps = backchannels = long_turns = 0
    for turns in by_file.values():
        for a, b in zip(turns, turns[1:]):
            tied += a.start == b.start
            overlaps += b.start < a.end
        backchannels += sum(t.text in vocab.BACKCHANNELS for t in turns)
        long_turns += sum(t.words > 200 for t in turns)
    assert tied and overlaps and backchannels and long_turns
    # a tied backchannel sorts before the turn it shares an onset with (it ends first)
    for turns in by_file.values():
        for a, b in zip(turns, turns[1:]):
            if a.start == b.start:
                assert a.end < b.end and a.text in vocab.BACKCHANNELS


def test_aggregation_frames_and_answers(corpus):
    agg = [q for q in corpus.queries if q.query_class == "aggregation"]
    rules = {dict(q.extra)["rule"] for q in agg}
    assert rules == {"R3-count-files", "R4-list-files", "R5-count-events", "R6-speaker-top",
                     "R7-temporal-count"}
    files = {f.file_id: f for f in corpus.files}
    texts = {}
    for t in corpus.turns:
        texts.setdefault(t.file_id, []).append(t.text)
    for q in agg:
        x = dict(q.extra)
        assert q.scored_on == "answer" and q.gold_spans == ()
        if x["rule"] == "R4-list-files":
            assert q.answer == sorted(q.answer) == list(q.gold_files)
        if x["rule"] == "R5-count-events":
            # some turn holds the event twice
            assert any(t.count(x["event"]) == 2 for f in q.gold_files for t in texts[f])
        if x["rule"] == "R6-speaker-top":
            assert set(q.answer) == {"speaker", "count"}
        if x["rule"] == "R7-temporal-count":
            outside = [f for f in q.gold_files if not files[f].recorded_date.startswith(x["month"])]
            assert outside and q.answer == len(q.gold_files) - len(outside)
    multi = [q for q in corpus.queries if q.query_class == "multi_file"]
    assert multi and all(len(q.gold_files) >= 2 for q in multi)


def test_lookup_questions_name_title_and_roster_words(corpus):
    files = {f.file_id: f for f in corpus.files}
    rules = set()
    for q in corpus.queries:
        if q.query_class != "lookup":
            continue
        x = dict(q.extra)
        rules.add(x["rule"])
        f = files[q.gold_files[0]]
        assert (x["team"], x["kind"]) == (f.team, f.kind) and x["speaker"] in f.roster
        assert x["team"] in q.text and x["kind"] in q.text and x["speaker"] in q.text
        if x["rule"] == "lookup-topic-speaker-date":
            # the date completes the description: same team, kind and topic elsewhere
            assert x["date"] == f.recorded_date and x["date_text"] in q.text
            others = [g for g in corpus.files if (g.team, g.kind) == (f.team, f.kind) and g is not f]
            assert others
    assert rules == {"lookup-topic-speaker", "lookup-topic-speaker-date"}


def test_topic_phrases_never_contain_one_another():
    topics = sorted(vocab.TOPICS)
    for a in topics:
        for b in topics:
            assert a == b or spec.count_phrase(b, a) == 0


def test_generator_reports_its_own_bm25_r_at_1_and_near_duplicate_rate(synthetic_dir, corpus):
    from ingestion.composition import composition

    report = json.loads((synthetic_dir / "manifest.json").read_text())["report"]
    row = composition(corpus)["groups"]["all"]
    assert 0 <= report["bm25_r_at_1"] <= 1 and 0 <= report["near_duplicate_rate"] <= 1
    assert (report["bm25_r_at_1"], report["near_duplicate_rate"]) == \
        (pytest.approx(row["r_at_1"]), pytest.approx(row["near_duplicate_rate"]))
    assert report["rank_queries"] == sum(1 for q in corpus.queries if q.scored_on == "rank")


# --------------------------------------------------------------------------- the validator


class Raw:
    """A copy of the corpus as raw JSON, to corrupt and write back."""

    def __init__(self, root: Path):
        self.root = root
        self.meetings = {p.stem: json.loads(p.read_text())
                         for p in sorted((root / "meetings").glob("*.json"))}
        self.queries = [json.loads(line) for line in (root / "queries.jsonl").read_text().splitlines()]

    def query(self, rule, pred=lambda q: True):
        return next(q for q in self.queries if q["extra"]["rule"] == rule and pred(q))

    def write(self, resign=True):
        for stem, m in self.meetings.items():
            (self.root / "meetings" / f"{stem}.json").write_text(canonical_json(m), encoding="utf-8")
        (self.root / "queries.jsonl").write_text("".join(canonical_line(q) + "\n" for q in self.queries),
                                                 encoding="utf-8")
        if resign:
            manifest = json.loads((self.root / "manifest.json").read_text())
            for rel in manifest["files"]:
                manifest["files"][rel] = hashlib.sha256((self.root / rel).read_bytes()).hexdigest()
            (self.root / "manifest.json").write_text(canonical_json(manifest), encoding="utf-8")


def _titles_in_summaries(raw):
    return {q["extra"]["title"] for q in raw.queries if q["extra"]["rule"] == "summarize-topic-meeting"}


def corrupt_manifest(raw):
    m = raw.meetings[sorted(raw.meetings)[0]]
    m["turns"][0]["text"] += " (edited)"
    raw.write(resign=False)


def corrupt_ids(raw):
    raw.queries[1]["query_id"] = raw.queries[0]["query_id"]
    raw.write()


def corrupt_turn_order(raw):
    turns = raw.meetings[sorted(raw.meetings)[0]]["turns"]
    turns[3]["start"] = turns[2]["start"] - 0.001  # opening-round turns of different people
    raw.write()


def corrupt_rosters(raw):
    raw.meetings[sorted(raw.meetings)[0]]["turns"][0]["speaker"] = "Nobody Atall"
    raw.write()


def corrupt_titles(raw):
    used = _titles_in_summaries(raw)
    m = next(m for m in raw.meetings.values() if m["title"] not in used)
    m["title"] += " (copy)"
    raw.write()


def corrupt_dates(raw):
    raw.meetings[sorted(raw.meetings)[0]]["date_source"] = "filename"
    raw.write()


def corrupt_spans(raw):
    q = raw.query("R3-count-files")
    q["gold_spans"] = [[q["gold_files"][0], 0, 0]]
    raw.write()


def _shift_first(q):
    f, a, b = q["gold_spans"][0]
    q["gold_spans"][0] = [f, a - 1, b]


def corrupt_lookup(raw):
    _shift_first(raw.query("lookup-topic-speaker"))
    raw.write()


def corrupt_summarize(raw):
    _shift_first(raw.query("summarize-topic-meeting"))
    raw.write()


def corrupt_multi_file(raw):
    q = raw.query("multi-file-topic-series")
    dropped = q["gold_files"].pop()
    q["gold_spans"] = [s for s in q["gold_spans"] if s[0] != dropped]
    raw.write()


def corrupt_r3(raw):
    raw.query("R3-count-files")["answer"] += 1
    raw.write()


def corrupt_r4(raw):
    q = raw.query("R4-list-files")
    q["answer"] = q["answer"][:-1]
    raw.write()


def corrupt_r5(raw):
    q = raw.query("R5-count-events")
    turn = raw.meetings[q["gold_files"][0]]["turns"][0]
    turn["text"] += f" Also we {q['extra']['event']} once more."  # one more event in the text
    raw.write()


def corrupt_r6(raw):
    raw.query("R6-speaker-top")["answer"]["count"] += 1
    raw.write()


def corrupt_r7(raw):
    raw.query("R7-temporal-count")["answer"] += 1
    raw.write()


def corrupt_frames(raw):
    raw.queries[0]["text"] += " Please."
    raw.write()


CORRUPTIONS = {
    "manifest": corrupt_manifest, "ids": corrupt_ids, "turn_order": corrupt_turn_order,
    "rosters": corrupt_rosters, "titles": corrupt_titles, "dates": corrupt_dates,
    "spans": corrupt_spans, "lookup": corrupt_lookup, "summarize": corrupt_summarize,
    "multi_file": corrupt_multi_file, "R3": corrupt_r3, "R4": corrupt_r4, "R5": corrupt_r5,
    "R6": corrupt_r6, "R7": corrupt_r7, "frames": corrupt_frames,
}


def test_every_check_has_a_corruption():
    assert set(CORRUPTIONS) == set(CHECKS)


@pytest.mark.parametrize("check", sorted(CORRUPTIONS))
def test_each_check_rejects_a_corpus_corrupted_for_it(synthetic_dir, tmp_path, check):
    copy = tmp_path / "corpus"
    shutil.copytree(synthetic_dir, copy)
    CORRUPTIONS[check](Raw(copy))
    failed = {f.check for f in validate(copy)}
    assert failed == {check}
    with pytest.raises(ValueError, match=f"synthetic corpus refused.*'{check}'"):
        load_corpus(f"synthetic:{copy}")


def test_a_dated_lookup_pointing_at_another_meeting_is_rejected(synthetic_dir, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(synthetic_dir, copy)
    raw = Raw(copy)
    q = raw.query("lookup-topic-speaker-date")
    gold = raw.meetings[q["gold_files"][0]]
    other = next(m for m in raw.meetings.values() if (m["team"], m["kind"]) ==
                 (gold["team"], gold["kind"]) and m is not gold)
    q["extra"].update(date=other["recorded_date"], date_text=spec.date_text(other["recorded_date"]))
    q["text"] = spec.FRAMES[q["extra"]["rule"]].format(**q["extra"])
    raw.write()
    assert {f.check for f in validate(copy)} == {"lookup"}


def test_unreadable_corpus_is_refused(synthetic_dir, tmp_path):
    copy = tmp_path / "corpus"
    shutil.copytree(synthetic_dir, copy)
    (copy / "queries.jsonl").write_text("{not json\n", encoding="utf-8")
    assert [f.check for f in validate(copy)] == ["readable"]
    with pytest.raises(ValueError, match="unknown validator checks"):
        validate(copy, checks=["nope"])


# --------------------------------------------------------------------------- budget, CLI


def test_budget_keeps_only_queries_whose_gold_files_are_all_selected(tmp_path):
    out = generate(SYNTH_SEED, SYNTH_MEETINGS, tmp_path / "b", budget=12)
    manifest = json.loads((out / "manifest.json").read_text())
    sel = manifest["selection"]
    kept = [json.loads(line) for line in (out / "queries.jsonl").read_text().splitlines()]
    selected = {p.stem for p in (out / "meetings").glob("*.json")}
    assert len(selected) == sel["meetings_selected"] == 12
    assert all(set(q["gold_files"]) <= selected for q in kept)
    assert sel["queries_kept"] == len(kept)
    assert sel["queries_kept"] + sel["queries_dropped"] == sel["queries_generated"]
    assert sum(sel["queries_dropped_by_class"].values()) == sel["queries_dropped"] > 0
    # the full corpus's queries that survive are the kept ones, unchanged
    full_queries = generate(SYNTH_SEED, SYNTH_MEETINGS, tmp_path / "full") / "queries.jsonl"
    full = {q["query_id"]: q for q in (json.loads(line) for line in full_queries.read_text().splitlines())}
    assert all(full[q["query_id"]] == q for q in kept)
    assert validate(out) == []


def test_generate_refuses_a_foreign_directory_and_replaces_its_own(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(ValueError, match=r"holds 1 entry this product did not write \(notes\.txt\)"):
        generate(1, 6, foreign)
    assert (foreign / "notes.txt").read_text() == "keep me"
    out = generate(1, 6, tmp_path / "own")
    generate(2, 6, out)
    assert json.loads((out / "manifest.json").read_text())["seed"] == 2
    with pytest.raises(ValueError, match="meetings must be an integer"):
        generate(1, 2, tmp_path / "tiny")


def test_synth_and_validate_cli(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["synth", "--seed", "3", "--meetings", "8", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "own BM25 R@1" in printed and "near-duplicate rate" in printed
    assert main(["validate", str(out)]) == 0
    assert f"{len(CHECKS)}/{len(CHECKS)} checks passed" in capsys.readouterr().out
    assert main(["stats", f"synthetic:{out}", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["files"] == 8 and stats["dated_files"] == 8 and stats["tier"] == "A"


def test_generate_never_takes_a_sibling_for_its_temporary_directory(tmp_path):
    """The corpus was built in ``.NAME.tmp-PID``, deleting whatever stood there first."""
    import os

    sibling = tmp_path / f".own.tmp-{os.getpid()}"
    sibling.mkdir()
    (sibling / "keep.txt").write_text("mine", encoding="utf-8")
    out = generate(1, 6, tmp_path / "own")
    assert (sibling / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == [sibling.name, out.name]
