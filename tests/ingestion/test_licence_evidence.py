"""A registered licence is attributed only with evidence tied to the loaded content.

The reviewer's repro: an internal transcript in QMSum's layout loaded as ``qmsum MIT A``, and
any BEIR folder named ``nq`` became tier A.  Now the name alone gives tier B; the corpus's
own LICENSE file naming the registered licence, or a fetch manifest whose recorded digest
matches the files, gives the registered licence; a changed file takes it away again.
"""

from __future__ import annotations

import zipfile

import pytest

from ingestion import load_corpus
from ingestion.evidence import manifest_evidence, names_licence
from ingestion.fetch import fetch, register_dir
from harness.core.sources import Artefact, Source

from .helpers import qmsum_meeting, write_beir, write_json

MIT_TEXT = """MIT License

Copyright (c) 2021 Someone

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY.
"""

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
    assert "no licence file" in source.evidence and "no fetch manifest" in source.evidence


def test_upstream_licence_file_in_the_root_attributes_mit(tmp_path):
    root = internal_meetings(tmp_path / "QMSum")
    (root / "LICENSE").write_text(MIT_TEXT, encoding="utf-8")
    corpus = load_corpus(f"qmsum:{root}")
    assert (corpus.source.licence, corpus.source.tier, corpus.source.registry_source) == \
        ("MIT", "A", "qmsum")
    assert "the LICENSE file in the corpus root is the MIT licence" in corpus.source.evidence
    # a domain folder of that copy is found to belong to the same root
    product = load_corpus(f"qmsum:{root / 'data' / 'Product'}")
    assert (product.name, product.source.tier) == ("qmsum-product", "A")


def test_a_licence_file_naming_other_terms_fails_closed(tmp_path):
    root = internal_meetings(tmp_path / "nc")
    (root / "LICENSE").write_text(CC_BY_NC_TEXT, encoding="utf-8")
    source = load_corpus(f"qmsum:{root}").source
    assert (source.licence, source.tier) == ("unknown", "B")
    assert "restrictive terms" in source.evidence
    # the MIT text with a non-commercial rider is not the MIT licence either
    (root / "LICENSE").write_text(MIT_TEXT + "\nFor non-commercial use only.\n", encoding="utf-8")
    assert load_corpus(f"qmsum:{root}").source.tier == "B"


def test_names_licence_tells_the_creative_commons_variants_apart():
    assert names_licence("Creative Commons Attribution 4.0 International", "CC-BY-4.0")[0]
    assert not names_licence("Attribution-ShareAlike 4.0 International", "CC-BY-4.0")[0]
    assert names_licence("Attribution-ShareAlike 4.0 International", "CC-BY-SA-4.0")[0]
    assert not names_licence(CC_BY_NC_TEXT, "CC-BY-4.0")[0]
    ok, why = names_licence(MIT_TEXT, "BSD-3-Clause")
    assert not ok and "cannot be recognised from a licence file" in why


def test_a_beir_folder_named_nq_is_tier_b_until_a_fetch_manifest_ties_it(tmp_path,
                                                                        no_fetch_cache):
    folder = write_beir(tmp_path / "nq")
    plain = load_corpus(f"beir:{folder}")
    assert plain.name == "beir-nq"
    assert (plain.source.licence, plain.source.tier) == ("unknown", "B")
    # registered with the fetch command: the recorded tree digest matches the files
    register_dir("beir-nq", folder, no_fetch_cache)
    fetched = load_corpus(f"beir:{folder}")
    assert (fetched.source.licence, fetched.source.tier, fetched.source.registry_source) == \
        ("CC-BY-SA-3.0", "A", "beir-nq")
    assert "fetch manifest entry beir-nq/(from-dir) covers these files" in fetched.source.evidence
    # one changed line after registration: the manifest no longer vouches for the content
    with (folder / "corpus.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"_id": "d9", "title": "", "text": "an internal note"}\n')
    changed = load_corpus(f"beir:{folder}").source
    assert (changed.licence, changed.tier) == ("unknown", "B")
    assert "the files differ from fetch manifest entry beir-nq/(from-dir)" in changed.evidence


def test_a_manifest_for_another_source_or_folder_is_no_evidence(tmp_path, no_fetch_cache):
    hotpot = write_beir(tmp_path / "hotpotqa")
    register_dir("beir-hotpotqa", hotpot, no_fetch_cache)
    # the same files under another registered name: the manifest speaks for beir-hotpotqa only
    assert load_corpus(f"beir:{hotpot}", name="beir-nq").source.tier == "B"
    # another folder of the same name is not covered by hotpot's entry
    other = write_beir(tmp_path / "elsewhere" / "hotpotqa")
    assert load_corpus(f"beir:{other}").source.tier == "B"
    assert load_corpus(f"beir:{hotpot}").source.tier == "A"


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


def test_the_real_validation_split_is_tier_a_by_its_upstream_licence_file(qmsum_val):
    source = load_corpus(f"qmsum:{qmsum_val}").source
    assert (source.licence, source.tier, source.registry_source) == ("MIT", "A", "qmsum")
    assert "the LICENSE file in the corpus root is the MIT licence" in source.evidence
