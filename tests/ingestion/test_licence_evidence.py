"""A registered licence is attributed only with evidence tied to the loaded content.

The reviewer's repro: an internal transcript in QMSum's layout loaded as ``qmsum MIT A``, and
any BEIR folder named ``nq`` became tier A.  Now the name alone gives tier B.  QMSum's files
must match the checksums the registry pins (tests/ingestion/test_pins.py); for a source
without pins, the corpus's own LICENSE file naming the registered licence, or the manifest of
a verified download whose recorded digest matches the files, gives the registered licence; a
``--from-dir`` registration does not; a changed file takes it away again.
"""

from __future__ import annotations

import zipfile

import pytest

from ingestion import load_corpus
from ingestion.evidence import manifest_evidence, names_licence
from ingestion.fetch import fetch, register_dir
from harness.core.sources import SOURCES, Artefact, Source

from .helpers import MIT_TEXT, qmsum_meeting, write_beir, write_json


CC_BY_NC_TEXT = ("Attribution-NonCommercial 4.0 International\n\nCreative Commons Corporation "
                 "... You may not use the material for NonCommercial purposes ...\n")


@pytest.fixture(autouse=True)
def no_fetch_cache(tmp_path, monkeypatch):
    """The default fetch cache is an empty folder of this test (never the machine's)."""
    cache = tmp_path / "fetch-cache"
    monkeypatch.setenv("INGESTION_DATA_DIR", str(cache))
    return cache


def internal_meetings(root):
    """Two meetings in QMSum's upstream layout: somebody's internal transcripts."""
    for domain, meeting in (("Product", "IN1"), ("Committee", "IN2")):
        write_json(root / "data" / domain / "val" / f"{meeting}.json",
                   qmsum_meeting(6, [("What did A say about the budget?", [(1, 2)])]))
    return root


def test_an_internal_transcript_in_qmsum_layout_is_not_qmsum(tmp_path):
    corpus = load_corpus(f"qmsum:{internal_meetings(tmp_path / 'transcripts')}")
    assert corpus.name == "qmsum"  # the loader still names it by its layout
    source = corpus.source
    assert (source.licence, source.tier, source.registry_source) == ("unknown", "B", None)
    assert "named like registered source 'qmsum' (MIT)" in source.evidence
    assert ("2 of 2 files loaded do not match the sha256 pinned for upstream revision"
            in source.evidence)


def test_an_upstream_licence_file_beside_foreign_meetings_is_no_evidence(tmp_path):
    root = internal_meetings(tmp_path / "QMSum")
    (root / "LICENSE").write_text(MIT_TEXT, encoding="utf-8")
    corpus = load_corpus(f"qmsum:{root}")
    assert (corpus.source.licence, corpus.source.tier, corpus.source.registry_source) == \
        ("unknown", "B", None)
    assert "data/Product/val/IN1.json" in corpus.source.evidence
    # a domain folder of that copy: its meeting is not upstream's either
    product = load_corpus(f"qmsum:{root / 'data' / 'Product'}")
    assert (product.name, product.source.tier) == ("qmsum-product", "B")


CC_BY_SA_4 = "Creative Commons\n\nAttribution-ShareAlike 4.0 International Public License\n"


def test_a_licence_file_of_an_unpinned_source_attributes_it_unless_it_restricts(tmp_path):
    assert getattr(SOURCES["beir-hotpotqa"], "pins", None) is None
    folder = write_beir(tmp_path / "hotpotqa")
    (folder / "LICENSE").write_text(CC_BY_SA_4, encoding="utf-8")
    source = load_corpus(f"beir:{folder}").source
    assert (source.licence, source.tier) == ("CC-BY-SA-4.0", "A")
    assert "the LICENSE file in the corpus root is the CC-BY-SA-4.0 licence" in source.evidence
    (folder / "LICENSE").write_text(CC_BY_NC_TEXT, encoding="utf-8")
    source = load_corpus(f"beir:{folder}").source
    assert (source.licence, source.tier) == ("unknown", "B")
    assert "restrictive terms" in source.evidence
    # the right text with a non-commercial rider is not that licence either
    (folder / "LICENSE").write_text(CC_BY_SA_4 + "\nFor non-commercial use only.\n",
                                    encoding="utf-8")
    assert load_corpus(f"beir:{folder}").source.tier == "B"


def test_names_licence_tells_the_creative_commons_variants_apart():
    assert names_licence("Creative Commons Attribution 4.0 International", "CC-BY-4.0")[0]
    assert not names_licence("Attribution-ShareAlike 4.0 International", "CC-BY-4.0")[0]
    assert names_licence("Attribution-ShareAlike 4.0 International", "CC-BY-SA-4.0")[0]
    assert not names_licence(CC_BY_NC_TEXT, "CC-BY-4.0")[0]
    ok, why = names_licence(MIT_TEXT, "BSD-3-Clause")
    assert not ok and "cannot be recognised from a licence file" in why


