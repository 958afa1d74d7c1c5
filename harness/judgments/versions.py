"""A qrels version: an immutable, content-digested snapshot of a team's labels.

The file ``qrels-<12 hex>.json`` holds who labelled what and when (every rater's latest
label), the scale, the pool it came from (depth, runs and the pool file's sha256), the
agreement among raters, and the relevance each pair gets: one rater's label, or for a pair
two or more people labelled the median of their labels (for an even count the lower of the
two middle labels, so a disagreement never makes a document look more relevant than half
its raters said).  ``digest`` is the sha256 of the canonical JSON of everything else; the
file name is its first 12 hex digits, so a version cannot change without changing its name.

``harness score --qrels qrels-....json`` reads the judgements from a version (checking its
digest) and records the version as its corpus's ``version``: two runs scored on different
versions are flagged as not comparable by the same notes that flag a different corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.core.canonical import canonical_json, sha256_text
from harness.core.formats import FormatError, read_json_object
from harness.core.outputs import check_file
from harness.core.atomic import write_files
from harness.judgments.agreement import agreement
from harness.claims.labels import GRADES, SCALE, Label, latest, parse_label
from harness.judgments.pool import Pool

KIND = "qrels-version"
SCHEMA = 1
PREFIX = "qrels-"
DIGITS = 12


def consensus(grades: Sequence[int]) -> int:
    """The relevance a pair gets from its raters' labels: the (lower) median."""
    ordered = sorted(grades)
    return ordered[(len(ordered) - 1) // 2]


@dataclass(frozen=True)
class QrelsVersion:
    """A qrels version as read or built: its content and digest."""

    content: dict[str, Any]  #: everything but the digest
    digest: str

    @property
    def name(self) -> str:
        return f"{PREFIX}{self.digest[:DIGITS]}"

    @property
    def judgements(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for row in self.content["judgements"]:
            out.setdefault(row["query_id"], {})[row["doc_id"]] = row["relevance"]
        return out

    def labels(self) -> list[Label]:
        """The raters' labels the version records."""
        return [parse_label(r, "qrels version", None) for r in self.content["labels"]]

    def document(self) -> dict[str, Any]:
        return {**self.content, "digest": self.digest}

    def text(self) -> str:
        return canonical_json(self.document())

    def trec(self) -> str:
        """The judgements as TREC qrels (``query 0 doc relevance``), sorted."""
        return "".join(f"{r['query_id']} 0 {r['doc_id']} {r['relevance']}\n"
                       for r in self.content["judgements"])


def judgement_rows(kept: Sequence[Label]) -> list[dict[str, Any]]:
    """Each labelled pair's relevance (the consensus of its raters' latest labels), sorted."""
    by_pair: dict[tuple[str, str], list[int]] = {}
    for item in kept:
        by_pair.setdefault((item.query_id, item.doc_id), []).append(item.label)
    return [{"query_id": q, "doc_id": d, "relevance": consensus(g)}
            for (q, d), g in sorted(by_pair.items())]


def _digest(content: Mapping[str, Any]) -> str:
    return sha256_text(canonical_json(content))


def build_version(labels: Sequence[Label], *, pool: Pool | None = None,
                  pool_sha256: str | None = None, corpus: str | None = None,
                  tier: str = "B", parent: str | None = None) -> QrelsVersion:
    """The version of ``labels`` (each rater's latest label per pair counts).

    ``tier`` is the corpus's: judgements inherit it (a version of tier-B documents'
    labels is internal-only).  ``parent`` names the version these labels extend, if any."""
    kept = latest(labels)
    if not kept:
        raise ValueError("no labels to version: label some pairs first")
    if tier not in ("A", "B", "C"):
        raise ValueError(f"tier must be A, B or C, got {tier!r}")
    content = {
        "kind": KIND, "schema": SCHEMA, "corpus": corpus, "tier": tier, "parent": parent,
        "scale": {"name": SCALE, "grades": {str(k): v for k, v in GRADES.items()},
                  "consensus": "lower median of the raters' latest labels"},
        "pool": None if pool is None else {
            "depth": pool.depth, "sha256": pool_sha256,
            "runs": [{"name": n, "sha256": s} for n, s in pool.runs],
            "sample": pool.sample},
        "raters": sorted({item.rater for item in kept}),
        "labelled_at": {"first": min(i.at for i in kept), "last": max(i.at for i in kept)},
        "agreement": agreement(kept).to_dict(),
        "labels": [item.to_dict() for item in kept],
        "judgements": judgement_rows(kept),
    }
    return QrelsVersion(content, _digest(content))


def read_version(path: str | Path) -> QrelsVersion:
    """A version file, its digest recomputed: an edited version is refused, not trusted."""
    doc = dict(read_json_object(path))
    if doc.get("kind") != KIND:
        raise FormatError(path, None, "kind", f"expected {KIND!r} (a file `harness qrels "
                          f"version` writes), got {doc.get('kind')!r}")
    if doc.get("schema") != SCHEMA:
        raise FormatError(path, None, "schema", f"expected {SCHEMA}, got {doc.get('schema')!r}")
    digest = doc.pop("digest", None)
    if not isinstance(digest, str) or _digest(doc) != digest:
        raise FormatError(path, None, "digest", "does not match the file's content: the version "
                          "was edited after it was written (make a new version instead)")
    if doc.get("tier") not in ("A", "B", "C"):
        raise FormatError(path, None, "tier", f"expected A, B or C, got {doc.get('tier')!r}")
    rows = doc.get("labels")
    if not isinstance(rows, list) or not rows:
        raise FormatError(path, None, "labels", "expected a non-empty list of labels")
    labels = [parse_label(row, path, None, f"labels[{i}].") for i, row in enumerate(rows)]
    if latest(labels) != labels:
        raise FormatError(path, None, "labels", "expected each rater's latest label per pair "
                          "once, sorted (as `harness qrels version` writes them)")
    if doc.get("judgements") != judgement_rows(labels):
        raise FormatError(path, None, "judgements", "do not follow from the labels (each "
                          "pair's lower median): the version was not written by this product")
    return QrelsVersion(doc, digest)


def write_version(version: QrelsVersion, directory: str | Path) -> Path:
    """Write ``version`` as ``directory/qrels-<12 hex>.json``.  A version is immutable: the
    same name already there with other bytes is refused (it cannot happen unless edited)."""
    out = Path(directory) / f"{version.name}.json"
    text = version.text()
    if out.exists() and out.is_file():
        if out.read_text(encoding="utf-8") == text:
            return out
        raise ValueError(f"{out}: a different file already holds this version's name; it was "
                         "edited after it was written: move it away")
    check_file(out, recognise=lambda p: False, what="qrels version", flag="--out")
    out.parent.mkdir(parents=True, exist_ok=True)
    write_files([(out, text)])
    return out
