"""Licence tiers: the product's central invariant, defined here and nowhere else.

A = publishable, B = internal only, C = unobtainable (recorded and skipped).  The tier of a
corpus is *derived* from its licence by one rule, :func:`tier_for_licence`:

- A: the licence is on :data:`PUBLISHABLE_LICENCES`;
- C: the source needs a signed agreement or is not distributed;
- B: everything else: non-commercial, no-derivatives, research-only, a custom EULA, and
  ``unknown``.  Doubt fails closed.

A value pooled from several corpora (a pooled row, a run over one shared index, a document
summarising several runs) takes :func:`most_restrictive_tier`.  Order is by :func:`rank`
(A 0 < B 1 < C 2), never by comparing strings; the warehouse stores the same ranks in its
``tier_ranks`` table.  A registered corpus name can never be given a less restrictive tier
than its registry entry (:func:`registered_floor`), whatever licence a file or a flag claims.
"""

from __future__ import annotations

from typing import Iterable

from harness.core.sources import Source, source_for_corpus

#: Licence tiers, least restrictive first.
TIERS: tuple[str, ...] = ("A", "B", "C")
PUBLISHABLE = "A"

#: Licences that make a corpus publishable (tier A).  Anything not listed is tier B.
PUBLISHABLE_LICENCES: frozenset[str] = frozenset({
    "MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause",
    "CC0-1.0", "PDDL-1.0", "LicenseRef-public-domain",
    "CC-BY-2.0", "CC-BY-3.0", "CC-BY-4.0",
    "CC-BY-SA-3.0", "CC-BY-SA-4.0",
})

#: The licence recorded when none could be traced.
UNKNOWN_LICENCE = "unknown"


def check_tier(tier: object, where: str = "tier") -> str:
    """``tier`` when it is one of :data:`TIERS`; ValueError naming ``where`` otherwise."""
    if tier not in TIERS:
        raise ValueError(f"{where}: unknown licence tier {tier!r}; expected one of {sorted(TIERS)}")
    return str(tier)


def rank(tier: str) -> int:
    """The tier's position in the order A < B < C (more restrictive is larger)."""
    return TIERS.index(check_tier(tier))


def at_least_as_restrictive(tier: str, other: str) -> bool:
    """True when ``tier`` is ``other`` or more restrictive."""
    return rank(tier) >= rank(other)


def most_restrictive_tier(tiers: Iterable[str]) -> str:
    """The tier a value pooled from several corpora takes: the most restrictive one."""
    found = list(tiers)
    if not found:
        raise ValueError("no tiers to pool")
    return max(found, key=rank)


def tier_for_licence(licence: str, *, unobtainable: bool = False) -> str:
    """The licence tier by rule: C if unobtainable, A if publishable, else B (fail closed)."""
    if unobtainable:
        return "C"
    if licence in PUBLISHABLE_LICENCES:
        return "A"
    return "B"


def source_tier(source: Source) -> str:
    """A registered source's tier: its licence's, or C when it cannot be obtained."""
    return tier_for_licence(source.licence, unobtainable=source.unobtainable)


def registered_floor(corpus_name: str) -> str | None:
    """The tier of the registry entry a corpus name belongs to, or None when unregistered.

    No copy of a registered corpus may be less restrictive than its entry: ``beir-scifact``
    is tier B whatever licence a run declares for it, and so is ``BEIR-SciFact``: names are
    compared as :func:`harness.core.corpus_names.registry_key` says, and a name holding an
    invisible character or look-alike letters of another script is refused (ValueError).
    """
    source = source_for_corpus(corpus_name)
    return None if source is None else source_tier(source)


def licence_tier(licence: str, corpus_name: str | None = None) -> str:
    """The tier a licence gives a corpus: :func:`tier_for_licence`, made as restrictive as
    the corpus's registry entry when its name is registered (:func:`registered_floor`)."""
    tier = tier_for_licence(licence)
    floor = registered_floor(corpus_name) if corpus_name is not None else None
    return tier if floor is None else most_restrictive_tier([tier, floor])


def declared_tier(licence: str, tier: str | None = None,
                  corpus_name: str | None = None) -> tuple[str, str]:
    """``(tier, evidence)`` for a licence declared by the user (``--licence``, ``--tier``).

    The tier is derived from the licence (:func:`licence_tier`, so a registered corpus name
    keeps at least its registry tier); a declared ``tier`` may make it more restrictive,
    never less, so tier A with an unknown or non-publishable licence is refused (ValueError
    naming both flags).
    """
    derived = licence_tier(licence, corpus_name)
    if tier is None:
        tier = derived
    if tier not in TIERS:
        raise ValueError(f"--tier {tier!r}: unknown tier; expected one of {sorted(TIERS)}")
    if rank(tier) < rank(derived):
        raise ValueError(
            f"--tier {tier} refused: --licence {licence!r} gives tier {derived} "
            f"(publishable licences: {sorted(PUBLISHABLE_LICENCES)}); a tier can be made more "
            "restrictive, never less (licence doubt fails closed)")
    source = None if corpus_name is None else source_for_corpus(corpus_name)
    registered = "" if source is None else (
        f"; {corpus_name!r} is a registered corpus of tier {source_tier(source)}"
        + ("" if corpus_name == source.name else f" (registered as {source.name!r}: names are "
           "compared ignoring case, width, dash forms and surrounding space)")
        + ", and no declared licence makes it less restrictive")
    if licence == UNKNOWN_LICENCE:
        return tier, ("no licence declared (--licence): not traced, so not publishable"
                      + registered)
    if tier == tier_for_licence(licence):
        return tier, f"licence {licence} declared on the command line (--licence){registered}"
    return tier, (f"licence {licence} declared on the command line (--licence); tier {tier} "
                  f"more restrictive than the licence's {tier_for_licence(licence)}"
                  f"{registered}")
