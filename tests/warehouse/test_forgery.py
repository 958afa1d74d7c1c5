"""Claims that lie about their tier or their numbers are refused, naming the file and field.

Each forgery starts from a real claim written by the product (``harness score`` or a
builder going through the same writer), is edited by hand the way a forger would, and is
refused by ``warehouse ingest`` with nothing stored.  The tier in a file is never trusted:
it is recomputed from the licence (``harness.core.tiers``) and the registry.
"""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.canonical import canonical_json
from tests.warehouse.answers_builders import reference_document
from tests.warehouse.migration_builders import migration_document
from tests.warehouse.builders import simple_run
from warehouse import ingest_document, ingest_results
from warehouse.errors import IngestRefused

REPO = Path(__file__).resolve().parents[2]
TOY = REPO / "examples" / "toy"


def score(out: Path, licence: str, corpus: str = "meetings") -> Path:
    assert main(["score", "--qrels", str(TOY / "qrels.txt"), "--run", str(TOY / "run.txt"),
                 "--query-classes", str(TOY / "classes.tsv"), "--corpus-name", corpus,
                 "--licence", licence, "--out", str(out), "--no-warehouse"]) == 0
    return out


def edit_json(path: Path, change) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    change(doc)
    path.write_text(canonical_json(doc), encoding="utf-8")


def relabel_tier_a(doc: dict, licence: str = "CC-BY-4.0") -> None:
    """The forger's edit: a CC-BY licence and tier A everywhere in metrics.json."""
    for corpus in doc["corpora"]:
        corpus.update(licence=licence, tier="A")
    for row in doc["rows"]:
        row["tier"] = "A"


def refused(target, db, *, field: str, file: str) -> IngestRefused:
    with pytest.raises(IngestRefused) as info:
        if isinstance(target, Path) and target.is_dir():
            ingest_results(target, db)
        else:
            ingest_document(target, db)
    message = str(info.value)
    assert f"field '{field}'" in message and file in message, message
    assert not Path(db).exists() or _runs(db) == 0
    return info.value


def _runs(db) -> int:
    from warehouse import connect

    with connect(db, read_only=True) as conn:
        return conn.query_one("SELECT count(*) FROM runs")[0]


def test_the_genuine_non_commercial_claim_is_stored_as_tier_b(tmp_path):
    out = score(tmp_path / "nc", "CC-BY-NC-4.0")
    report = ingest_results(out, tmp_path / "w.duckdb")
    assert report.inserted
    doc = json.loads((out / "metrics.json").read_text())
    assert {c["tier"] for c in doc["corpora"]} == {"B"}


def test_a_hand_edited_tier_and_licence_is_refused_with_runinfo(tmp_path):
    out = score(tmp_path / "nc", "CC-BY-NC-4.0")
    edit_json(out / "metrics.json", relabel_tier_a)
    refused(out, tmp_path / "w.duckdb", field="corpora[0].evidence", file="metrics.json")

    def forge_evidence(doc):
        doc["corpora"][0]["evidence"] = "licence CC-BY-4.0 declared on the command line"

    edit_json(out / "metrics.json", forge_evidence)
    # runinfo.json records the id of the claim as written: any edit of it shows
    refused(out, tmp_path / "w.duckdb", field="run_id", file="runinfo.json")


def test_a_hand_edited_tier_and_licence_is_refused_without_runinfo(tmp_path):
    out = score(tmp_path / "nc", "CC-BY-NC-4.0")
    edit_json(out / "metrics.json", relabel_tier_a)
    (out / "runinfo.json").unlink()
    # the evidence still records the licence the user declared: CC-BY-NC, not CC-BY
    refused(out, tmp_path / "w.duckdb", field="corpora[0].evidence", file="metrics.json")