def test_a_beir_folder_named_nq_stays_tier_b_after_from_dir(tmp_path, no_fetch_cache):
    folder = write_beir(tmp_path / "nq")
    plain = load_corpus(f"beir:{folder}")
    assert plain.name == "beir-nq"
    assert (plain.source.licence, plain.source.tier) == ("unknown", "B")
    # registered with the fetch command: a layout check proves nothing about origin
    entry = register_dir("beir-nq", folder, no_fetch_cache)
    assert (entry["tier"], entry["licence"], entry["pins"]) == ("B", "unknown", None)
    registered = load_corpus(f"beir:{folder}").source
    assert (registered.licence, registered.tier, registered.registry_source) == \
        ("unknown", "B", None)
    assert ("fetch manifest entry beir-nq/(from-dir) only records where a copy was registered"
            in registered.evidence)


def test_a_manifest_for_another_source_or_folder_is_no_evidence(tmp_path, http_dir):
    served, base = http_dir
    data = write_beir(tmp_path / "src" / "hotpotqa")
    with zipfile.ZipFile(served / "hotpotqa.zip", "w") as zf:
        for path in sorted(data.rglob("*")):
            if path.is_file():
                zf.write(path, f"hotpotqa/{path.relative_to(data).as_posix()}")
    source = Source(name="beir-hotpotqa", title="toy", version="1", licence="CC-BY-SA-4.0",
                    evidence="test", citation="test", role="test",
                    artefacts=(Artefact(url=f"{base}/hotpotqa.zip", filename="hotpotqa.zip",
                                        extract=True),))
    dest = tmp_path / "dest"
    (entry,) = fetch(["beir-hotpotqa"], dest, sources={"beir-hotpotqa": source})
    unpacked = dest / entry["extracted"]
    assert load_corpus(f"beir:{unpacked}").source.tier == "A"  # the verified download
    # the same files under another registered name: the manifest speaks for hotpotqa only
    assert load_corpus(f"beir:{unpacked}", name="beir-nq").source.tier == "B"
    # another folder of the same name is not covered by the download's entry
    other = write_beir(tmp_path / "elsewhere" / "hotpotqa")
    assert load_corpus(f"beir:{other}").source.tier == "B"


def test_a_download_records_the_digest_of_its_unpacked_files(tmp_path, http_dir):
    served, base = http_dir
    data = write_beir(tmp_path / "src" / "toyset")
    with zipfile.ZipFile(served / "toyset.zip", "w") as zf:
        for path in sorted(data.rglob("*")):
            if path.is_file():
                zf.write(path, f"toyset/{path.relative_to(data).as_posix()}")
    source = Source(name="toyset", title="toy", version="1", licence="CC-BY-4.0",
                    evidence="test", citation="test", role="test",
                    artefacts=(Artefact(url=f"{base}/toyset.zip", filename="toyset.zip",
                                        extract=True),))
    dest = tmp_path / "dest"
    (entry,) = fetch(["toyset"], dest, sources={"toyset": source})
    assert entry["extracted_sha256"] and entry["extracted"] == "toyset/toyset/toyset"
    unpacked = dest / entry["extracted"]
    # dests=[] : only the manifest found among the folder's ancestors (fetch --dest DIR)
    ok, why = manifest_evidence("toyset", unpacked, dests=[])
    assert ok and "fetch manifest entry toyset/toyset.zip covers these files" in why
    (unpacked / "queries.jsonl").write_text('{"_id": "q1", "text": "changed"}\n', encoding="utf-8")
    ok, why = manifest_evidence("toyset", unpacked, dests=[])
    assert not ok and "the files differ from fetch manifest entry toyset/toyset.zip" in why


def test_the_synthetic_corpus_stays_tier_a_under_any_name(synthetic_dir):
    corpus = load_corpus(f"synthetic:{synthetic_dir}")
    assert (corpus.source.licence, corpus.source.tier) == ("CC0-1.0", "A")
    renamed = load_corpus(f"synthetic:{synthetic_dir}", name="qmsum")
    assert (renamed.source.licence, renamed.source.registry_source) == ("CC0-1.0", "synthetic")


def test_the_real_validation_split_is_tier_a(qmsum_val):
    source = load_corpus(f"qmsum:{qmsum_val}").source
    assert (source.licence, source.tier, source.registry_source) == ("MIT", "A", "qmsum")
    assert "all 35 files loaded match the sha256 pinned" in source.evidence
