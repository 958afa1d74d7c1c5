"""Request templates of ``--backend http`` and its header values (no client library).

``{query}`` and ``{query_id}`` are URL-encoded in the URL template and JSON-escaped in the
body template (so they go inside quotes there); ``{k}`` is a bare number in both.  A header
value ``env:VAR`` is read from the environment only when the backend is built.
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse

from harness.retrieval.backends.base import SearchQuery

_ENV = re.compile(r"^env:([A-Za-z_][A-Za-z0-9_]*)$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
PLACEHOLDERS = ("query", "query_id", "k")
_PLACEHOLDER = re.compile(r"\{(query_id|query|k)\}")
_ANY_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
METHODS = ("GET", "POST")


def check_template(template: str, flag: str, *, body: bool = False) -> None:
    if not body:
        unknown = sorted({m for m in _ANY_NAME.findall(template) if m not in PLACEHOLDERS})
        if unknown:
            raise ValueError(f"{flag}: unknown placeholder(s) {', '.join('{%s}' % u for u in unknown)}; "
                             f"expected {', '.join('{%s}' % p for p in PLACEHOLDERS)}")


def redact_url(template: str) -> str:
    """The URL template with any password in it replaced (the host is kept)."""
    parts = urllib.parse.urlsplit(template)
    if parts.password is None:
        return template
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def render_url(template: str, query: SearchQuery, k: int) -> str:
    values = {"query": urllib.parse.quote(query.text, safe=""),
              "query_id": urllib.parse.quote(query.query_id, safe=""), "k": str(k)}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)


def render_body(template: str, query: SearchQuery, k: int) -> bytes:
    values = {"query": json.dumps(query.text)[1:-1], "query_id": json.dumps(query.query_id)[1:-1],
              "k": str(k)}
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template).encode("utf-8")


def check_body_template(template: str, flag: str = "--body-template") -> None:
    """The template renders to valid JSON for a query with quotes, braces and newlines."""
    probe = SearchQuery("q\"1", "a \"quoted\" {brace}\nline")
    try:
        json.loads(render_body(template, probe, 10))
    except ValueError as exc:
        raise ValueError(f"{flag}: does not render to JSON ({exc}); put {{query}} inside "
                         "quotes and {k} as a bare number") from None




def parse_header(text: str) -> tuple[str, str]:
    """``'Name: value'`` -> ``(name, value)``; an ``env:VAR`` value must be set (it is kept
    as written, not read)."""
    name, colon, value = text.partition(":")
    name, value = name.strip(), value.strip()
    if not colon or not _HEADER_NAME.match(name):
        raise ValueError(f"--header {name or text!r}: expected 'Name: value'")
    env = _ENV.match(value)
    if env and env.group(1) not in os.environ:
        raise ValueError(f"--header {name}: environment variable {env.group(1)} is not set")
    return name, value


def resolve_header(value: str) -> str:
    """A header value, with ``env:VAR`` read from the environment now."""
    env = _ENV.match(value)
    return os.environ[env.group(1)] if env else value
