"""Submissions: a results directory (or a claim document, a judging task, a labels batch:
:mod:`harness.claims.judging`) delivered whole to a shared store.

A submission is immutable and named by its content digest: the sha256 of its canonical
listing (every file's name and sha256, sorted; :func:`listing_digest`).  In the store::

    submissions/<digest>/files/<name>   each file, as it was
    submissions/<digest>/manifest.json  the listing (kind, files with sha256 and size)
    complete/<digest>                   the marker, written last: only now is it visible

The files and the manifest go in first, the marker last, each put-if-absent: a reader that
lists markers (:func:`complete`, one key per submission under their own prefix, so a
listing never walks the submissions' files) never sees half an upload, two submitters of one
directory write the same bytes under the same keys, and submitting it again is a no-op.
:func:`fetch` reads one back into a local directory, checking every size and sha256
against the manifest and the manifest against the digest, so what the store holds is
never trusted on its own.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping

from harness.core.canonical import canonical_json, sha256_file
from harness.core.store import LinkRefused, ObjectTooLarge, Store, StoreError

PREFIX = "submissions/"
MANIFEST = "manifest.json"
#: the markers' own prefix: ``complete/<digest>``
COMPLETE_PREFIX = "complete/"
#: a directory's kind, by the file that makes it one (checked in this order)
DIRECTORY_KINDS = (("metrics.json", "results"), ("task.json", "judging-task"),
                   ("labels.json", "labels"))
KINDS = ("results", "document", "judging-task", "labels")
#: bounds on what a submission may hold (a submission is a remote party's input)
MAX_FILES = 1000
MAX_MANIFEST_BYTES = 1 << 20
MAX_SUBMISSION_BYTES = 4 << 30
_HEX = frozenset("0123456789abcdef")


class SubmissionRefused(ValueError):
    """What was given cannot be submitted, or what the store holds is not a submission."""


@dataclass(frozen=True)
class Listing:
    """What a submission holds: its kind and ``{name: (sha256, bytes)}``; ``mtimes``
    (nanoseconds, outside the digest) lets a copy read back keep each file's modification
    time, which a run without a recorded creation time is dated by."""

    kind: str
    files: Mapping[str, tuple[str, int]]
    mtimes: Mapping[str, int] = field(default_factory=dict)

    @property
    def digest(self) -> str:
        return listing_digest(self.kind, {n: s for n, (s, _) in self.files.items()})

    def manifest(self) -> str:
        return canonical_json({"digest": self.digest, "kind": self.kind, "files": [
            {"name": n, "sha256": s, "bytes": b, "mtime_ns": self.mtimes.get(n, 0)}
            for n, (s, b) in sorted(self.files.items())]})


def listing_digest(kind: str, files: Mapping[str, str]) -> str:
    """sha256 of the canonical listing ``{"kind", "files": [[name, sha256], ...]}``."""
    text = canonical_json({"kind": kind, "files": [[n, files[n]] for n in sorted(files)]})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_digest(text: str) -> bool:
    return len(text) == 64 and set(text) <= _HEX


def _check_name(name: str, where: str) -> str:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name:
        raise SubmissionRefused(f"{where}: {name!r} is not a plain file name")
    return name


def listing_of(path: str | os.PathLike[str]) -> tuple[Listing, dict[str, Path]]:
    """The listing of a results directory (every regular file in it, dot files included)
    or of one claim document file, and where each file lies."""
    path = Path(path)
    if path.is_file() and not path.is_symlink():
        kind, found = "document", {_check_name(path.name, str(path)): path}
    elif path.is_dir():
        found = {}
        for entry in sorted(path.iterdir()):
            if entry.is_symlink() or not entry.is_file():
                raise SubmissionRefused(f"{entry}: a results directory holds plain files only "
                                        "(a link or a subdirectory is not submitted)")
            found[_check_name(entry.name, str(path))] = entry
        named = next((k for name, k in DIRECTORY_KINDS if name in found), None)
        if named is None:
            raise SubmissionRefused(f"{path}: not a results directory (no metrics.json), "
                                    "judging task (task.json) or labels batch (labels.json)")
        kind = named
    else:
        raise SubmissionRefused(f"{path}: no such results directory or document")
    if len(found) > MAX_FILES:
        raise SubmissionRefused(f"{path}: {len(found)} files; a submission holds at most "
                                f"{MAX_FILES}")
    files = {name: (sha256_file(p), p.stat().st_size) for name, p in found.items()}
    if sum(b for _, b in files.values()) > MAX_SUBMISSION_BYTES:
        raise SubmissionRefused(f"{path}: larger than {MAX_SUBMISSION_BYTES} bytes")
    mtimes = {name: p.stat().st_mtime_ns for name, p in found.items()}
    return Listing(kind, files, mtimes), found


def _key(digest: str, *parts: str) -> str:
    return PREFIX + "/".join((digest, *parts))


def marker_key(digest: str) -> str:
    """The key of submission ``digest``'s marker."""
    return COMPLETE_PREFIX + digest


@dataclass(frozen=True)
class Submitted:
    digest: str
    created: bool  #: False: the store already held it whole (a no-op)
    files: int


