"""Evidence that ties a registered licence to the content that was actually loaded.

A corpus's name is derived from a folder name (``beir-<folder>``, ``qmsum``), so a name alone
proves nothing: an internal transcript in QMSum's layout, or any BEIR folder called ``nq``,
would otherwise inherit a publishable licence.  Nor does a layout: ``fetch --from-dir``
checks the folders, not where the files came from.  A registered tier-A licence is
attributed only when:

- **pinned checksums** (a source registered with :class:`harness.core.sources.Pins`): every
  file loaded has a sha256 the registry pins for the upstream revision
  (:func:`pinned_evidence`).  One edited or foreign file and the corpus is tier B; for such
  a source nothing else counts (its own licence file is noted beside matching checksums);
- otherwise (a source without pins), **a fetch manifest** of a download: ``python -m
  ingestion fetch`` recorded this source's archive in a ``manifest.json`` and the digest of
  the unpacked tree that holds the loaded files still matches (a ``--from-dir``
  registration is no evidence of origin), or **the corpus's own licence file**
  (``LICENSE``, ``LICENCE``, ``COPYING``, optionally ``.txt``/``.md``) in its root names
  the registered licence and no restrictive term (non-commercial, no-derivatives,
  research-only).

Anything else fails closed (``ingestion.attribution.source_info``: licence unknown, tier B,
evidence saying what was missing).  A non-publishable registered tier needs no proof: it can
only make a number more restrictive.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from harness.core import settings
from harness.core.canonical import sha256_file

log = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
LICENCE_FILES: tuple[str, ...] = tuple(
    f"{stem}{suffix}" for stem in ("LICENSE", "LICENCE", "COPYING")
    for suffix in ("", ".txt", ".md"))

#: phrases whose presence means the text grants less than a publishable licence
RESTRICTIVE_TERMS: tuple[str, ...] = (
    "noncommercial", "non-commercial", "non commercial", "noderivatives", "noderivs",
    "no derivatives", "research purposes only", "research use only", "research-only",
    "for research only", "not for commercial",
)

#: SPDX id -> phrases (lower case, whitespace collapsed) its licence text always holds.  A
#: licence that is not listed cannot be evidenced by a licence file, only by a manifest.
LICENCE_MARKERS: dict[str, tuple[str, ...]] = {
    "MIT": ("permission is hereby granted, free of charge",
            'the software is provided "as is", without warranty of any kind'),
    "Apache-2.0": ("apache license", "version 2.0",
                   "terms and conditions for use, reproduction, and distribution"),
    "CC0-1.0": ("cc0 1.0 universal",),
    "CC-BY-4.0": ("attribution 4.0 international",),
    "CC-BY-SA-4.0": ("attribution-sharealike 4.0 international",),
    "CC-BY-3.0": ("attribution 3.0 unported",),
    "CC-BY-SA-3.0": ("attribution-sharealike 3.0 unported",),
}


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u201c", '"').replace("\u201d", '"')).lower()


def names_licence(text: str, licence: str) -> tuple[bool, str]:
    """``(True, why)`` when ``text`` is the licence ``licence`` (every marker phrase present)
    and names no restrictive term; otherwise ``(False, why not)``."""
    plain = _normalise(text)
    restrictive = sorted(t for t in RESTRICTIVE_TERMS if t in plain)
    if restrictive:
        return False, f"it names restrictive terms {restrictive}"
    markers = LICENCE_MARKERS.get(licence)
    if markers is None:
        return False, (f"{licence} cannot be recognised from a licence file (recognised: "
                       f"{sorted(LICENCE_MARKERS)}); use a fetch manifest")
    missing = [m for m in markers if m not in plain]
    if missing:
        return False, f"it is not the {licence} text (missing {missing[0]!r})"
    return True, f"it is the {licence} text"


def licence_file_evidence(root: Path, licence: str) -> tuple[bool, str]:
    """Does a licence file in ``root`` name ``licence``?  ``(ok, what was found)``."""
    root = Path(root)
    found = [root / name for name in LICENCE_FILES if (root / name).is_file()]
    if not found:
        return False, f"no licence file ({', '.join(LICENCE_FILES[:3])} ...) in the corpus root"
    notes = []
    for path in found:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            notes.append(f"{path.name} unreadable ({exc})")
            continue
        ok, why = names_licence(text, licence)
        if ok:
            return True, f"the {path.name} file in the corpus root is the {licence} licence"
        notes.append(f"{path.name} in the corpus root does not name {licence}: {why}")
    return False, "; ".join(notes)


#: unmatched files named in an evidence sentence (the fetch manifest lists them all)
NAMED = 5


@dataclass(frozen=True)
class PinCheck:
    """Which files of a copy match the checksums a source pins (display paths, sorted)."""

    revision: str
    pins_file: str
    matched: tuple[str, ...]
    unmatched: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return bool(self.matched) and not self.unmatched

    def block(self) -> dict:
        """What a fetch manifest records of the check."""
        return {"revision": self.revision, "file": self.pins_file,
                "matched": len(self.matched), "unmatched": list(self.unmatched)}


def _display(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(Path(root).resolve()).as_posix()
        except ValueError:
            pass
    return str(path)


def check_pins(source, files: Mapping[Path, str] | Iterable[Path],
               root: Path | None = None) -> PinCheck:
    """Match each file (a mapping gives its sha256 already computed) against the sha256
    ``source.pins`` lists for its upstream revision.  A file matches when its content is one
    of upstream's files at that revision; its path may differ (the loader reads what it
    finds)."""
    pins = source.pins
    pinned = set(pins.checksums().values())
    digests = dict(files) if isinstance(files, Mapping) else {Path(f): None for f in files}
    matched, unmatched = [], []
    for path in sorted(digests, key=str):
        digest = digests[path] or sha256_file(path)
        (matched if digest in pinned else unmatched).append(_display(Path(path), root))
    return PinCheck(pins.revision, pins.file, tuple(sorted(matched)), tuple(sorted(unmatched)))


def pinned_evidence(source, files, root: Path | None = None) -> tuple[bool, str]:
    """``(ok, why)``: do all ``files`` match the checksums ``source`` pins?"""
    if files is None:
        return False, "no list of the files loaded to check against the pinned checksums"
    check = check_pins(source, files, root)
    where = f"the sha256 pinned for upstream revision {check.revision[:12]} ({check.pins_file})"
    if check.ok:
        return True, f"all {len(check.matched)} files loaded match {where}"
    if not check.matched and not check.unmatched:
        return False, "no files were loaded to check against the pinned checksums"
    named = ", ".join(check.unmatched[:NAMED])
    more = f" and {len(check.unmatched) - NAMED} more" if len(check.unmatched) > NAMED else ""
    return False, (f"{len(check.unmatched)} of {len(check.matched) + len(check.unmatched)} "
                   f"files loaded do not match {where} (edited, or not upstream's): "
                   f"{named}{more}")


def _read_manifest(path: Path) -> list[dict] | None:
    """The entries of a fetch manifest, or None when ``path`` is not one (a synthetic
    corpus also has a manifest.json, of another shape)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        log.debug("%s: not a readable fetch manifest (%s)", path, exc)
        return None
    if not isinstance(doc, dict) or "schema" not in doc \
            or not isinstance(doc.get("artefacts"), list):
        return None
    return [e for e in doc["artefacts"] if isinstance(e, dict)]


