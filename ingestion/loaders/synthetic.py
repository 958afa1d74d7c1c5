"""The synthetic meeting corpus as written by ``python -m ingestion synth`` (layout in
:mod:`ingestion.synthetic.spec`).  Loading validates first: a corpus that fails any
validator check is refused, naming the checks."""

from __future__ import annotations

from pathlib import Path

from harness.core.formats import FormatError, read_json_object, read_jsonl
from harness.core.records import Query
from ingestion.corpus import MEETING, Corpus, FileRecord, Turn
from ingestion.digest import corpus_sha256
from ingestion.attribution import generated_source_info
from ingestion.synthetic import spec


def read_directory(path) -> tuple[dict, list[dict], list[dict]]:
    """``(manifest, meetings, queries)`` as raw records; refuses unreadable files."""
    root = Path(path)
    if not (root / spec.MANIFEST).is_file():
        raise FileNotFoundError(f"{root}: no {spec.MANIFEST}; not a synthetic corpus directory "
                                "(create one with: python -m ingestion synth --out DIR)")
    manifest = read_json_object(root / spec.MANIFEST)
    if not isinstance(manifest, dict):
        raise FormatError(root / spec.MANIFEST, None, None, "expected a JSON object")
    meetings = []
    for file in sorted((root / spec.MEETINGS_DIR).glob("*.json")):
        record = read_json_object(file)
        if not isinstance(record, dict):
            raise FormatError(file, None, None, "expected a JSON object")
        meetings.append(record)
    queries = [obj for _, obj in read_jsonl(root / spec.QUERIES)]
    return manifest, meetings, queries


def corpus_from_records(manifest: dict, meetings: list[dict], queries: list[dict],
                        name: str = "synthetic") -> Corpus:
    files, turns = [], []
    for m in sorted(meetings, key=lambda m: m["file_id"]):
        files.append(FileRecord(
            file_id=m["file_id"], title=m["title"], series=f"{m['team']} — {m['kind']}",
            team=m["team"], kind=m["kind"], recorded_date=m["recorded_date"],
            date_source=m["date_source"], duration=float(m["duration"]), timing=m["timing"],
            roster=tuple(m["roster"]),
        ))
        turns.extend(Turn(m["file_id"], t["index"], t["speaker"], float(t["start"]),
                          float(t["end"]), t["text"]) for t in m["turns"])
    records = []
    for q in sorted(queries, key=lambda q: q["query_id"]):
        records.append(Query(
            query_id=q["query_id"], text=q["text"], query_class=q["query_class"], corpus=name,
            gold_spans=tuple((f, int(a), int(b)) for f, a, b in q["gold_spans"]),
            gold_files=tuple(q["gold_files"]), scored_on=q["scored_on"], answer=q["answer"],
            extra=tuple(sorted(q["extra"].items())),
        ))
    files, records = tuple(files), tuple(records)
    turns = tuple(sorted(turns, key=lambda t: (t.file_id, t.start, t.end, t.index)))
    sha = corpus_sha256(MEETING, files, turns, (), records)
    version = (f"generator {manifest.get('generator_version')}; seed {manifest.get('seed')}; "
               f"meetings {manifest.get('meetings_requested')}; budget {manifest.get('budget')}")
    notes = {"seed": manifest.get("seed"), "generator_version": manifest.get("generator_version"),
             "meetings_requested": manifest.get("meetings_requested"),
             "budget": manifest.get("budget"), "licence_declared": manifest.get("licence")}
    for key, value in sorted((manifest.get("report") or {}).items()):
        notes[f"generator_report.{key}"] = value
    for key, value in sorted((manifest.get("selection") or {}).items()):
        notes[f"budget_selection.{key}"] = value
    info = generated_source_info(name, sha, version=version)
    return Corpus(source=info, kind=MEETING, files=files,
                  turns=turns, queries=records, notes=tuple(sorted(notes.items())))


def load_synthetic(path, name: str | None = None) -> Corpus:
    from ingestion.synthetic.validate import validate

    failures = validate(path)
    if failures:
        listed = "; ".join(f"[{f.check}] {f.message}" for f in failures[:10])
        raise ValueError(f"{path}: synthetic corpus refused, {len(failures)} validator failure(s) "
                         f"in checks {sorted({f.check for f in failures})}: {listed}")
    manifest, meetings, queries = read_directory(path)
    return corpus_from_records(manifest, meetings, queries, name or "synthetic")
