"""A registered corpus name cannot escape its tier floor by case, space, width, dash form,
invisible characters or look-alike letters (harness.core.corpus_names, Unicode TR39).

``beir-scifact`` is registered with licence CC-BY-NC-2.0 (tier B) and ``meetingbank`` with
CC-BY-NC-ND-4.0 (tier B): a declared CC0-1.0 licence (tier A on its own) must leave both at B.
"""

from __future__ import annotations

import pytest

from harness.core.corpus_names import CorpusNameError, registry_key
from harness.core.sources import UnknownSourceError, lookup, source_for_corpus
from harness.core.tiers import declared_tier, registered_floor

#: the issue's spellings that must find their registered entry (and so its tier B floor)
FOUND = [
    ("beir-scifact", "beir-scifact"),
    ("BEIR-SciFact", "beir-scifact"),
    (" beir-scifact", "beir-scifact"),
    ("beir\u2010scifact", "beir-scifact"),  # U+2010 HYPHEN
    ("\uff42eir-scifact", "beir-scifact"),  # U+FF42 FULLWIDTH LATIN SMALL LETTER B
    ("MeetingBank", "meetingbank"),
]
#: the issue's spellings that must be refused, and the character named
REFUSED = [
    ("beir-scifact\u200b", "U+200B ZERO WIDTH SPACE"),
    ("beir-sc\u0456fact", "U+0456 CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I"),
    ("beir-scifact\u00ad", "U+00AD SOFT HYPHEN"),
]


@pytest.mark.parametrize("name, registered", FOUND)
def test_look_alike_spellings_find_the_registered_entry_and_keep_tier_b(name, registered):
    assert source_for_corpus(name).name == registered
    assert registered_floor(name) == "B"
    tier, evidence = declared_tier("CC0-1.0", None, name)
    assert tier == "B"
    assert "registered corpus of tier B" in evidence
    assert declared_tier("CC0-1.0", None, "an-unregistered-name")[0] == "A"  # the licence alone


@pytest.mark.parametrize("name, character", REFUSED)
def test_invisible_and_mixed_script_spellings_are_refused_naming_the_character(name, character):
    for check in (source_for_corpus, registered_floor, lambda n: declared_tier("CC0-1.0", None, n)):
        with pytest.raises(CorpusNameError) as info:
            check(name)
        assert character in str(info.value)
        assert isinstance(info.value, ValueError)  # exit 2 at the command line


@pytest.mark.parametrize("name", [
    "a\u2060b",  # WORD JOINER
    "a\ufeffb",  # ZERO WIDTH NO-BREAK SPACE
    "a\u200db",  # ZERO WIDTH JOINER
    "a\ufe0fb",  # VARIATION SELECTOR-16
    "a\U000e0041b",  # TAG LATIN CAPITAL LETTER A
    "a\u202eb",  # RIGHT-TO-LEFT OVERRIDE
    "a\tb",  # a control character
    "a\u2028b",  # LINE SEPARATOR
])
def test_every_kind_of_invisible_character_is_refused(name):
    with pytest.raises(CorpusNameError, match="invisible character U\\+"):
        registry_key(name)


@pytest.mark.parametrize("name, scripts", [
    ("ami\u03bf", "GREEK, LATIN"),  # Greek small omicron after Latin
    ("\u0430\u03b1", "CYRILLIC, GREEK"),  # Cyrillic a and Greek alpha
])
def test_latin_with_cyrillic_or_greek_and_other_mixes_are_refused(name, scripts):
    with pytest.raises(CorpusNameError, match=f"mixes the scripts {scripts}"):
        registry_key(name)


@pytest.mark.parametrize("name, key", [
    ("\u043a\u043e\u0440\u043f\u0443\u0441", "\u043a\u043e\u0440\u043f\u0443\u0441"),  # Cyrillic only
    # Han + Katakana (and the prolonged sound mark both share)
    ("\u65e5\u672c\u8a9e\u30b3\u30fc\u30d1\u30b9", "\u65e5\u672c\u8a9e\u30b3\u30fc\u30d1\u30b9"),
    ("QMSum \u65e5\u672c\u8a9e", "qmsum \u65e5\u672c\u8a9e"),  # Latin + Han: allowed by TR39
    ("my corpus", "my corpus"),
])
def test_single_script_and_allowed_mixes_are_accepted(name, key):
    assert registry_key(name) == key
    assert source_for_corpus(name) is None


def test_a_whole_script_look_alike_of_a_registered_name_is_refused():
    cyrillic_ami = "\u0410\u041c\u0406"  # А М І: every letter Cyrillic, reads "AMI"
    with pytest.raises(CorpusNameError, match="looks like the registered corpus 'ami'"):
        source_for_corpus(cyrillic_ami)
    greek_ami = "\u0391\u039c\u0399"  # Α Μ Ι
    with pytest.raises(CorpusNameError, match="looks like the registered corpus 'ami'"):
        source_for_corpus(greek_ami)


def test_qmsum_domains_and_fetch_lookups_use_the_same_comparison():
    assert source_for_corpus("QMSum-Product").name == "qmsum"
    assert lookup("BEIR-SciFact").name == "beir-scifact"
    with pytest.raises(UnknownSourceError):
        lookup("qmsum-product")  # a domain corpus, not a source one can fetch
    with pytest.raises(CorpusNameError, match="U\\+200B"):
        lookup("qmsum\u200b")
