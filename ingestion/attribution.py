"""Which licence a loaded copy of a corpus is attributed, and on what evidence.

An unregistered name gets licence unknown, tier B.  A name matching a registered source
whose tier is A gets that licence only with evidence tied to the content
(:mod:`ingestion.evidence`); a registered tier B or C needs no proof: it only makes the
corpus more restrictive.  The registry itself is :mod:`harness.core.sources`; the tier rule
is :mod:`harness.core.tiers`.
"""

from __future__ import annotations

from harness.core.sources import SOURCES, Source, source_for_corpus
from harness.core.tiers import UNKNOWN_LICENCE, source_tier, tier_for_licence
from ingestion.corpus import SourceInfo


def _unregistered(corpus_name: str, sha256: str, version: str | None, why: str) -> SourceInfo:
    return SourceInfo(
        name=corpus_name, version=version, licence=UNKNOWN_LICENCE,
        tier=tier_for_licence(UNKNOWN_LICENCE), evidence=why, sha256=sha256, citation=None,
        registry_source=None,
    )


def source_info(corpus_name: str, sha256: str, *, root=None, version: str | None = None,
                sources: dict[str, Source] | None = None, manifest_dirs=None,
                files=None) -> SourceInfo:
    """Provenance for a corpus loaded from ``root`` (the corpus's root folder); ``files``
    are the files the loader read (a mapping may give their sha256).

    An unregistered name gets licence unknown, tier B.  A name matching a registered source
    whose tier is A gets that licence only with evidence tied to the content
    (:mod:`ingestion.evidence`): for a source with pinned checksums, every one of ``files``
    matching them; otherwise a licence file in ``root`` naming the licence, or a fetch
    manifest of a download (searched in ``manifest_dirs``, default the fetch cache, and
    ``root``'s ancestors) whose recorded digest matches the tree holding ``root``.  Without
    it the corpus is treated as unregistered (tier B) and the evidence says why.  A
    registered tier B or C needs no proof: it only makes the corpus more restrictive.
    """
    source = source_for_corpus(corpus_name, sources)
    if source is None:
        return _unregistered(corpus_name, sha256, version,
                             "not in the source registry: licence not traced, so tier B "
                             "(fail closed)")
    evidence = source.evidence
    if source_tier(source) == "A":
        from ingestion.evidence import licence_file_evidence, manifest_evidence, pinned_evidence

        if source.pins is not None:
            ok, why = pinned_evidence(source, files, root)
            if ok and root is not None:
                found, note = licence_file_evidence(root, source.licence)
                if found:
                    why = f"{why}; {note}"
        elif root is None:
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
        evidence = (f"{source.evidence}; matched by name only (a tier-{source_tier(source)} licence "
                    "needs no proof: it can only make numbers more restrictive)")
    return SourceInfo(
        name=corpus_name, version=version if version is not None else source.version,
        licence=source.licence, tier=source_tier(source), evidence=evidence, sha256=sha256,
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
        licence=source.licence, tier=source_tier(source),
        evidence=(f"{source.evidence}; a corpus is loaded only if it passes the generator's "
                  "validator"),
        sha256=sha256, citation=source.citation, registry_source=source.name,
    )
