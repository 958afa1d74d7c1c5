"""The results directory: the claim (metrics.json, metrics.md, per-query files) and the run
record (runinfo.json), written atomically and read back with validation.

Layout of one results directory::

    metrics.json        the whole claim, canonical JSON (byte-identical on unchanged inputs)
    metrics.md          the same table for a reader
    per_query.jsonl     one row per query x measure (every delta can get an interval)
    rankings.jsonl      the scored top-k per query (statistics and certificates read it)
    runinfo.json        durations, latency samples, host: outside the claim

Extra claim files (``calibration.jsonl``, ``answers.md`` ...) are passed in ``extra_files``.
The directory is built beside its destination and renamed into place
(:func:`harness.core.atomic.replace_directory`), so an interrupted run leaves the previous
result (or nothing), never half of a new one; what a killed writer leaves behind is tidied
by the next write.  An existing destination is replaced only when it is empty or a
directory this product wrote holding nothing else (:func:`replaceable_files`); every directory
written carries the marker ``.harness-output.json`` naming its files.
"""

from __future__ import annotations

import json
import logging
import os
import platform
from pathlib import Path
from typing import Any, Mapping

from harness.claims.metrics import (COMPARISONS_JSON, INTERVALS_JSON, METRICS_JSON, METRICS_MD,
                                    PER_QUERY, PINNED_FILES, RANKINGS, RUNINFO, MetricsClaim,
                                    check_per_query_row, validate_metrics)
from harness.core.atomic import replace_directory
from harness.core.canonical import Parts, canonical_parts, joined, sha256_text, text_slices
from harness.core.outputs import MARKER, OutputFailed, check_directory, marker_files, marker_text
from harness.core.signing import SIGNATURE_FILE, sign_texts

log = logging.getLogger(__name__)

def host_info() -> dict:
    """The machine a run was made on (runinfo.json, never the claim)."""
    return {
        "hostname": platform.node(),
        "platform": host_platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
    }


def host_platform() -> str:
    """``platform.platform()`` less the processor field, which costs a ``uname -p``
    process on Linux (a run's host record need not): system, release, machine and, on
    Linux, the C library (``Linux-6.1.0-x86_64-with-glibc2.36``)."""
    system, release, machine = platform.system(), platform.release(), platform.machine()
    parts = [system, release, machine]
    if system == "Linux":
        name, version = platform.libc_ver()
        parts += ["with", name + version] if name else []
    return "-".join(part.strip().replace(" ", "_") for part in parts if part.strip())


#: claim files other commands add to a results directory later (``harness intervals``) and
#: the demo's record of an arm's inputs: replaced with the directory, never foreign to it
DEMO_INPUTS = ".demo-inputs.json"
ADDED_LATER = (INTERVALS_JSON, COMPARISONS_JSON, DEMO_INPUTS)
#: what a results directory written before the marker existed may hold
UNMARKED_FILES = (METRICS_JSON, METRICS_MD, PER_QUERY, RANKINGS, RUNINFO, "calibration.jsonl")


