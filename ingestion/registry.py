"""The source registry: every corpus the product knows, with its licence traced to its own terms.

A source declares its provenance as data (ir_datasets style): name, version, artefact URLs with
checksums, licence (an SPDX id where one exists, else a ``LicenseRef-`` id), the evidence the
licence was traced to, citation and role.  The tier is *derived* from the licence by one rule
(:func:`tier_for_licence`) so it cannot drift from it:

- A (publishable): the licence is on :data:`PUBLISHABLE_LICENCES`;
- C (unobtainable): the source needs a signed agreement or is not distributed (recorded, skipped);
- B (internal only): everything else: non-commercial, no-derivatives, research-only, a custom
  EULA, and ``unknown``.  Doubt fails closed.

Platform metadata (hub tags, repository fields) is recorded beside the licence when it
disagrees, never used as the licence.  The entries themselves live in :mod:`ingestion.sources`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ingestion.corpus import SourceInfo

#: Licences that make a corpus publishable (tier A).  Anything not listed is tier B.
PUBLISHABLE_LICENCES: frozenset[str] = frozenset({
    "MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause",
    "CC0-1.0", "PDDL-1.0", "LicenseRef-public-domain",
    "CC-BY-2.0", "CC-BY-3.0", "CC-BY-4.0",
    "CC-BY-SA-3.0", "CC-BY-SA-4.0",
})

#: The licence recorded when none could be traced.
UNKNOWN_LICENCE = "unknown"

_NAME = re.compile(r"^[a-z0-9][a-z0-9.-]*$")
_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX32 = re.compile(r"^[0-9a-f]{32}$")


def tier_for_licence(licence: str, *, unobtainable: bool = False) -> str:
    """The licence tier by rule: C if unobtainable, A if publishable, else B (fail closed)."""
    if unobtainable:
        return "C"
    if licence in PUBLISHABLE_LICENCES:
        return "A"
    return "B"


def declared_tier(licence: str, tier: str | None = None) -> tuple[str, str]:
    """``(tier, evidence)`` for a licence declared by the user (``--licence``, ``--tier``).

    The tier is derived from the licence (:func:`tier_for_licence`); a declared ``tier``
    may make it more restrictive, never less, so tier A with an unknown or non-publishable
    licence is refused (ValueError naming both flags).
    """
    from harness.records import TIERS

    derived = tier_for_licence(licence)
    if tier is None:
        tier = derived
    if tier not in TIERS:
        raise ValueError(f"--tier {tier!r}: unknown tier; expected one of {sorted(TIERS)}")
    if TIERS.index(tier) < TIERS.index(derived):
        raise ValueError(
            f"--tier {tier} refused: --licence {licence!r} gives tier {derived} "
            f"(publishable licences: {sorted(PUBLISHABLE_LICENCES)}); a tier can be made more "
            "restrictive, never less (licence doubt fails closed)")
    if licence == UNKNOWN_LICENCE:
        return tier, "no licence declared (--licence): not traced, so not publishable"
    if tier == derived:
        return tier, f"licence {licence} declared on the command line (--licence)"
    return tier, (f"licence {licence} declared on the command line (--licence); tier {tier} "
                  f"declared (--tier), more restrictive than the licence's {derived}")


@dataclass(frozen=True)
class Artefact:
    """One downloadable file of a source.

    ``sha256`` is ``None`` when it could not be verified when the entry was written: ``fetch``
    then records the digest of the first download in the manifest, and ``--verify`` checks
    against the manifest from then on.  ``md5`` is a checksum the distributor itself
    publishes (checked on download when present).
    """

    url: str
    filename: str
    sha256: str | None = None
    md5: str | None = None
    #: unpack the archive (zip or tar) after the checksum is verified
    extract: bool = False
    note: str | None = None

    def __post_init__(self):
        if not self.url.startswith(("http://", "https://")):
            raise ValueError(f"artefact {self.filename!r}: url must be http(s), got {self.url!r}")
        if not self.filename or "/" in self.filename or self.filename.startswith("."):
            raise ValueError(f"artefact of {self.url!r}: bad filename {self.filename!r}")
        if self.sha256 is not None and not _HEX64.match(self.sha256):
            raise ValueError(f"artefact {self.filename!r}: sha256 must be 64 hex digits or None")
        if self.md5 is not None and not _HEX32.match(self.md5):
            raise ValueError(f"artefact {self.filename!r}: md5 must be 32 hex digits or None")


@dataclass(frozen=True)
class Source:
    """One registered corpus source.  ``tier`` follows from ``licence`` (module docstring)."""

    name: str
    title: str
    version: str | None
    licence: str
    #: where the licence was traced (the archive's own LICENSE, the authors' site ...)
    evidence: str
    citation: str
    role: str
    homepage: str | None = None
    artefacts: tuple[Artefact, ...] = ()
    #: directory layout ``fetch --from-dir`` checks: qmsum, beir, trec, synthetic or any
    layout: str = "any"
    #: what relevance judgements the source carries, if any
    judgements: str | None = None
    #: what platform metadata claims, recorded when it disagrees with the licence
    platform_metadata: str | None = None
    #: needs a signed agreement or is not distributed: tier C, recorded and skipped
    unobtainable: bool = False
    #: how to obtain it when there is no direct artefact
    access: str | None = None

    def __post_init__(self):
        if not _NAME.match(self.name):
            raise ValueError(f"source name {self.name!r}: lower-case letters, digits, '.', '-'")
        for field_name in ("title", "licence", "evidence", "citation", "role"):
            if not str(getattr(self, field_name) or "").strip():
                raise ValueError(f"source {self.name!r}: field {field_name!r} is empty")
        if self.layout not in LAYOUTS:
            raise ValueError(f"source {self.name!r}: unknown layout {self.layout!r}; "
                             f"expected one of {sorted(LAYOUTS)}")

    @property
    def tier(self) -> str:
        return tier_for_licence(self.licence, unobtainable=self.unobtainable)


LAYOUTS = frozenset({"qmsum", "beir", "trec", "synthetic", "any"})


class UnknownSourceError(KeyError, ValueError):
    """A source name the registry does not hold (message lists the known names)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else "unknown source"