def manifest_paths(path: Path, dests: Iterable[Path] | None = None) -> list[Path]:
    """Fetch manifests that may cover ``path``: those in ``dests`` (default: the fetch
    cache, ``$INGESTION_DATA_DIR``) and any ``manifest.json`` in ``path``'s ancestors
    (a ``fetch --dest DIR`` download unpacks below DIR)."""
    if dests is None:
        dests = [settings.data_dir()]
    path = Path(path).resolve()
    out: list[Path] = []
    for folder in [*(Path(d) for d in dests), *path.parents]:
        candidate = folder / MANIFEST_NAME
        if candidate.is_file() and candidate not in out:
            out.append(candidate)
    return out


def _covers(tree: Path, path: Path) -> bool:
    return tree == path or tree in path.parents


def manifest_evidence(source_name: str, path: Path,
                      dests: Iterable[Path] | None = None) -> tuple[bool, str]:
    """Is ``path`` inside a tree a fetch manifest recorded for ``source_name``, and does
    that tree still have the recorded digest?  ``(ok, what was found)``."""
    from ingestion.digest import tree_sha256

    path = Path(path).resolve()
    notes = []
    for manifest in manifest_paths(path, dests):
        for entry in _read_manifest(manifest) or ():
            if entry.get("source") != source_name:
                continue
            if entry.get("via") == "from-dir":
                if _covers(Path(str(entry.get("path"))).resolve(), path):
                    notes.append(f"fetch manifest entry {source_name}/(from-dir) only records "
                                 "where a copy was registered: a layout proves nothing about "
                                 "where files came from")
                continue
            if not entry.get("extracted"):
                continue
            tree = (manifest.parent / str(entry["extracted"])).resolve()
            expected = entry.get("extracted_sha256")
            label = f"{source_name}/{entry.get('filename')}"
            if not _covers(manifest.parent.resolve(), tree):
                notes.append(f"fetch manifest entry {label} points outside its folder "
                             f"({entry['extracted']!r}); ignored")
                continue
            if not _covers(tree, path):
                continue
            if not expected:
                notes.append(f"fetch manifest entry {label} records no digest of the unpacked "
                             "files (fetched by an older version: fetch it again)")
                continue
            actual = tree_sha256(tree)[0]
            if actual != expected:
                notes.append(f"the files differ from fetch manifest entry {label} (tree sha256 "
                             f"{actual[:12]}..., recorded {str(expected)[:12]}...)")
                continue
            return True, (f"fetch manifest entry {label} covers these files and their tree "
                          f"sha256 {actual[:12]}... matches")
    if not notes:
        notes.append(f"no fetch manifest records {source_name!r} for these files "
                     f"(python -m ingestion fetch --corpus {source_name} [--from-dir PATH])")
    return False, "; ".join(notes)
