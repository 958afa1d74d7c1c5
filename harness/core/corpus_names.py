"""Corpus names as the source registry compares them (after Unicode TR #39, Security Mechanisms).

Tier floors hang on names: ``beir-scifact`` is tier B whatever licence a run declares
(:func:`harness.core.tiers.registered_floor`).  A name that only *looks* like a registered one
must not escape that floor, so every registry lookup
(:func:`harness.core.sources.source_for_corpus`, :func:`harness.core.sources.lookup`) compares
:func:`registry_key` values, never the raw strings.

Refused (:class:`CorpusNameError`, a ValueError: exit 2 at the command line):

* an **invisible** character: any Default_Ignorable_Code_Point (U+00AD soft hyphen,
  U+200B..U+200F, U+2060..U+206F, U+FEFF, variation selectors, tags ...) and any control,
  format, private-use, surrogate, unassigned or line/paragraph-separator character;
* **mixed scripts** beyond TR39's "Moderately Restrictive" profile: one script; or Latin with
  Han and Hiragana/Katakana, Bopomofo or Hangul; or Latin with one other script that is not
  Cyrillic, Greek or Cherokee.  So ``beir-sc`` + U+0456 (Cyrillic i) + ``fact`` is refused.
  A letter's script is the first word of its Unicode name (``LATIN``, ``CYRILLIC``,
  ``GREEK``; ``CJK`` is Han); digits, punctuation and combining marks belong to none.
* a **whole-script look-alike** of a registered name: a Cyrillic or Greek name whose
  letters all look like Latin ones and spell a registered name (``АМІ`` in Cyrillic).

Normalised (the key): NFKC (fullwidth ``ｂ`` and mathematical letters become ``b``), every
dash-like character (U+2010..U+2015, U+2043, U+2212, U+2E3A, U+2E3B, U+FE58, U+FE63) made
``-``, surrounding white space trimmed, case folded.  So ``BEIR-SciFact``, ``' beir-scifact'``,
``beir‐scifact`` (U+2010) and ``MeetingBank`` find ``beir-scifact`` and ``meetingbank``.
"""

from __future__ import annotations

import functools
import unicodedata

#: Default_Ignorable_Code_Point ranges (Unicode DerivedCoreProperties.txt)
_DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
    (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
    (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
#: general categories that never belong in a name: controls, format characters, surrogates,
#: private use, unassigned, line and paragraph separators
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_DASHES = dict.fromkeys(
    [*range(0x2010, 0x2016), 0x2043, 0x2212, 0x2E3A, 0x2E3B, 0xFE58, 0xFE63], "-")

#: scripts that may join Latin (TR39 Moderately Restrictive): these sets, or Latin with one
#: script outside _NEVER_WITH_LATIN
_ALLOWED_MIXES = (frozenset({"LATIN", "HAN", "HIRAGANA", "KATAKANA"}),
                  frozenset({"LATIN", "HAN", "BOPOMOFO"}),
                  frozenset({"LATIN", "HAN", "HANGUL"}))
_NEVER_WITH_LATIN = frozenset({"CYRILLIC", "GREEK", "CHEROKEE"})
_SCRIPT_ALIASES = {"CJK": "HAN", "IDEOGRAPHIC": "HAN"}

#: Cyrillic and Greek letters that look like Latin ones (a subset of TR39's confusables.txt,
#: enough to spell any registered name); used only to find whole-script look-alikes
_LATIN_LOOKALIKES = str.maketrans({
    # Cyrillic capitals and small letters
    "А": "A", "В": "B", "Е": "E", "Н": "H", "І": "I", "Ј": "J", "К": "K", "М": "M", "О": "O",
    "Р": "P", "С": "C", "Т": "T", "Х": "X", "У": "Y", "Ѕ": "S", "Ԛ": "Q", "Ԝ": "W", "Ӏ": "l",
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l", "о": "o",
    "р": "p", "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y",
    # Greek capitals and small letters
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N",
    "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X", "ο": "o", "ι": "i", "κ": "k", "ν": "v",
    "υ": "u", "ρ": "p", "α": "a",
})


class CorpusNameError(ValueError):
    """A corpus name refused as invisible or confusable (module docstring)."""


def _invisible(char: str) -> bool:
    code = ord(char)
    return (unicodedata.category(char) in _INVISIBLE_CATEGORIES
            or any(low <= code <= high for low, high in _DEFAULT_IGNORABLE))


def _script(char: str) -> str | None:
    """The script of a letter (first word of its Unicode name), None for anything else."""
    if not unicodedata.category(char).startswith("L"):
        return None
    word = unicodedata.name(char, "UNKNOWN").split(" ", 1)[0]
    if "-" in word:  # KATAKANA-HIRAGANA PROLONGED SOUND MARK: shared by both, so neither
        return None
    return _SCRIPT_ALIASES.get(word, word)


def _mixed(scripts: set[str]) -> bool:
    if len(scripts) <= 1 or any(scripts <= allowed for allowed in _ALLOWED_MIXES):
        return False
    return not (len(scripts) == 2 and "LATIN" in scripts and not scripts & _NEVER_WITH_LATIN)


def _shown(name: str) -> str:
    return ascii(name) if not name.isprintable() else repr(name)


@functools.lru_cache(maxsize=4096)
def registry_key(name: str, where: str = "corpus name") -> str:
    """``name`` as the registry compares it (module docstring), or CorpusNameError naming
    ``where``, the character and its position."""
    if not isinstance(name, str):
        raise CorpusNameError(f"{where}: must be a string, got {name!r}")
    for position, char in enumerate(name):
        if _invisible(char):
            raise CorpusNameError(
                f"{where} {_shown(name)}: holds the invisible character U+{ord(char):04X} "
                f"{unicodedata.name(char, '(unnamed)')} at position {position}; a corpus name "
                "must be visible as written (it decides the corpus's licence tier)")
    folded = unicodedata.normalize("NFKC", name).translate(_DASHES).strip()
    scripts = {s for s in map(_script, folded) if s is not None}
    if _mixed(scripts):
        main = "LATIN" if "LATIN" in scripts else _script(next(c for c in folded if _script(c)))
        position, char = next((i, c) for i, c in enumerate(name)
                              if _script(unicodedata.normalize("NFKC", c)[:1] or c) not in (None, main))
        raise CorpusNameError(
            f"{where} {_shown(name)}: mixes the scripts {', '.join(sorted(scripts))}: "
            f"U+{ord(char):04X} {unicodedata.name(char, '(unnamed)')} at position {position} "
            "can pass for a letter of another script (Unicode TR39, moderately restrictive "
            "profile); write the name in one script")
    return folded.casefold()


def lookalike_key(name: str) -> str:
    """The key a Cyrillic or Greek ``name`` would have if its look-alike letters were the
    Latin ones (:data:`_LATIN_LOOKALIKES`); the plain key for any other name."""
    key = registry_key(name)
    if not {s for s in map(_script, key) if s is not None} & {"CYRILLIC", "GREEK"}:
        return key
    folded = unicodedata.normalize("NFKC", name).translate(_DASHES).strip()
    return folded.translate(_LATIN_LOOKALIKES).casefold()


def refuse_lookalike(name: str, registered: str, where: str = "corpus name") -> None:
    """CorpusNameError: ``name`` is written in another script but looks like ``registered``."""
    raise CorpusNameError(
        f"{where} {_shown(name)}: written in another script but looks like the registered "
        f"corpus {registered!r} (Unicode TR39 whole-script confusable); use {registered!r} "
        "itself or a name that does not look like it")
