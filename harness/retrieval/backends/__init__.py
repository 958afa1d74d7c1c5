"""Retrieval backends: where documents are indexed and legs are searched.

``BACKENDS`` maps a name to ``"module:Class"``; the module is imported only when that
backend is built, so naming one never loads another's client library.

A backend with options of its own (a node URL, a URL template) names in
:data:`BACKEND_OPTIONS` a light module (no client library at import) defining
``add_arguments(group)`` for ``harness bench`` and ``options(args) -> dict``: the keyword
arguments its class is built with besides the shared ones (``k1``, ``b``, ``encoder``,
``progress``).  :func:`backend_options` refuses one backend's flags given to another.
"""

from __future__ import annotations

import importlib

from harness.retrieval.backends.base import (
    EXIT_BACKEND,
    LEGS,
    Backend,
    BackendError,
    EmbeddingSurvey,
    IndexDoc,
    SearchQuery,
)

BACKENDS: dict[str, str] = {
    "embedded": "harness.retrieval.backends.embedded:EmbeddedBackend",
    "opensearch": "harness.retrieval.backends.opensearch.backend:OpenSearchBackend",
    "http": "harness.retrieval.backends.http:HttpBackend",
    "command": "harness.retrieval.backends.command:CommandBackend",
}

DEFAULT_BACKEND = "embedded"

#: backend name -> module with ``add_arguments(group)`` and ``options(args)``
BACKEND_OPTIONS: dict[str, str] = {
    "opensearch": "harness.retrieval.backends.opensearch.options",
    "http": "harness.retrieval.backends.http_options",
    "command": "harness.retrieval.backends.command_options",
}

#: backends that query a system under test (its own index; one list per query)
SYSTEM_BACKENDS = ("http", "command")


def backend_class(name: str):
    """The backend class registered under ``name``."""
    if name not in BACKENDS:
        raise ValueError(f"unknown backend {name!r}; expected one of {sorted(BACKENDS)}")
    module, _, attr = BACKENDS[name].partition(":")
    return getattr(importlib.import_module(module), attr)


def option_modules() -> dict[str, object]:
    """The options module of every backend that has one, by backend name."""
    return {name: importlib.import_module(path) for name, path in sorted(BACKEND_OPTIONS.items())}


def backend_options(name: str, args) -> tuple[tuple[str, object], ...]:
    """The chosen backend's options from parsed arguments, sorted (a frozen config holds
    them); every other backend's ``options(args)`` must come back empty (a flag of one
    backend given to another is refused by that backend's module, naming the flag)."""
    found: dict[str, object] = {}
    for other, module in option_modules().items():
        values = module.options(args, chosen=(other == name))
        if other == name:
            found = dict(values)
    return tuple(sorted(found.items()))


__all__ = ["BACKENDS", "BACKEND_OPTIONS", "DEFAULT_BACKEND", "backend_options", "option_modules",
           "LEGS", "Backend", "EmbeddingSurvey", "IndexDoc",
           "SearchQuery", "backend_class", "BackendError", "EXIT_BACKEND", "SYSTEM_BACKENDS"]
