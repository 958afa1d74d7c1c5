"""Evidence that ties a registered licence to the content that was actually loaded.

A corpus's name is derived from a folder name (``beir-<folder>``, ``qmsum``), so a name alone
proves nothing: an internal transcript in QMSum's layout, or any BEIR folder called ``nq``,
would otherwise inherit a publishable licence.  A registered tier-A licence is attributed
only when one of these holds:

- **fetch manifest**: ``python -m ingestion fetch`` (a download, or ``--from-dir``)
  recorded this source in a ``manifest.json``, and the recorded checksum of the tree that
  holds the loaded files still matches it (a download records the unpacked tree's digest
  beside the archive's);
- **licence file**: the corpus's own licence file (``LICENSE``, ``LICENCE``, ``COPYING``,
  optionally ``.txt``/``.md``) in its root names the registered licence, and names no
  restrictive term (non-commercial, no-derivatives, research-only).

Anything else fails closed (``ingestion.attribution.source_info``: licence unknown, tier B,
evidence saying what was missing).  A non-publishable registered tier needs no proof: it can
only make a number more restrictive.
"""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Iterable

from harness.core import settings

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
                tree, expected = Path(str(entry.get("path"))), entry.get("sha256")
                label = f"{source_name}/(from-dir)"
            elif entry.get("extracted"):
                tree = manifest.parent / str(entry["extracted"])
                expected = entry.get("extracted_sha256")
                label = f"{source_name}/{entry.get('filename')}"
            else:
                continue
            tree = tree.resolve()
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