def test_editing_the_evidence_too_leaves_the_per_query_tiers_and_the_pins(tmp_path):
    out = score(tmp_path / "nc", "CC-BY-NC-4.0")
    (out / "runinfo.json").unlink()

    def forge(doc):
        relabel_tier_a(doc)
        doc["corpora"][0]["evidence"] = "licence CC-BY-4.0 declared on the command line"

    edit_json(out / "metrics.json", forge)
    refused(out, tmp_path / "w.duckdb", field="tier", file="per_query.jsonl:1")
    # relabelling the per-query rows as well breaks the pin metrics.json holds on them
    lines = (out / "per_query.jsonl").read_text().splitlines()
    (out / "per_query.jsonl").write_text(
        "".join(line.replace('"tier":"B"', '"tier":"A"') + "\n" for line in lines))
    (out / "rankings.jsonl").unlink()
    refused(out, tmp_path / "w.duckdb", field="files.per_query.jsonl", file="metrics.json")


def test_a_non_publishable_licence_with_tier_a_is_refused(tmp_path):
    out = score(tmp_path / "nc", "CC-BY-NC-4.0")
    (out / "runinfo.json").unlink()
    edit_json(out / "metrics.json", lambda d: relabel_tier_a(d, licence="CC-BY-NC-4.0"))
    error = refused(out, tmp_path / "w.duckdb", field="corpora[0].tier", file="metrics.json")
    assert "tier A needs a publishable licence" in str(error)


def test_an_edited_per_class_row_is_refused(tmp_path):
    out = simple_run(tmp_path / "r", n_queries=4, classed=True)
    (out / "runinfo.json").unlink()
    doc = json.loads((out / "metrics.json").read_text())
    i = next(i for i, r in enumerate(doc["rows"]) if r["query_class"] == "lookup")

    def lift(d):
        d["rows"][i]["metrics"]["nDCG@10"] = round(d["rows"][i]["metrics"]["nDCG@10"] + 0.05, 10)

    edit_json(out / "metrics.json", lift)
    refused(out, tmp_path / "w.duckdb", field=f"rows[{i}].metrics.nDCG@10", file="metrics.json")


def test_values_reshuffled_between_queries_are_refused(tmp_path):
    out = simple_run(tmp_path / "r", n_queries=6, classed=True)
    (out / "runinfo.json").unlink()
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    # swap values between two queries of one class: every mean, every n is unchanged
    lookup = [r for r in rows if r["query_class"] == "lookup" and r["measure"] == "nDCG@10"]
    lookup[0]["value"], lookup[1]["value"] = lookup[1]["value"], lookup[0]["value"]
    (out / "per_query.jsonl").write_text("".join(canonical_json(r).replace("\n", "") + "\n"
                                                 for r in rows))
    refused(out, tmp_path / "w.duckdb", field="files.per_query.jsonl", file="metrics.json")


def test_a_registered_tier_b_name_stays_tier_b_whatever_licence_is_declared(tmp_path):
    out = score(tmp_path / "scifact", "CC-BY-4.0", corpus="beir-scifact")
    doc = json.loads((out / "metrics.json").read_text())
    assert [c["tier"] for c in doc["corpora"]] == ["B"]
    assert "registered corpus of tier B" in doc["corpora"][0]["evidence"]
    assert main(["score", "--qrels", str(TOY / "qrels.txt"), "--run", str(TOY / "run.txt"),
                 "--corpus-name", "beir-scifact", "--licence", "CC-BY-4.0", "--tier", "A",
                 "--out", str(tmp_path / "forced"), "--no-warehouse"]) == 2
    # and a hand edit to tier A is refused by the registry floor
    (out / "runinfo.json").unlink()
    edit_json(out / "metrics.json", relabel_tier_a)
    error = refused(out, tmp_path / "w.duckdb", field="corpora[0].tier", file="metrics.json")
    assert "registered tier-B corpus" in str(error)


# --------------------------------------------------------------------------- other kinds


