"""Pinned upstream checksums: the registered licence follows the content, not the layout (#16).

The review's repro: ``fetch --from-dir`` registered six Committee meetings in QMSum's layout,
without LICENSE, as "MIT, tier A" with the evidence "fetch manifest entry covers these
files".  Now the registry pins the sha256 of every upstream QMSum file at the upstream commit;
a copy's files carry MIT only when they match, at registration and at load; one edited or
foreign meeting and the corpus is tier B, LICENSE file or not.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path

import pytest

from harness.core.sources import QMSUM_COMMIT, SOURCES
from ingestion import load_corpus
from ingestion.cli import main

from .helpers import MIT_TEXT, qmsum_meeting, write_beir, write_json

REPO = Path(__file__).resolve().parents[2]
UPSTREAM = REPO.parent / "shared" / "data" / "qmsum-upstream"


@pytest.fixture(autouse=True)
def no_fetch_cache(tmp_path, monkeypatch):
    cache = tmp_path / "fetch-cache"
    monkeypatch.setenv("INGESTION_DATA_DIR", str(cache))
    return cache


def test_the_qmsum_pins_are_upstreams_checksums_at_the_named_commit():
    from harness.core.sources import PINS_DIR, Pins

    pins = SOURCES["qmsum"].pins
    assert pins == Pins(file="qmsum.SHA256SUMS", revision=QMSUM_COMMIT)
    sums = pins.checksums()
    assert len(sums) == 697 and sums["LICENSE"] == (
        "8308d90c6321345cbd4adc8b479ddbece28ddbdca44f3f0b9bf033c3999a4a80")
    meetings = [p for p in sums if p.startswith("data/")]
    assert len(meetings) == 696 and all(p.endswith(".json") for p in meetings)
    # packaged with the code (pyproject package-data), never read from beside the repository
    assert pins.path.parent == PINS_DIR and PINS_DIR.is_relative_to(REPO / "harness")
    assert 'harness = ["core/pins/*.SHA256SUMS"]' in (REPO / "pyproject.toml").read_text()
    if not (UPSTREAM / "SHA256SUMS").is_file():
        pytest.skip(f"upstream checksum list not found at {UPSTREAM} (development machines)")
    assert pins.path.read_bytes() == (UPSTREAM / "SHA256SUMS").read_bytes()
    commit = re.search(r"commit ([0-9a-f]{40})", (UPSTREAM / "README.md").read_text()).group(1)
    assert commit == pins.revision


def test_a_pins_file_is_read_strictly(tmp_path, monkeypatch):
    import harness.core.sources as sources
    from harness.core.sources import Pins

    monkeypatch.setattr(sources, "PINS_DIR", tmp_path)
    (tmp_path / "bad.SHA256SUMS").write_text("0" * 64 + "  a.json\nnot a checksum line\n")
    with pytest.raises(ValueError, match=r"bad.SHA256SUMS:2: expected '<sha256>  <path>'"):
        Pins(file="bad.SHA256SUMS", revision="r1").checksums()
    (tmp_path / "twice.SHA256SUMS").write_text(("0" * 64 + "  a.json\n") * 2)
    with pytest.raises(ValueError, match="twice.SHA256SUMS:2: path 'a.json' listed twice"):
        Pins(file="twice.SHA256SUMS", revision="r1").checksums()


def copy_of(qmsum_val: Path, root: Path, *, licence: bool) -> Path:
    shutil.copytree(qmsum_val / "data", root / "data")
    if licence:
        shutil.copy(qmsum_val / "LICENSE", root / "LICENSE")
    return root


def test_the_real_validation_split_is_tier_a_by_its_pinned_checksums(qmsum_val, tmp_path):
    source = load_corpus(f"qmsum:{qmsum_val}").source
    assert (source.licence, source.tier, source.registry_source) == ("MIT", "A", "qmsum")
    assert (f"all 35 files loaded match the sha256 pinned for upstream revision "
            f"{QMSUM_COMMIT[:12]}") in source.evidence
    assert "the LICENSE file in the corpus root is the MIT licence" in source.evidence
    # the same files without LICENSE: their checksums are upstream's, so still MIT
    bare = load_corpus(f"qmsum:{copy_of(qmsum_val, tmp_path / 'bare', licence=False)}").source
    assert (bare.licence, bare.tier) == ("MIT", "A")
    assert "LICENSE" not in bare.evidence.split("verified for this copy:")[1]


@pytest.mark.parametrize("licence", [True, False], ids=["with-LICENSE", "without-LICENSE"])
def test_a_copy_with_an_edited_or_a_foreign_meeting_is_tier_b(qmsum_val, tmp_path, licence):
    edited = copy_of(qmsum_val, tmp_path / "edited", licence=licence)
    meeting = edited / "data" / "Committee" / "val" / "covid_6.json"
    doc = json.loads(meeting.read_text())
    doc["meeting_transcripts"][0]["content"] += " (an internal remark)"
    meeting.write_text(json.dumps(doc))
    source = load_corpus(f"qmsum:{edited}").source
    assert (source.licence, source.tier, source.registry_source) == ("unknown", "B", None)
    assert ("1 of 35 files loaded do not match the sha256 pinned for upstream revision "
            f"{QMSUM_COMMIT[:12]} (qmsum.SHA256SUMS) (edited, or not upstream's): "
            "data/Committee/val/covid_6.json") in source.evidence

    foreign = copy_of(qmsum_val, tmp_path / "foreign", licence=licence)
    write_json(foreign / "data" / "Committee" / "val" / "internal_1.json",
               qmsum_meeting(6, [("What did A say about the budget?", [(1, 2)])]))
    source = load_corpus(f"qmsum:{foreign}").source
    assert (source.licence, source.tier) == ("unknown", "B")
    assert "1 of 36 files loaded do not match" in source.evidence
    assert "data/Committee/val/internal_1.json" in source.evidence
    # one domain folder of the foreign copy: the foreign meeting is in it
    committee = load_corpus(f"qmsum:{foreign / 'data' / 'Committee'}").source
    assert (committee.tier, "1 of 7 files loaded do not match" in committee.evidence) == ("B", True)
    product = load_corpus(f"qmsum:{foreign / 'data' / 'Product'}").source
    assert (product.licence, product.tier) == ("MIT", "A")  # its 20 files are upstream's


def six_committee_meetings(qmsum_val: Path, root: Path) -> Path:
    """The review's copy: the six Committee meetings in QMSum's layout, no LICENSE."""
    shutil.copytree(qmsum_val / "data" / "Committee", root / "data" / "Committee")
    return root


def test_from_dir_counts_the_matching_files_and_names_the_others(qmsum_val, tmp_path,
                                                                 capsys, no_fetch_cache):
    six = six_committee_meetings(qmsum_val, tmp_path / "six")
    assert main(["fetch", "--corpus", "qmsum", "--from-dir", str(six)]) == 0
    out = capsys.readouterr().out
    assert (f"pinned checksums of upstream revision {QMSUM_COMMIT[:12]}: 6 of 6 files match; "
            "licence MIT (tier A)") in out
    (entry,) = json.loads((no_fetch_cache / "manifest.json").read_text())["artefacts"]
    assert (entry["tier"], entry["licence"], entry["pins"]["matched"], entry["pins"]["unmatched"]) \
        == ("A", "MIT", 6, [])

    edited = six / "data" / "Committee" / "val" / "education_0.json"
    edited.write_bytes(edited.read_bytes().replace(b"education", b"Education", 1))
    write_json(six / "data" / "Committee" / "val" / "internal_1.json",
               qmsum_meeting(4, [("What did A say?", [(0, 1)])]))
    assert main(["fetch", "--corpus", "qmsum", "--from-dir", str(six)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == (f"pinned checksums of upstream revision {QMSUM_COMMIT[:12]}: 5 of 7 files "
                      "match; 2 do not (edited, or not upstream's), so the copy is tier B, "
                      "licence unknown, and so is any corpus loaded with them:")
    assert out[2:] == ["  data/Committee/val/education_0.json",
                       "  data/Committee/val/internal_1.json"]
    (entry,) = json.loads((no_fetch_cache / "manifest.json").read_text())["artefacts"]
    assert (entry["tier"], entry["licence"]) == ("B", "unknown")
    # the registration is no evidence at load either
    assert load_corpus(f"qmsum:{six}").source.tier == "B"


def test_from_dir_of_transcripts_in_qmsum_layout_is_tier_b(tmp_path, capsys, no_fetch_cache):
    root = tmp_path / "transcripts"
    for domain, meeting in (("Product", "IN1"), ("Committee", "IN2")):
        write_json(root / "data" / domain / "val" / f"{meeting}.json",
                   qmsum_meeting(6, [("What did A say about the budget?", [(1, 2)])]))
    (root / "LICENSE").write_text(MIT_TEXT)  # a licence file beside them proves nothing
    assert main(["fetch", "--corpus", "qmsum", "--from-dir", str(root)]) == 0
    out = capsys.readouterr().out
    assert "0 of 2 files match; 2 do not" in out
    assert "data/Committee/val/IN2.json" in out and "data/Product/val/IN1.json" in out
    source = load_corpus(f"qmsum:{root}").source
    assert (source.licence, source.tier) == ("unknown", "B")
    assert "2 of 2 files loaded do not match" in source.evidence


CC_BY_SA_3 = "Creative Commons Legal Code\n\nAttribution-ShareAlike 3.0 Unported\n..."


def test_a_source_without_pins_is_attributed_by_its_own_licence_file_only(
        tmp_path, capsys, no_fetch_cache):
    assert getattr(SOURCES["beir-nq"], "pins", None) is None
    folder = write_beir(tmp_path / "nq")
    assert main(["fetch", "--corpus", "beir-nq", "--from-dir", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "tier B" in out and ("no pinned checksums for beir-nq: a copy registered from a "
                                "directory is not attributed CC-BY-SA-3.0 (tier B)") in out
    source = load_corpus(f"beir:{folder}").source
    assert (source.licence, source.tier) == ("unknown", "B")
    assert "only records where a copy was registered" in source.evidence
    (folder / "LICENSE").write_text(CC_BY_SA_3)
    source = load_corpus(f"beir:{folder}").source
    assert (source.licence, source.tier) == ("CC-BY-SA-3.0", "A")
    assert "the LICENSE file in the corpus root is the CC-BY-SA-3.0 licence" in source.evidence


def test_pins_match_by_content_and_report_paths_relative_to_the_copy(qmsum_val, tmp_path):
    from ingestion.evidence import check_pins

    copy = copy_of(qmsum_val, tmp_path / "c", licence=False)
    files = sorted((copy / "data").glob("*/val/*.json"))
    check = check_pins(SOURCES["qmsum"], files, root=copy)
    assert (len(check.matched), check.unmatched, check.ok) == (35, (), True)
    # a mapping gives digests already computed (the loader's): a wrong one is a mismatch
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    digests[files[0]] = "0" * 64
    check = check_pins(SOURCES["qmsum"], digests, root=copy)
    assert check.unmatched == (files[0].relative_to(copy).as_posix(),) and not check.ok
