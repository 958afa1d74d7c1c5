"""Where a command may write: a new path, an empty one, or one this product wrote before.

Nothing a user owns is replaced.  An output **directory** (``--out`` of score, bench,
answer, migrate; a synthetic corpus) is replaced only when it is empty or recognisably
written by this product, and then only when everything in it is a file this product writes
there (the caller says which: :func:`check_directory`).  Directories written by
:func:`harness.evaluation.results.write_directory` carry the marker :data:`MARKER`, which
lists their files (:func:`marker_files`).  An output **file** is replaced only when it is
empty or recognisably the same kind of output (:func:`check_file`; for a claim document,
:func:`is_document`).  A path that is also an input of the command, the working directory
(or one above it), a symbolic link or something of the other kind is refused as well.

A refusal is :class:`OutputRefused` (a ``ValueError``: exit 2), naming what is there;
nothing is touched.  Files are written beside their destination and renamed into place
(:func:`harness.core.atomic.write_files`); the temporary files are removed on every failure
path, Ctrl-C included.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, Union

from harness.core.atomic import write_files

#: what a command names as a path
PathLike = Union[str, "os.PathLike[str]"]
#: ``(flag, path)`` pairs: the inputs a command reads (a path may be None: not given)
Inputs = Iterable[tuple[str, Union[PathLike, None]]]

#: the marker file every results directory carries: the files its writer put there
MARKER = ".harness-output.json"
MARKER_KIND = "results-directory"
#: a file larger than this is never read to recognise it (no claim document is this big)
RECOGNISE_MAX_BYTES = 64 << 20
#: entries named in a refusal before "and N more"
LISTED = 8


class OutputRefused(ValueError):
    """An output path that would replace something this product did not write."""


class OutputFailed(ValueError):
    """An output that could not be written (a full disk, a file size limit, no permission);
    nothing of it was kept.  Exit 2, like a refused path: the location cannot take it."""


def absolute(path: PathLike) -> Path:
    """``path`` made absolute without resolving symbolic links (``.`` and ``..`` folded)."""
    return Path(os.path.abspath(os.fspath(path)))


def marker_text(files: Iterable[str]) -> str:
    """The marker's content: its kind and the sorted names of the files written."""
    return json.dumps({"kind": MARKER_KIND, "files": sorted(set(files))}, sort_keys=True,
                      indent=2) + "\n"


def marker_files(directory: PathLike) -> set[str] | None:
    """The files a directory's marker lists, or None when it carries no valid marker."""
    path = Path(directory) / MARKER
    doc = _json_object(path)
    if doc is None or doc.get("kind") != MARKER_KIND or not isinstance(doc.get("files"), list) \
            or not all(isinstance(n, str) for n in doc["files"]):
        return None
    return set(doc["files"])


def _json_object(path: Path) -> dict[str, Any] | None:
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > RECOGNISE_MAX_BYTES:
            return None
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def is_document(*kinds: str) -> Callable[[Path], bool]:
    """A recogniser: the file is a JSON object whose ``kind`` is one of ``kinds``."""
    def recognise(path: Path) -> bool:
        doc = _json_object(path)
        return doc is not None and doc.get("kind") in kinds
    return recognise


def first_line_has(*needles: bytes) -> Callable[[Path], bool]:
    """A recogniser for a JSONL file: its first line is a JSON object holding every one of
    ``needles`` (e.g. ``b'"kind":"pool"'``)."""
    def recognise(path: Path) -> bool:
        try:
            with path.open("rb") as handle:
                first = handle.readline(1 << 16)
        except OSError:
            return False
        return first.startswith(b"{") and all(n in first for n in needles)
    return recognise


def _entry(path: Path) -> str:
    return path.name + ("/" if path.is_dir() and not path.is_symlink() else "")