def test_an_answers_document_claiming_tier_a_for_a_non_commercial_corpus_is_refused(tmp_path):
    doc = reference_document()
    ingest_document(copy.deepcopy(doc), tmp_path / "ok.duckdb")  # the genuine one is stored

    def forge(d):
        for c in d["corpora"]:
            c["tier"] = "A"
        d["tier"] = "A"
        for block in ("rows", "floor_rows", "answers"):
            for r in d[block]:
                r["tier"] = "A"

    forged = copy.deepcopy(doc)
    forge(forged)
    path = tmp_path / "answers.json"
    path.write_text(canonical_json(forged))
    i = [c["name"] for c in forged["corpora"]].index("secretcorpus")
    error = refused(path, tmp_path / "w.duckdb", field=f"corpora[{i}].tier", file="answers.json")
    assert "CC-BY-NC-4.0" in str(error)


def test_a_migration_report_claiming_tier_a_for_a_non_commercial_corpus_is_refused(tmp_path):
    ingest_document(migration_document(), tmp_path / "ok.duckdb")  # the genuine one is stored
    forged = migration_document(tier="A")
    path = tmp_path / "migration.json"
    path.write_text(canonical_json(forged))
    error = refused(path, tmp_path / "w.duckdb", field="corpora[0].tier", file="migration.json")
    assert "tier A needs a publishable licence" in str(error)
    # a registered non-commercial source keeps its tier whatever licence the report names
    scifact = migration_document(corpus="beir-scifact", licence="CC-BY-4.0", tier="A")
    error = refused(scifact, tmp_path / "w.duckdb", field="corpora[0].tier", file="<document>")
    assert "registered tier-B corpus" in str(error)


def test_forged_documents_never_reach_the_publishable_view(tmp_path):
    """Fuzz the forger's edits over the tier fields of an answers document: each is refused
    or, if it is stored, under a tier no laxer than its licences give."""
    from warehouse import connect

    rng = random.Random(7)
    db = tmp_path / "w.duckdb"
    for attempt in range(12):
        doc = reference_document()
        for c in doc["corpora"]:
            if rng.random() < 0.7:
                c["tier"] = "A"
            if rng.random() < 0.3:
                c["licence"] = rng.choice(["CC-BY-4.0", "MIT", "CC-BY-NC-4.0", "unknown"])
        doc["tier"] = rng.choice(["A", "B"])
        try:
            ingest_document(doc, db)
        except IngestRefused:
            continue
        with connect(db, read_only=True) as conn:
            stored = conn.query_all("SELECT corpus, tier, licence FROM answer_corpora "
                                    "WHERE licence = 'CC-BY-NC-4.0'")
        assert all(tier != "A" for _, tier, _ in stored), (attempt, stored)


@pytest.mark.parametrize("name", ["BEIR-SciFact", "\uff42eir-scifact", "MeetingBank"])
def test_a_look_alike_of_a_registered_name_hand_edited_to_tier_a_is_refused(tmp_path, name):
    out = score(tmp_path / "look", "CC-BY-4.0", corpus=name)
    assert [c["tier"] for c in json.loads((out / "metrics.json").read_text())["corpora"]] == ["B"]
    (out / "runinfo.json").unlink()
    edit_json(out / "metrics.json", relabel_tier_a)
    error = refused(out, tmp_path / "w.duckdb", field="corpora[0].tier", file="metrics.json")
    assert "registered tier-B corpus" in str(error)


@pytest.mark.parametrize("name", ["meetings\u200b", "meet\u0456ngs"])
def test_an_invisible_or_mixed_script_corpus_name_in_a_claim_is_refused(tmp_path, name):
    out = score(tmp_path / "named", "CC-BY-4.0")
    (out / "runinfo.json").unlink()

    def rename(doc):
        doc["corpora"][0]["name"] = name

    edit_json(out / "metrics.json", rename)
    error = refused(out, tmp_path / "w.duckdb", field="corpora[0].name", file="metrics.json")
    assert "U+" in str(error)
