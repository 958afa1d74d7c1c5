"""Retrieval backends: where documents are indexed and legs are searched.

``BACKENDS`` maps a name to ``"module:Class"``; the module is imported only when that
backend is built, so naming one never loads another's client library.
"""

from __future__ import annotations

import importlib

from harness.backends.base import LEGS, Backend, EmbeddingSurvey, IndexDoc, SearchQuery

BACKENDS: dict[str, str] = {
    "embedded": "harness.backends.embedded:EmbeddedBackend",
}

DEFAULT_BACKEND = "embedded"


def backend_class(name: str):
    """The backend class registered under ``name``."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; expected one of {sorted(BACKENDS)}")
    module, _, attr = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


__all__ = ["BACKENDS", "DEFAULT_BACKEND", "LEGS", "Backend", "EmbeddingSurvey", "IndexDoc",
           "SearchQuery", "backend_class"]
