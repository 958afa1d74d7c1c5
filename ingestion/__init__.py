"""Corpora with traced licences: registry, fetch/verify, loaders, chunking, judgements,
the synthetic meeting corpus.

Entry points other parts call: :func:`load_corpus`, :func:`ingestion.chunking.chunk_corpus`,
:func:`ingestion.judgements.judge`, :func:`ingestion.judgements.file_qrels`,
:func:`ingestion.synthetic.generate`, :data:`harness.core.sources.SOURCES`.
"""

from __future__ import annotations


def load_corpus(spec: str, *, name: str | None = None):
    """Load a corpus from ``KIND:PATH`` (qmsum, beir, trec or synthetic); see
    :mod:`ingestion.loaders`."""
    from ingestion.loaders import load_corpus as _load

    return _load(spec, name=name)


__all__ = ["load_corpus"]