def submit(path: str | os.PathLike[str], store: Store) -> Submitted:
    """Deliver one results directory (or document) to ``store``; the marker goes last."""
    listing, paths = listing_of(path)
    digest = listing.digest
    marker = marker_key(digest)
    if store.list(marker) == [marker]:
        return Submitted(digest, False, len(paths))
    for name, file in sorted(paths.items()):
        data = file.read_bytes()
        if hashlib.sha256(data).hexdigest() != listing.files[name][0]:
            raise SubmissionRefused(f"{file}: changed while it was being submitted")
        store.put_if_absent(_key(digest, "files", name), data)
    store.put_if_absent(_key(digest, MANIFEST), listing.manifest().encode("utf-8"))
    stamp = datetime.now(timezone.utc).isoformat(timespec="microseconds")
    created = store.put_if_absent(marker, json.dumps(
        {"digest": digest, "submitted_at": stamp}, sort_keys=True).encode("utf-8"))
    return Submitted(digest, created, len(paths))


def complete(store: Store) -> list[str]:
    """The digests of every complete submission in ``store`` (those with a marker), sorted."""
    found = []
    for key in store.list(COMPLETE_PREFIX):
        tail = key[len(COMPLETE_PREFIX):]
        if is_digest(tail):
            found.append(tail)
    return sorted(found)


def submitted_at(store: Store, digest: str) -> str:
    """The time the submitter recorded in the marker ('' when unreadable: never trusted
    for anything but ordering)."""
    try:
        doc = json.loads(store.get(marker_key(digest), max_bytes=4096))
        stamp = doc.get("submitted_at") if isinstance(doc, dict) else None
    except (KeyError, ValueError, StoreError):
        return ""
    return stamp if isinstance(stamp, str) and len(stamp) < 64 else ""


def read_manifest(store: Store, digest: str) -> Listing:
    """The manifest of ``digest``, checked: its files' names, sizes and digests, and that
    its listing hashes to ``digest``."""
    where = f"{store.url}/{_key(digest, MANIFEST)}"
    try:
        doc: Any = json.loads(store.get(_key(digest, MANIFEST), max_bytes=MAX_MANIFEST_BYTES))
    except KeyError:
        raise SubmissionRefused(f"{where}: missing") from None
    except LinkRefused as exc:
        raise SubmissionRefused(str(exc)) from None
    except ValueError as exc:
        raise SubmissionRefused(f"{where}: not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("kind") not in KINDS \
            or not isinstance(doc.get("files"), list):
        raise SubmissionRefused(f"{where}: field 'kind'/'files': not a submission manifest")
    if len(doc["files"]) > MAX_FILES:
        raise SubmissionRefused(f"{where}: field 'files': more than {MAX_FILES} files")
    files: dict[str, tuple[str, int]] = {}
    mtimes: dict[str, int] = {}
    for i, entry in enumerate(doc["files"]):
        ok = isinstance(entry, dict) and isinstance(entry.get("name"), str) \
            and isinstance(entry.get("sha256"), str) and is_digest(entry["sha256"]) \
            and type(entry.get("bytes")) is int and entry["bytes"] >= 0
        if not ok or entry["name"] in files:
            raise SubmissionRefused(f"{where}: field 'files[{i}]': expected a new name, a "
                                    "sha256 and a size")
        files[_check_name(entry["name"], where)] = (entry["sha256"], entry["bytes"])
        mtime = entry.get("mtime_ns", 0)
        mtimes[entry["name"]] = mtime if type(mtime) is int and 0 <= mtime < 1 << 63 else 0
    listing = Listing(doc["kind"], files, mtimes)
    if listing.digest != digest:
        raise SubmissionRefused(f"{where}: its listing hashes to {listing.digest}, not to the "
                                f"digest it is stored under ({digest})")
    if sum(b for _, b in files.values()) > MAX_SUBMISSION_BYTES:
        raise SubmissionRefused(f"{where}: larger than {MAX_SUBMISSION_BYTES} bytes")
    return listing


def fetch(store: Store, digest: str, dest: str | os.PathLike[str]) -> tuple[Listing, Path]:
    """Copy submission ``digest`` into the new directory ``dest`` (checked file by file);
    returns the listing and the path to ingest (the directory, or the document in it)."""
    listing = read_manifest(store, digest)
    out = Path(dest)
    out.mkdir(parents=True)
    for name, (sha, size) in sorted(listing.files.items()):
        key = _key(digest, "files", name)
        hasher, written = hashlib.sha256(), 0
        try:  # streamed to disk piece by piece, never held whole
            with (out / name).open("xb") as handle:
                for piece in store.chunks(key, max_bytes=size):
                    hasher.update(piece)
                    written += len(piece)
                    handle.write(piece)
        except KeyError:
            raise SubmissionRefused(f"{store.url}/{key}: missing from a complete "
                                    "submission") from None
        except ObjectTooLarge:
            raise SubmissionRefused(f"{store.url}/{key}: larger than the {size} bytes the "
                                    "manifest lists") from None
        except LinkRefused as exc:
            raise SubmissionRefused(str(exc)) from None
        if written != size or hasher.hexdigest() != sha:
            raise SubmissionRefused(f"{store.url}/{key}: its bytes are not those the manifest "
                                    f"lists (sha256 {sha[:12]}, {size} bytes)")
        if listing.mtimes.get(name):
            os.utime(out / name, ns=(listing.mtimes[name], listing.mtimes[name]))
    if listing.kind == "document":
        if len(listing.files) != 1:
            raise SubmissionRefused(f"{store.url}/{_key(digest, MANIFEST)}: a document "
                                    "submission holds exactly one file")
        return listing, out / next(iter(listing.files))
    return listing, out