def _build() -> dict[str, Source]:
    from ingestion.sources import ALL_SOURCES

    out: dict[str, Source] = {}
    for source in ALL_SOURCES:
        if source.name in out:
            raise ValueError(f"source {source.name!r} is registered twice")
        out[source.name] = source
    return out


#: Every registered source by name.
SOURCES: dict[str, Source] = _build()


def lookup(name: str, sources: dict[str, Source] | None = None) -> Source:
    """The registered source ``name``; raises :class:`UnknownSourceError` listing the known ones."""
    registry = SOURCES if sources is None else sources
    try:
        return registry[name]
    except KeyError:
        raise UnknownSourceError(
            f"unknown source {name!r}; registered sources: {sorted(registry)}") from None


def source_for_corpus(corpus_name: str, sources: dict[str, Source] | None = None) -> Source | None:
    """The registry entry a loaded corpus belongs to, or None when it is unregistered.

    A QMSum domain corpus (``qmsum-product``) belongs to ``qmsum``.
    """
    registry = SOURCES if sources is None else sources
    if corpus_name in registry:
        return registry[corpus_name]
    if corpus_name.startswith("qmsum-") and "qmsum" in registry:
        return registry["qmsum"]
    return None


def _unregistered(corpus_name: str, sha256: str, version: str | None, why: str) -> SourceInfo:
    return SourceInfo(
        name=corpus_name, version=version, licence=UNKNOWN_LICENCE,
        tier=tier_for_licence(UNKNOWN_LICENCE), evidence=why, sha256=sha256, citation=None,
        registry_source=None,
    )


def source_info(corpus_name: str, sha256: str, *, root=None, version: str | None = None,
                sources: dict[str, Source] | None = None, manifest_dirs=None) -> SourceInfo:
    """Provenance for a corpus loaded from ``root`` (the corpus's root folder).

    An unregistered name gets licence unknown, tier B.  A name matching a registered source
    whose tier is A gets that licence only with evidence tied to the content
    (:mod:`ingestion.evidence`): a licence file in ``root`` naming the licence, or a fetch
    manifest (searched in ``manifest_dirs``, default the fetch cache, and ``root``'s
    ancestors) whose recorded digest matches the tree holding ``root``.  Without it the
    corpus is treated as unregistered (tier B) and the evidence says why.  A registered
    tier B or C needs no proof: it only makes the corpus more restrictive.
    """
    source = source_for_corpus(corpus_name, sources)
    if source is None:
        return _unregistered(corpus_name, sha256, version,
                             "not in the source registry: licence not traced, so tier B "
                             "(fail closed)")
    evidence = source.evidence
    if source.tier == "A":
        from ingestion.evidence import licence_file_evidence, manifest_evidence

        if root is None:
            ok, why = False, "no corpus folder given to check"
        else:
            ok, why = licence_file_evidence(root, source.licence)
            if not ok:
                found, note = manifest_evidence(source.name, root, manifest_dirs)
                ok, why = found, note if found else f"{why}; {note}"
        if not ok:
            return _unregistered(
                corpus_name, sha256, version,
                f"named like registered source {source.name!r} ({source.licence}), but nothing "
                f"ties this content to it: {why}; so licence unknown, tier B (fail closed)")
        evidence = f"{source.evidence}; verified for this copy: {why}"
    else:
        evidence = (f"{source.evidence}; matched by name only (a tier-{source.tier} licence "
                    "needs no proof: it can only make numbers more restrictive)")
    return SourceInfo(
        name=corpus_name, version=version if version is not None else source.version,
        licence=source.licence, tier=source.tier, evidence=evidence, sha256=sha256,
        citation=source.citation, registry_source=source.name,
    )


def generated_source_info(corpus_name: str, sha256: str, *, version: str | None = None,
                          sources: dict[str, Source] | None = None) -> SourceInfo:
    """Provenance of a corpus this product generated (``ingestion synth``) and validated on
    load: the registered ``synthetic`` source's licence, whatever the corpus is named."""
    registry = SOURCES if sources is None else sources
    source = registry["synthetic"]
    return SourceInfo(
        name=corpus_name, version=version if version is not None else source.version,
        licence=source.licence, tier=source.tier,
        evidence=(f"{source.evidence}; a corpus is loaded only if it passes the generator's "
                  "validator"),
        sha256=sha256, citation=source.citation, registry_source=source.name,
    )
