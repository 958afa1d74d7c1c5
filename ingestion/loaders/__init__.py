"""Loaders: one per corpus format, all producing :class:`ingestion.corpus.Corpus`.

``load_corpus("kind:PATH")`` picks the loader from :data:`LOADERS` (a dict; the error for an
unknown kind lists ``sorted(LOADERS)``).  Loader modules are imported only when used.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ingestion.corpus import Corpus

#: spec kind -> "module:function"; each function takes (path, name=None) -> Corpus
LOADERS: dict[str, str] = {
    "qmsum": "ingestion.loaders.qmsum:load_qmsum",
    "beir": "ingestion.loaders.beir:load_beir",
    "trec": "ingestion.loaders.trec:load_trec",
    "synthetic": "ingestion.loaders.synthetic:load_synthetic",
}


def parse_spec(spec: str) -> tuple[str, Path]:
    """``"kind:PATH"`` -> ``(kind, Path)``; refuses an unknown kind or an empty path."""
    kind, sep, path = str(spec).partition(":")
    if not sep or kind not in LOADERS:
        raise ValueError(f"corpus spec {spec!r}: expected KIND:PATH with KIND one of "
                         f"{sorted(LOADERS)}")
    if not path:
        raise ValueError(f"corpus spec {spec!r}: empty path")
    return kind, Path(path)


def load_corpus(spec: str, *, name: str | None = None) -> Corpus:
    """Load ``qmsum:PATH``, ``beir:PATH``, ``trec:PATH`` or ``synthetic:PATH``."""
    kind, path = parse_spec(spec)
    module_name, _, func = LOADERS[kind].partition(":")
    loader = getattr(importlib.import_module(module_name), func)
    return loader(path, name=name)
