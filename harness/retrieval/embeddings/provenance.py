"""Embedding provenance: which model embedded the vectors a number was measured on.

The label is surveyed from the indexed documents themselves, never from configuration:
a configured model can differ from the one that wrote the vectors, so the configured one
is recorded separately (``configured_embedding_model``) and drift between the two shows.

Verdicts over the per-document labels (``None`` = the document does not say):

=========================  ====================================================
``empty``                  no embedded document
``unattributed``           no document names its model
``uniform``                every document names the same model
``partially_unattributed`` one named model, some documents silent
``mixed``                  two or more named models: a ranking over such an index
                           compares similarities from different vector spaces,
                           and results are refused (exit 3)
``certified_equivalent``   two or more named models, each paired with the
                           configured one by a migration certificate that found
                           it ``equivalent_drop_in`` (the block names each
                           certificate: :mod:`harness.retrieval.embeddings.certified`)
=========================  ====================================================

A model's label names its device and precision off the CPU
(:func:`harness.retrieval.embeddings.encoders.embedding_digest`), so vectors from a GPU and
a CPU are two models here unless a certificate says otherwise.
"""

from __future__ import annotations

from typing import Iterable, Mapping

VERDICTS = ("empty", "unattributed", "uniform", "partially_unattributed", "mixed",
            "certified_equivalent")

#: exit code of a run refused because its vector space is proven mixed
EXIT_MIXED_EMBEDDINGS = 3


class MixedEmbeddingSpace(RuntimeError):
    """Two named embedding models in one index: similarities are not comparable."""


def embedding_verdict(counts: Mapping[str | None, int]) -> str:
    """The verdict over ``{model label or None: number of documents}``."""
    total = sum(counts.values())
    if total == 0:
        return "empty"
    named = sorted(m for m, n in counts.items() if m is not None and n > 0)
    silent = counts.get(None, 0)
    if len(named) >= 2:
        return "mixed"
    if not named:
        return "unattributed"
    return "partially_unattributed" if silent else "uniform"


def survey(labels: Iterable[str | None]) -> dict[str | None, int]:
    counts: dict[str | None, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    return counts


def index_block(counts: Mapping[str | None, int], dimension: int | None,
                configured: str | None) -> dict:
    """The ``index`` block's provenance fields for metrics.json."""
    return {
        "embedding_models": sorted(m for m, n in counts.items() if m is not None and n > 0),
        "embedding_verdict": embedding_verdict(counts),
        "embedding_unattributed": int(counts.get(None, 0)),
        "embedding_dimension": dimension,
        "configured_embedding_model": configured,
    }


def certify_mixed(block: dict, pairs: Mapping) -> dict:
    """A ``mixed`` block made ``certified_equivalent`` when every named model other than
    the configured one is paired with it in ``pairs`` (``{frozenset of two labels:
    certificate}``, :func:`harness.retrieval.embeddings.certified.equivalent_pairs`); the
    block then names each certificate.  Any other block is returned unchanged."""
    configured = block.get("configured_embedding_model")
    if block.get("embedding_verdict") != "mixed" or configured is None:
        return block
    others = [m for m in block["embedding_models"] if m != configured]
    certs = [pairs.get(frozenset((configured, m))) for m in others]
    if configured not in block["embedding_models"] or any(c is None for c in certs):
        return block
    return {**block, "embedding_verdict": "certified_equivalent",
            "embedding_certificates": [
                {"labels": sorted((configured, m)), "certificate_sha256": c.sha256,
                 "machine": c.machine, "decision": "equivalent_drop_in"}
                for m, c in zip(others, certs)]}


def refuse_mixed(block: Mapping) -> None:
    """Raise :class:`MixedEmbeddingSpace` when the index block's verdict is ``mixed``."""
    if block.get("embedding_verdict") == "mixed":
        raise MixedEmbeddingSpace(
            "refusing to write results: the index holds vectors from "
            f"{len(block['embedding_models'])} named embedding models "
            f"({', '.join(block['embedding_models'])}); similarities across models are not "
            "comparable, so no ranking over this index measures anything"
        )
