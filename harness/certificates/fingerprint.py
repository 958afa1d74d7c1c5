"""The fingerprint of what a certificate was calibrated on, and how a current one differs.

A certificate is a property of one procedure on one distribution.  Its fingerprint names
the procedure's inputs that a metrics.json records: every corpus (name, version, sha256),
the embedding models of the index, the retrieval arm block (backend, mode, stage, scope,
size, fusion ...), the reranker, and the stage whose scores select the context.  Any
difference expires the certificate.
"""

from __future__ import annotations

import json
from typing import Iterable, Mapping, NamedTuple

from harness.core.canonical import canonical_line

FINGERPRINT_FIELDS: tuple[str, ...] = ("corpora", "embedding_models", "arm", "reranker", "stage")

#: the kinds of change :func:`diff_fingerprints` reports, in the order it reports them
CHANGE_KINDS: tuple[str, ...] = (
    "corpus_removed", "corpus_added", "corpus_version", "corpus_checksum",
    "embedding_model", "arm", "reranker", "stage",
)


class Change(NamedTuple):
    """One difference between a certified and a current fingerprint."""

    kind: str      # one of CHANGE_KINDS
    field: str     # e.g. "corpora[qmsum].version", "arm.size"
    was: object
    now: object

    def describe(self) -> str:
        return f"{self.field}: {_show(self.was)} -> {_show(self.now)}"


def _show(value) -> str:
    return "absent" if value is None else canonical_line(value)


def _plain(value):
    """``value`` as canonical JSON reads it back (floats rounded as they are stored)."""
    return None if value is None else json.loads(canonical_line(value))


def fingerprint_from_metrics(metrics: Mapping, stage: str | None = None) -> dict:
    """The fingerprint of a run from its metrics.json (``stage`` from its calibration rows)."""
    corpora = sorted(
        ({"name": c["name"], "version": c.get("version"), "sha256": c.get("sha256")}
         for c in metrics.get("corpora") or []),
        key=lambda c: c["name"],
    )
    index = metrics.get("index")
    models = index.get("embedding_models") if isinstance(index, Mapping) else None
    retrieval = dict(metrics.get("retrieval") or {})
    reranker = retrieval.pop("reranker", None)
    if stage is None:
        stage = retrieval.get("stage")
    return _plain({"corpora": corpora, "embedding_models": models, "arm": retrieval,
                   "reranker": reranker, "stage": stage})


def merge_fingerprints(prints: Iterable[Mapping]) -> dict:
    """One fingerprint for several runs of the same procedure over different corpora.

    Refuses runs whose embedding models, arm, reranker or stage differ, and a corpus that
    appears twice with a different version or checksum.
    """
    prints = list(prints)
    if not prints:
        raise ValueError("no fingerprints to merge")
    first = prints[0]
    corpora: dict[str, dict] = {}
    for i, fp in enumerate(prints):
        for name in FINGERPRINT_FIELDS[1:]:
            if fp.get(name) != first.get(name):
                raise ValueError(
                    f"run {i + 1} differs from run 1 in '{name}' ({_show(fp.get(name))} vs "
                    f"{_show(first.get(name))}): a certificate is calibrated on one procedure")
        for corpus in fp["corpora"]:
            seen = corpora.get(corpus["name"])
            if seen is not None and seen != corpus:
                raise ValueError(f"corpus {corpus['name']!r} appears in two runs with different "
                                 f"versions or checksums ({_show(seen)} vs {_show(corpus)})")
            corpora[corpus["name"]] = corpus
    merged = dict(first)
    merged["corpora"] = [corpora[name] for name in sorted(corpora)]
    return merged


def diff_fingerprints(certified: Mapping, current: Mapping) -> list[Change]:
    """Every difference between the certified fingerprint and the current one, ordered."""
    changes: list[Change] = []
    was = {c["name"]: c for c in certified.get("corpora") or []}
    now = {c["name"]: c for c in current.get("corpora") or []}
    for name in sorted(set(was) - set(now)):
        changes.append(Change("corpus_removed", f"corpora[{name}]", was[name], None))
    for name in sorted(set(now) - set(was)):
        changes.append(Change("corpus_added", f"corpora[{name}]", None, now[name]))
    for name in sorted(set(was) & set(now)):
        if was[name].get("version") != now[name].get("version"):
            changes.append(Change("corpus_version", f"corpora[{name}].version",
                                  was[name].get("version"), now[name].get("version")))
        if was[name].get("sha256") != now[name].get("sha256"):
            changes.append(Change("corpus_checksum", f"corpora[{name}].sha256",
                                  was[name].get("sha256"), now[name].get("sha256")))
    if certified.get("embedding_models") != current.get("embedding_models"):
        changes.append(Change("embedding_model", "embedding_models",
                              certified.get("embedding_models"), current.get("embedding_models")))
    arm_was, arm_now = certified.get("arm") or {}, current.get("arm") or {}
    for key in sorted(set(arm_was) | set(arm_now)):
        if arm_was.get(key) != arm_now.get(key):
            changes.append(Change("arm", f"arm.{key}", arm_was.get(key), arm_now.get(key)))
    if certified.get("reranker") != current.get("reranker"):
        changes.append(Change("reranker", "reranker", certified.get("reranker"), current.get("reranker")))
    if certified.get("stage") != current.get("stage"):
        changes.append(Change("stage", "stage", certified.get("stage"), current.get("stage")))
    return changes
