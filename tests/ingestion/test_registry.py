"""The source registry: every source traced, tiers by rule, doubt fails closed."""

from __future__ import annotations

import re

import pytest

from harness.core.tiers import TIERS, source_tier
from harness.core.sources import SOURCES, Artefact, Source, UnknownSourceError, lookup
from harness.core.tiers import tier_for_licence
from ingestion.attribution import source_info


def _restrictive(licence: str) -> bool:
    """An independent reading of a licence id: non-commercial, no-derivatives,
    research-only, agreement-bound or unknown."""
    parts = re.split(r"[-_ ]", licence.upper())
    return ("NC" in parts or "ND" in parts or "NON" in parts or "RESEARCH" in parts
            or "AGREEMENT" in parts or licence.lower() == "unknown")


def test_every_source_has_licence_tier_evidence_and_citation():
    assert len(SOURCES) >= 20
    for name, source in SOURCES.items():
        assert source.name == name
        assert source.licence.strip(), name
        assert source.evidence.strip(), name
        assert source.citation.strip(), name
        assert source_tier(source) in TIERS, name


def test_restrictive_or_unknown_licences_are_never_tier_a():
    restrictive = [s for s in SOURCES.values() if _restrictive(s.licence)]
    assert restrictive, "the registry must hold non-commercial and unknown sources"
    for source in restrictive:
        assert source_tier(source) != "A", f"{source.name} ({source.licence}) must not be publishable"


@pytest.mark.parametrize("name, licence, tier", [
    ("qmsum", "MIT", "A"),
    ("ami", "CC-BY-4.0", "A"),
    ("icsi", "CC-BY-4.0", "A"),
    ("earnings21", "CC-BY-SA-4.0", "A"),
    ("locov1", "Apache-2.0", "A"),
    ("miracl", "Apache-2.0", "A"),
    ("ciral", "Apache-2.0", "A"),
    ("mrtydi", "Apache-2.0", "A"),
    ("meetingbank", "CC-BY-NC-ND-4.0", "B"),
    ("synthetic", "CC0-1.0", "A"),
])
def test_issue_sources_are_registered_with_their_traced_licence(name, licence, tier):
    source = lookup(name)
    assert (source.licence, source_tier(source)) == (licence, tier)


def test_platform_metadata_never_overrides_the_licence():
    # the archive host says cc-by-4.0; the archive's own LICENSE.txt says NC-ND
    assert "cc-by-4.0" in SOURCES["meetingbank"].platform_metadata
    assert source_tier(SOURCES["meetingbank"]) == "B"
    # BeIR hub tags say cc-by-sa-4.0 on every dataset, MS MARCO included
    assert "cc-by-sa-4.0" in SOURCES["beir-msmarco"].platform_metadata
    assert source_tier(SOURCES["beir-msmarco"]) == "B"
    # an empty hub field over a research-only statement
    assert source_tier(SOURCES["omnidocbench"]) == "B"
    assert source_tier(SOURCES["elitr"]) == "B"


def test_the_two_ami_releases_are_distinct_sources_with_different_tiers():
    assert (source_tier(SOURCES["ami"]), source_tier(SOURCES["ami-openslr"])) == ("A", "B")
    assert SOURCES["ami"].artefacts[0].url != (SOURCES["ami-openslr"].homepage or "")


def test_beir_datasets_are_registered_individually():
    beir = {n for n in SOURCES if n.startswith("beir-")}
    assert {"beir-msmarco", "beir-scifact", "beir-nfcorpus", "beir-fiqa", "beir-hotpotqa"} <= beir
    unobtainable = {n for n in beir if source_tier(SOURCES[n]) == "C"}
    assert unobtainable == {"beir-bioasq", "beir-signal1m", "beir-trec-news", "beir-robust04"}


def test_no_checksum_is_invented():
    """A sha256 is either absent (recorded on first download) or a real 64-hex digest; no
    artefact of this registry could be verified offline, so none carries one."""
    artefacts = [a for s in SOURCES.values() for a in s.artefacts]
    assert artefacts
    assert all(a.sha256 is None for a in artefacts)
    for a in artefacts:
        assert a.md5 is None or re.fullmatch(r"[0-9a-f]{32}", a.md5)


def test_tier_rule():
    assert tier_for_licence("MIT") == "A"
    assert tier_for_licence("CC-BY-SA-3.0") == "A"
    assert tier_for_licence("CC-BY-NC-4.0") == "B"
    assert tier_for_licence("CC-BY-NC-ND-4.0") == "B"
    assert tier_for_licence("unknown") == "B"
    assert tier_for_licence("GPL-3.0-only") == "B"  # not on the publishable list: fail closed
    assert tier_for_licence("MIT", unobtainable=True) == "C"


def test_unregistered_corpus_fails_closed_to_tier_b():
    info = source_info("beir-mystery", "0" * 64)
    assert (info.licence, info.tier, info.registry_source) == ("unknown", "B", None)
    assert "not traced" in info.evidence
    # a registered publishable name without a folder to check is not evidence either
    domain = source_info("qmsum-product", "1" * 64)
    assert (domain.registry_source, domain.licence, domain.tier) == (None, "unknown", "B")
    assert "named like registered source 'qmsum' (MIT)" in domain.evidence
    # a registered non-publishable source keeps its (restrictive) licence without proof
    scifact = source_info("beir-scifact", "2" * 64)
    assert (scifact.registry_source, scifact.tier) == ("beir-scifact", "B")


def test_lookup_error_lists_the_registered_names():
    with pytest.raises(UnknownSourceError) as err:
        lookup("nope")
    assert str(sorted(SOURCES)) in str(err.value)
    assert isinstance(err.value, ValueError)


def test_source_and_artefact_validation():
    with pytest.raises(ValueError, match="url must be http"):
        Artefact(url="ftp://x/y.zip", filename="y.zip")
    with pytest.raises(ValueError, match="sha256"):
        Artefact(url="https://x/y.zip", filename="y.zip", sha256="abc")
    with pytest.raises(ValueError, match="evidence"):
        Source(name="x", title="X", version=None, licence="MIT", evidence=" ", citation="c", role="r")
    with pytest.raises(ValueError, match="layout"):
        Source(name="x", title="X", version=None, licence="MIT", evidence="e", citation="c",
               role="r", layout="nope")
