"""Acquire corpora reproducibly: download, verify, register local copies, keep a manifest.

The destination directory holds ``<source>/<artefact>`` files (and their unpacked folders)
and ``manifest.json``: one entry per artefact with source, url, licence, tier, sha256, size
and where the sha256 came from (the registry, or the first download when the registry could
not carry a verified checksum), and for an unpacked archive the digest of the unpacked tree
(``extracted_sha256``): the loaders attribute a registered licence to files only when such a
recorded digest still matches them (:mod:`ingestion.evidence`).  Rules:

- a tier-B source (non-commercial, research-only, unknown) is refused unless
  ``accept_noncommercial`` is given; a tier-C source is recorded as unobtainable and skipped;
- a download whose md5 (as published by the distributor) or sha256 (registry or manifest)
  differs is deleted and refused, naming the artefact; nothing half-downloaded is kept
  (downloads go to a ``.part`` file that is renamed only when verified);
- :func:`verify` works offline: it re-hashes what the manifest lists and names every
  artefact whose checksum differs;
- :func:`register_dir` records a local copy (e.g. a clone of the upstream repository) after
  checking its layout, with a digest of the whole tree;
- without network the error names the URL and suggests ``--from-dir``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tarfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from harness.core import settings
from harness.core.canonical import canonical_json, sha256_file
from ingestion.digest import tree_files, tree_sha256
from harness.core.sources import SOURCES, Artefact, Source, lookup
from harness.core.tiers import source_tier

log = logging.getLogger(__name__)

MANIFEST_NAME = "manifest.json"
MANIFEST_SCHEMA = 1
USER_AGENT = "retrieval-eval-ingestion/1"
CHUNK = 1 << 16


class FetchError(ValueError):
    """A fetch, registration or verification that cannot proceed (message says why)."""


def default_dest() -> Path:
    """``$INGESTION_DATA_DIR`` or ``~/.cache/retrieval-eval/corpora``."""
    return settings.data_dir()


# --------------------------------------------------------------------------- manifest


def read_manifest(dest) -> dict:
    path = Path(dest) / MANIFEST_NAME
    if not path.is_file():
        return {"schema": MANIFEST_SCHEMA, "artefacts": []}
    from harness.core.formats import FormatError, read_json_object

    try:  # located errors for bad bytes, bad JSON, deep nesting, numbers too long
        doc = read_json_object(path)
    except FormatError as exc:
        if exc.line is None and "expected a JSON object" in str(exc):
            raise FetchError(f"{path}: field 'artefacts': expected a list of entries") from None
        raise FetchError(f"{exc} (fetch manifest)") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("artefacts"), list):
        raise FetchError(f"{path}: field 'artefacts': expected a list of entries")
    for i, entry in enumerate(doc["artefacts"]):
        if not isinstance(entry, dict):
            raise FetchError(f"{path}: field 'artefacts[{i}]': expected an object, got {entry!r:.60}")
        for key in ("source", "path", "sha256", "filename", "via", "extracted", "extracted_sha256"):
            required = key in ("source", "path", "sha256")
            value = entry.get(key)
            if not (isinstance(value, str) and value) and (required or value is not None):
                raise FetchError(f"{path}: field 'artefacts[{i}].{key}': expected "
                                 f"{'a' if required else 'null or a'} non-empty string, got {value!r:.60}")
    return doc


def write_manifest(dest, manifest: dict) -> None:
    """Write ``manifest.json`` beside itself and rename it into place (Ctrl-C included,
    the old manifest or the new one, never half, and no temporary file left)."""
    from harness.core.atomic import write_files

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    manifest["artefacts"] = sorted(manifest["artefacts"],
                                   key=lambda e: (e["source"], e.get("filename") or ""))
    write_files([(dest / MANIFEST_NAME, canonical_json(manifest))])


def _entry_key(entry: dict) -> tuple[str, str]:
    return (entry["source"], entry.get("filename") or "")


def _upsert(manifest: dict, entry: dict) -> None:
    manifest["artefacts"] = [e for e in manifest["artefacts"] if _entry_key(e) != _entry_key(entry)]
    manifest["artefacts"].append(entry)


# --------------------------------------------------------------------------- selection


def resolve_sources(names, sources: dict[str, Source] | None = None) -> list[Source]:
    registry = SOURCES if sources is None else sources
    if not names:
        raise FetchError(f"name the corpora with --corpus NAME ...; registered: {sorted(registry)}")
    return [lookup(n, registry) for n in dict.fromkeys(names)]


def check_tiers(selected: list[Source], accept_noncommercial: bool) -> list[Source]:
    """Refuse tier B without the flag; return the sources that are not tier C."""
    refused = [s for s in selected if source_tier(s) == "B" and not accept_noncommercial]
    if refused:
        listed = ", ".join(f"{s.name} ({s.licence})" for s in refused)
        raise FetchError(f"refusing tier-B (internal-only) sources without "
                         f"--accept-noncommercial: {listed}. Their numbers can never be published.")
    for s in selected:
        if source_tier(s) == "C":
            log.warning("%s is unobtainable (tier C): %s; skipped", s.name, s.access or s.evidence)
    return [s for s in selected if source_tier(s) != "C"]


# --------------------------------------------------------------------------- download


def _open(url: str, timeout: float):
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    return urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 - http(s) only (Artefact)


def _offline_error(source: Source, artefact: Artefact, reason) -> FetchError:
    return FetchError(
        f"cannot download {artefact.url} ({source.name}/{artefact.filename}): {reason}. "
        f"Without network, obtain the files another way and register them with: "
        f"python -m ingestion fetch --corpus {source.name} --from-dir PATH")


def _stream(source: Source, artefact: Artefact, part: Path, timeout: float) -> tuple[str, str, int]:
    from tqdm import tqdm

    sha, md5, size = hashlib.sha256(), hashlib.md5(), 0  # noqa: S324 - md5 only to match a published value
    try:
        with _open(artefact.url, timeout) as response, part.open("wb") as out:
            total = response.headers.get("Content-Length")
            with tqdm(total=int(total) if total and total.isdigit() else None, unit="B",
                      unit_scale=True, desc=f"{source.name}/{artefact.filename}",
                      disable=None) as bar:
                while True:
                    block = response.read(CHUNK)
                    if not block:
                        break
                    out.write(block)
                    sha.update(block)
                    md5.update(block)
                    size += len(block)
                    bar.update(len(block))
    except urllib.error.HTTPError as exc:
        raise FetchError(f"cannot download {artefact.url} ({source.name}/{artefact.filename}): "
                         f"HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise _offline_error(source, artefact, getattr(exc, "reason", exc)) from None
    return sha.hexdigest(), md5.hexdigest(), size


def _safe_extract(archive: Path, target: Path) -> None:
    """Unpack ``archive`` into a new directory swapped in at ``target`` (nothing of a member
    that would land outside it is written)."""
    from harness.core.atomic import replace_directory

    def unpack(staging: Path) -> None:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as zf:
                root = staging.resolve()
                for member in zf.namelist():
                    dest = (staging / member).resolve()
                    if root != dest and root not in dest.parents:
                        raise FetchError(f"{archive}: member {member!r} would unpack outside {target}")
                zf.extractall(staging)
        elif tarfile.is_tarfile(archive):
            with tarfile.open(archive) as tf:
                tf.extractall(staging, filter="data")
        else:
            raise FetchError(f"{archive}: marked for unpacking but neither zip nor tar")

    replace_directory(target, unpack)


ARCHIVE_SUFFIXES = (".tar.gz", ".tar.bz2", ".tar.xz", ".tgz", ".tar", ".zip")


def _unpacked_name(filename: str) -> str:
    for suffix in ARCHIVE_SUFFIXES:
        if filename.endswith(suffix) and len(filename) > len(suffix):
            return filename[: -len(suffix)]
    return f"{filename}.unpacked"


def _fetch_artefact(source: Source, artefact: Artefact, dest: Path, manifest: dict,
                    timeout: float) -> dict:
    folder = dest / source.name
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / artefact.filename
    recorded = next((e for e in manifest["artefacts"]
                     if _entry_key(e) == (source.name, artefact.filename)), None)
    expected = artefact.sha256 or (recorded or {}).get("sha256")
    origin = "registry" if artefact.sha256 else ("manifest" if recorded else "first-download")
    if target.is_file() and expected and sha256_file(target) == expected:
        log.info("%s/%s: already present and verified", source.name, artefact.filename)
        sha, size = expected, target.stat().st_size
    else:
        part = folder / f".{artefact.filename}.part-{os.getpid()}"
        try:
            sha, md5, size = _stream(source, artefact, part, timeout)
            if artefact.md5 and md5 != artefact.md5:
                raise FetchError(f"checksum mismatch for {source.name}/{artefact.filename} "
                                 f"({artefact.url}): md5 {md5}, published {artefact.md5}; "
                                 "download discarded")
            if expected and sha != expected:
                raise FetchError(f"checksum mismatch for {source.name}/{artefact.filename} "
                                 f"({artefact.url}): sha256 {sha}, expected {expected} "
                                 f"(from the {origin}); download discarded")
            os.replace(part, target)
        finally:
            if part.exists():
                part.unlink()
    extracted = extracted_sha256 = None
    if artefact.extract:
        unpacked = folder / _unpacked_name(artefact.filename)
        if not unpacked.is_dir() or not any(unpacked.iterdir()) or recorded is None \
                or recorded.get("sha256") != sha:
            _safe_extract(target, unpacked)
        children = list(unpacked.iterdir())
        if len(children) == 1 and children[0].is_dir():  # the archive's own top folder
            unpacked = children[0]
        extracted = unpacked.relative_to(dest).as_posix()
        # the unpacked files are what loaders read: their digest ties a loaded corpus to
        # this verified download (ingestion.evidence)
        extracted_sha256 = tree_sha256(unpacked)[0]
    return {
        "source": source.name, "filename": artefact.filename, "url": artefact.url,
        "licence": source.licence, "tier": source_tier(source), "sha256": sha,
        "sha256_origin": origin, "md5_published": artefact.md5, "size": size,
        "path": target.relative_to(dest).as_posix(), "extracted": extracted,
        "extracted_sha256": extracted_sha256, "via": "download",
    }


def fetch(names, dest=None, *, accept_noncommercial: bool = False,
          sources: dict[str, Source] | None = None, timeout: float = 60.0) -> list[dict]:
    """Download every artefact of the named sources into ``dest``; returns the manifest entries."""
    dest = Path(dest) if dest is not None else default_dest()
    selected = check_tiers(resolve_sources(names, sources), accept_noncommercial)
    missing = [s for s in selected if not s.artefacts]
    if missing:
        listed = "; ".join(f"{s.name}: {s.access or 'no direct download registered'}" for s in missing)
        raise FetchError(f"no direct download for {listed}. Register a local copy with "
                         "--from-dir PATH")
    manifest = read_manifest(dest)
    entries = []
    for source in selected:
        for artefact in source.artefacts:
            entry = _fetch_artefact(source, artefact, dest, manifest, timeout)
            _upsert(manifest, entry)
            write_manifest(dest, manifest)  # each verified artefact is recorded at once
            entries.append(entry)
    return entries


# --------------------------------------------------------------------------- local copies


def check_layout(layout: str, path: Path) -> str:
    """Raise ``FetchError`` unless ``path`` has the layout; returns a one-line description."""
    if not path.is_dir():
        raise FetchError(f"{path}: not a directory")
    try:
        if layout == "qmsum":
            from ingestion.loaders.qmsum import _copies, discover

            scope, domains = discover(path)
            meetings = _copies(domains)
            if not meetings:
                raise FileNotFoundError(f"{path}: the QMSum folders hold no *.json meetings")
            return f"QMSum layout ({scope}): {len(meetings)} meetings"
        if layout == "beir":
            from ingestion.loaders.beir import resolve_beir

            _, qrels, split = resolve_beir(path)
            return f"BEIR layout, split {split}"
        if layout == "trec":
            from ingestion.loaders.trec import resolve_trec

            resolve_trec(path)
            return "TREC layout"
        if layout == "synthetic":
            from ingestion.synthetic import _is_synthetic_dir

            if not _is_synthetic_dir(path):
                raise FileNotFoundError(f"{path}: no synthetic corpus manifest.json")
            return "synthetic corpus"
    except (FileNotFoundError, ValueError) as exc:
        raise FetchError(f"--from-dir {path}: layout check failed for a {layout} source: {exc}") from None
    if not any(path.iterdir()):
        raise FetchError(f"--from-dir {path}: the directory is empty")
    return "directory"


def copy_files(layout: str, path: Path) -> list[Path]:
    """The files a loader reads from a copy in ``layout``: the ones pinned checksums must
    vouch for (QMSum: every meeting JSON file of the split folders; otherwise every file)."""
    if layout == "qmsum":
        from ingestion.loaders.qmsum import _copies, discover

        return sorted(c.path for group in _copies(discover(path)[1]).values() for c in group)
    return tree_files(path)


def register_dir(name: str, path, dest=None, *, accept_noncommercial: bool = False,
                 sources: dict[str, Source] | None = None) -> dict:
    """Record a local copy of source ``name`` in the manifest after checking its layout.

    A layout says nothing about where the files came from, so a copy of a tier-A source is
    recorded as tier A only when every file a loader reads matches the checksums the
    registry pins for the upstream revision (``entry["pins"]``: how many matched, which
    did not); otherwise, and for a tier-A source without pins, the entry is tier B, licence
    unknown (the registration is kept for ``--verify``)."""
    from harness.core.tiers import UNKNOWN_LICENCE
    from ingestion.evidence import check_pins

    dest = Path(dest) if dest is not None else default_dest()
    (source,) = resolve_sources([name], sources)
    if not check_tiers([source], accept_noncommercial):
        raise FetchError(f"{source.name} is unobtainable (tier C): {source.access or source.evidence}")
    path = Path(path).resolve()
    described = check_layout(source.layout, path)
    sha, count, size = tree_sha256(path)
    tier, pins = source_tier(source), None
    if tier == "A":
        if source.pins is not None:
            check = check_pins(source, copy_files(source.layout, path), root=path)
            pins = check.block()
            tier = "A" if check.ok else "B"
        else:
            tier = "B"
    entry = {
        "source": source.name, "filename": None, "url": None,
        "licence": source.licence if tier == source_tier(source) else UNKNOWN_LICENCE,
        "tier": tier, "sha256": sha, "sha256_origin": "tree digest at registration",
        "md5_published": None, "size": size, "files": count, "path": str(path),
        "extracted": None, "via": "from-dir", "layout": described, "pins": pins,
    }
    manifest = read_manifest(dest)
    _upsert(manifest, entry)
    write_manifest(dest, manifest)
    return entry


# --------------------------------------------------------------------------- verify


def _within(root: Path, path: Path) -> bool:
    return path == root or root in path.parents


def inside(dest: Path, recorded, field: str) -> tuple[Path, str | None]:
    """``dest / recorded`` and None, or a refusal when it resolves (symbolic links
    followed) outside ``dest``: a manifest never makes verify read a file elsewhere."""
    if not isinstance(recorded, str) or not recorded:
        return Path(dest), f"field {field!r} is not a path inside {dest}"
    path = Path(dest) / recorded
    root, resolved = Path(dest).resolve(), path.resolve()
    if not _within(root, resolved):
        return path, (f"field {field!r} {recorded!r} resolves outside {dest} (to {resolved}); "
                      "a manifest path must stay inside its destination")
    return path, None


def escaping_files(tree: Path) -> str | None:
    """A refusal naming the files below ``tree`` that are symbolic links resolving outside
    it (their content would be hashed as if it were the corpus's), or None."""
    root = tree.resolve()
    outside = [p for p in tree_files(tree) if not _within(root, p.resolve())]
    if not outside:
        return None
    named = ", ".join(f"{p.relative_to(tree).as_posix()} -> {p.resolve()}" for p in outside[:5])
    return (f"{len(outside)} file(s) under {tree} resolve outside it ({named}); a manifest "
            "path must stay inside its destination")


def verify(dest=None, names=None, sources: dict[str, Source] | None = None) -> tuple[list[str], list[str]]:
    """Re-hash what the manifest lists, offline.  Returns ``(problems, verified)`` messages."""
    dest = Path(dest) if dest is not None else default_dest()
    if not (dest / MANIFEST_NAME).is_file():
        raise FetchError(f"{dest}: no {MANIFEST_NAME}; nothing has been fetched or registered there")
    registry = SOURCES if sources is None else sources
    entries = read_manifest(dest)["artefacts"]
    if names:
        unknown = sorted(set(names) - {e["source"] for e in entries})
        if unknown:
            raise FetchError(f"not in {dest / MANIFEST_NAME}: {unknown}")
        entries = [e for e in entries if e["source"] in set(names)]
    problems, verified = [], []
    for e in entries:
        label = f"{e['source']}/{e.get('filename') or '(from-dir)'}"
        if e.get("via") == "from-dir":
            path = Path(str(e.get("path")))
            if not path.is_absolute() or not path.is_dir():
                problems.append(f"{label}: registered directory {path} is missing")
                continue
            escaped = escaping_files(path)
            if escaped:
                problems.append(f"{label}: refused: {escaped}")
                continue
            actual = tree_sha256(path)[0]
        else:
            path, escaped = inside(dest, e.get("path"), "path")
            if escaped:
                problems.append(f"{label}: refused: {escaped}")
                continue
            if not path.is_file():
                problems.append(f"{label}: {path} is missing")
                continue
            actual = sha256_file(path)
        if actual != e["sha256"]:
            problems.append(f"{label}: sha256 {actual} differs from the manifest's {e['sha256']}")
            continue
        if e.get("extracted") and e.get("extracted_sha256"):
            unpacked, escaped = inside(dest, e["extracted"], "extracted")
            escaped = escaped or (escaping_files(unpacked) if unpacked.is_dir() else None)
            if escaped:
                problems.append(f"{label}: refused: {escaped}")
                continue
            tree = tree_sha256(unpacked)[0] if unpacked.is_dir() else None
            if tree != e["extracted_sha256"]:
                problems.append(f"{label}: the unpacked files {unpacked} "
                                + ("are missing" if tree is None else
                                   f"have tree sha256 {tree}, the manifest's is "
                                   f"{e['extracted_sha256']}"))
                continue
        source = registry.get(e["source"])
        pinned = next((a.sha256 for a in (source.artefacts if source else ())
                       if a.filename == e.get("filename")), None)
        if pinned and pinned != actual:
            problems.append(f"{label}: sha256 {actual} differs from the registry's {pinned}")
            continue
        verified.append(f"{label}: ok ({e['sha256'][:12]}..., tier {e['tier']})")
    return problems, verified