def listing(paths: Sequence[Path]) -> str:
    """``a, b/, c ... and N more`` (directories with a slash)."""
    names = sorted(_entry(p) for p in paths)
    shown = ", ".join(names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")


def _check_place(out: Path, flag: str) -> None:
    """Refuse the working directory (or one above it) and a path below a file."""
    cwd = absolute(os.getcwd())
    if out == cwd or out in cwd.parents:
        raise OutputRefused(f"{flag} {out}: is the current directory"
                            f"{'' if out == cwd else ' or holds it'}; name a new directory "
                            "below it instead")
    for parent in out.parents:
        if parent.exists() or parent.is_symlink():
            if not parent.is_dir():
                raise OutputRefused(f"{flag} {out}: {parent} is not a directory")
            break


def _check_inputs(out: Path, inputs: Inputs, flag: str) -> None:
    """Refuse ``out`` when it is (or, for a directory, holds) one of the inputs."""
    real = Path(os.path.realpath(out))
    for label, path in inputs:
        if path is None:
            continue
        other = Path(os.path.realpath(os.fspath(path)))
        same = other == real
        if not same and out.exists() and other.exists():
            try:
                same = os.path.samefile(out, other)
            except OSError:
                same = False
        if same or real in other.parents:
            raise OutputRefused(f"{flag} {out}: is also an input of this command ({label} "
                                f"{path}); writing there would destroy it")


def refuse_inputs(path: PathLike, inputs: Inputs, flag: str = "--out") -> Path:
    """The absolute path of ``path`` after refusing it (:class:`OutputRefused`) when it is,
    or holds, one of ``inputs`` (same real path or same file): for writers whose ``--force``
    may replace an existing file, but never one the command reads."""
    out = absolute(path)
    _check_inputs(out, inputs, flag)
    return out


def check_directory(out: PathLike, *, allowed: Callable[[Path], set[str] | None],
                    flag: str = "--out", inputs: Inputs = ()) -> Path:
    """The absolute path of ``out`` if a directory may be (re)written there.

    ``allowed(path)`` gives the names this product may replace inside an existing directory
    (``NAME/`` for a subdirectory, whose contents the callback vouches for), or None when the
    directory is not recognisably this product's.  Refused: a symbolic
    link, a file, the working directory or one above it, a directory that holds an input,
    an unrecognised non-empty directory, and a recognised one that also holds anything else.
    """
    out = absolute(out)
    _check_place(out, flag)
    _check_inputs(out, inputs, flag)
    if out.is_symlink():
        raise OutputRefused(f"{flag} {out}: is a symbolic link (to {os.readlink(out)}); name "
                            "the directory itself")
    if not out.exists():
        return out
    if not out.is_dir():
        raise OutputRefused(f"{flag} {out}: is a file ({out.stat().st_size} bytes), not a "
                            "directory this product wrote; nothing was written: remove it or "
                            "choose another path")
    entries = sorted(out.iterdir())
    if not entries:
        return out
    names = allowed(out)
    if names is None:
        raise OutputRefused(f"{flag} {out}: holds {len(entries)} entr"
                            f"{'y' if len(entries) == 1 else 'ies'} this product did not write "
                            f"({listing(entries)}); refusing to replace it: choose a new or "
                            "empty directory")
    def ours(p: Path) -> bool:
        if p.is_symlink():
            return False
        return p.name in names and p.is_file() or f"{p.name}/" in names and p.is_dir()

    foreign = [p for p in entries if not ours(p)]
    if foreign:
        raise OutputRefused(f"{flag} {out}: is a directory this product wrote, but it also "
                            f"holds {listing(foreign)}, which this product did not write there; "
                            "move them away or choose another directory")
    return out


def check_file(path: PathLike, *, recognise: Callable[[Path], bool], what: str,
               flag: str = "--out", inputs: Inputs = ()) -> Path:
    """The absolute path of ``path`` if an output file may be (re)written there: it does not
    exist, is empty, or ``recognise`` says it is a ``what`` this product wrote."""
    out = absolute(path)
    _check_place(out, flag)
    _check_inputs(out, inputs, flag)
    if out.is_symlink():
        raise OutputRefused(f"{flag} {out}: is a symbolic link (to {os.readlink(out)}); name "
                            "the file itself")
    if not out.exists():
        return out
    if out.is_dir():
        entries = list(out.iterdir())
        held = f"holds {listing(entries)}" if entries else "is empty"
        raise OutputRefused(f"{flag} {out}: is a directory ({held}), not a file; name the "
                            "file to write")
    if not out.is_file():
        raise OutputRefused(f"{flag} {out}: is not a regular file")
    if out.stat().st_size and not recognise(out):
        article = "an" if what[:1].lower() in "aeiou" else "a"
        raise OutputRefused(f"{flag} {out}: exists and is not {article} {what} written by this "
                            f"product ({out.stat().st_size} bytes); refusing to replace it: "
                            "remove it or choose another path")
    return out


def write_file(path: PathLike, data: str | bytes, *, recognise: Callable[[Path], bool], what: str,
               flag: str = "--out", inputs: Inputs = ()) -> Path:
    """:func:`check_file`, then write ``data`` there atomically; returns the path written."""
    out = check_file(path, recognise=recognise, what=what, flag=flag, inputs=inputs)
    write_files([(out, data)])
    return Path(path)


def check_appendable(path: PathLike, *, flag: str = "--summary") -> Path:
    """The absolute path of a file text is appended to (a step summary): it may exist (it
    is added to, never replaced) but must not be a directory or below a file."""
    out = absolute(path)
    _check_place(out, flag)
    if out.is_dir():
        raise OutputRefused(f"{flag} {out}: is a directory; name the file to append to")
    if out.exists() and not out.is_file():
        raise OutputRefused(f"{flag} {out}: is not a regular file")
    return out


def append_text(path: PathLike, text: str, *, flag: str = "--summary") -> Path:
    """Append ``text`` to the file at ``path`` (created if missing), after
    :func:`check_appendable`."""
    out = check_appendable(path, flag=flag)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("a", encoding="utf-8") as handle:
        handle.write(text)
    return out