def _written_by_this_product(runinfo: Path) -> bool:
    """A ``runinfo.json`` as :func:`write_directory` writes it (its host record)."""
    try:
        if runinfo.is_symlink() or not runinfo.is_file() or runinfo.stat().st_size > 64 << 20:
            return False
        doc = json.loads(runinfo.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    host = doc.get("host") if isinstance(doc, dict) else None
    return isinstance(host, dict) and {"hostname", "python"} <= set(host)


def replaceable_files(directory, new_names=()) -> set[str] | None:
    """The names :func:`write_directory` may replace in an existing ``directory``: those its
    marker lists (or, in a directory written before the marker, the results files and a
    ``runinfo.json`` holding the writer's host record), the files about to be written and
    :data:`ADDED_LATER`; None when the directory is not recognisably this product's."""
    directory = Path(directory)
    listed = marker_files(directory)
    if listed is None:
        if not _written_by_this_product(directory / RUNINFO):
            return None
        listed = set(UNMARKED_FILES)
    return listed | set(new_names) | set(ADDED_LATER) | {MARKER, RUNINFO}


def check_out_directory(out_dir, new_names=(), *, flag: str = "--out", inputs=()) -> Path:
    """Refuse (:class:`~harness.core.outputs.OutputRefused`, exit 2) an ``out_dir`` that
    :func:`write_directory` must not replace; the absolute path otherwise.  Commands call it
    before any work, so a refusal costs nothing."""
    return check_directory(out_dir, allowed=lambda d: replaceable_files(d, new_names),
                           flag=flag, inputs=inputs)


def write_directory(out_dir, files: Mapping[str, str | Parts],
                    runinfo: Mapping[str, Any] | None = None) -> Path:
    """Write ``files`` (plain name -> text) and ``runinfo.json`` as one directory, atomically.

    Everything is written into a staging directory beside ``out_dir``, which replaces
    ``out_dir`` by rename: an exception (or Ctrl-C) at any point leaves the previous
    directory as it was; leftovers of a killed writer are tidied by
    :func:`harness.core.atomic.recover_stale`.
    An existing ``out_dir`` is replaced only when :func:`check_out_directory` allows it.
    """
    texts: dict[str, str | Parts] = {}
    for name, text in files.items():
        if name in (RUNINFO, SIGNATURE_FILE) or Path(name).name != name or name.startswith("."):
            raise ValueError(f"results file name {name!r} is reserved or not a plain name")
        texts[name] = text
    info = dict(runinfo or {})
    info.setdefault("host", host_info())
    texts[RUNINFO] = json.dumps(info, indent=2, sort_keys=True, default=str) + "\n"
    texts.update(sign_texts(texts))  # signature.json, when $HARNESS_SIGNING_KEY names a key
    texts[MARKER] = marker_text(texts)

    out = Path(out_dir)
    check_out_directory(out, texts)

    def build(staging: Path) -> None:
        for name, text in texts.items():
            try:
                with (staging / name).open("w", encoding="utf-8", newline="") as handle:
                    for piece in text_slices(text):  # never one full-size encoded copy
                        handle.write(piece)
            except OSError as exc:
                raise OutputFailed(f"--out {out}: cannot write {name} ({exc.strerror or exc}); "
                                   f"nothing was written and {out} is as it was") from None

    return replace_directory(out, build, before_swap=lambda now: check_out_directory(now, texts))


def render_results(
    metrics: MetricsClaim | Mapping[str, Any],
    *,
    metrics_md: str,
    per_query: list[Mapping] | None = None,
    rankings: list[Mapping] | None = None,
    extra_files: Mapping[str, str] | None = None,
    source: str = METRICS_JSON,
) -> tuple[MetricsClaim, dict[str, str]]:
    """``(claim, files)``: every file of a results directory rendered (plain name -> text),
    the claim pinning the files it summarises (:data:`~harness.claims.metrics.PINNED_FILES`)
    and validated (``source`` names it in an error).  Nothing is written."""
    claim, files = _rendered(metrics, metrics_md, per_query, rankings, extra_files, source)
    return claim, {name: joined(text) for name, text in files.items()}


def _rendered(metrics, metrics_md, per_query, rankings, extra_files,
              source) -> tuple[MetricsClaim, dict[str, str | Parts]]:
    """:func:`render_results` with the large JSONL files kept as :class:`Parts`."""
    files: dict[str, str | Parts] = {METRICS_MD: metrics_md}
    if per_query is not None:
        files[PER_QUERY] = canonical_parts(per_query)
    if rankings is not None:
        files[RANKINGS] = canonical_parts(rankings)
    for name, text in (extra_files or {}).items():
        if name in files or name == METRICS_JSON:
            raise ValueError(f"extra results file name {name!r} is reserved or not a plain name")
        files[name] = text
    claim = metrics if isinstance(metrics, MetricsClaim) else MetricsClaim(**{
        k: v for k, v in metrics.items() if k not in ("files", "schema_version")})
    pins = {name: sha256_text(files[name]) for name in PINNED_FILES if name in files}
    claim = MetricsClaim.from_dict(claim.with_pins(pins).to_dict(), source)
    files[METRICS_JSON] = claim.canonical_json()
    return claim, files


def write_results(
    out_dir,
    metrics: MetricsClaim | Mapping[str, Any],
    *,
    metrics_md: str,
    per_query: list[Mapping] | None = None,
    rankings: list[Mapping] | None = None,
    runinfo: Mapping[str, Any] | None = None,
    extra_files: Mapping[str, str] | None = None,
) -> Path:
    """Write the whole results directory atomically (:func:`write_directory`); returns its
    path.  Every file is rendered first (:func:`render_results`): the claim pins the files
    it summarises and is validated before anything is written."""
    claim, files = _rendered(metrics, metrics_md, per_query, rankings, extra_files,
                             str(Path(out_dir) / METRICS_JSON))
    info = dict(runinfo or {})
    info["run_id"] = claim.identity()
    return write_directory(out_dir, files, info)


def load_claim(path) -> MetricsClaim:
    """Read and validate a metrics.json (a file or its results directory) as a claim."""
    from harness.core.formats import read_json_object

    path = Path(path)
    if path.is_dir():
        path = path / METRICS_JSON
    return MetricsClaim.from_dict(read_json_object(path), str(path))


def load_metrics(path) -> dict:
    """Read and validate a metrics.json (a file or its results directory)."""
    from harness.core.formats import read_json_object

    path = Path(path)
    if path.is_dir():
        path = path / METRICS_JSON
    doc = read_json_object(path)
    validate_metrics(doc, source=str(path))
    return doc


def load_per_query(results_dir) -> list[dict]:
    """Per-query rows of a results directory, validated line by line."""
    from harness.core.formats import read_jsonl

    path = Path(results_dir) / PER_QUERY
    return [dict(check_per_query_row(obj, path, line)) for line, obj in read_jsonl(path)]


def load_jsonl_rows(results_dir, name: str) -> list[dict]:
    from harness.core.formats import read_jsonl

    return [obj for _, obj in read_jsonl(Path(results_dir) / name)]
