"""Request templates of ``--backend http`` and its header values (no client library).

``{query}`` and ``{query_id}`` are URL-encoded in the URL template and JSON-escaped in the
body template (so they go inside quotes there); ``{k}`` is a bare number in both.  A header
value ``env:VAR`` and a ``{env:VAR}`` placeholder in either template (an API key in the
query string) are read from the environment only when the backend is built.

What is recorded never holds a secret: :func:`redact_url` replaces a password and the value
of every query parameter named like a key (:data:`KEY_NAMES`), and :func:`redact` removes
every resolved secret from a message (a server may echo one back).
"""

from __future__ import annotations

import json
import os
import re
import urllib.parse

from harness.retrieval.backends.base import SearchQuery

_ENV = re.compile(r"^env:([A-Za-z_][A-Za-z0-9_]*)$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_ENV_PLACEHOLDER = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
PLACEHOLDERS = ("query", "query_id", "k")
#: query parameters whose value is a secret: redacted in everything recorded
KEY_NAMES = frozenset({"api_key", "apikey", "api-key", "key", "token", "access_token",
                       "auth", "auth_token", "secret", "client_secret", "password", "passwd",
                       "pwd", "sig", "signature", "x-api-key", "session", "credentials"})
REDACTED = "***"
_PLACEHOLDER = re.compile(r"\{(query_id|query|k)\}")
_ANY_NAME = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
METHODS = ("GET", "POST")


def check_template(template: str, flag: str, *, body: bool = False) -> None:
    for name in _ENV_PLACEHOLDER.findall(template):
        if name not in os.environ:
            raise ValueError(f"{flag}: environment variable {name} ({{env:{name}}}) is not set")
        check_value(os.environ[name], f"{flag}: environment variable {name}")
    if not body:
        unknown = sorted({m for m in _ANY_NAME.findall(_ENV_PLACEHOLDER.sub("", template))
                          if m not in PLACEHOLDERS})
        if unknown:
            raise ValueError(f"{flag}: unknown placeholder(s) {', '.join('{%s}' % u for u in unknown)}; "
                             f"expected {', '.join('{%s}' % p for p in PLACEHOLDERS)}")


def _key_params(query: str):
    """``(start, end, name)`` of each key-named parameter's value in a query string."""
    pos = 0
    for part in query.split("&"):
        name, eq, _ = part.partition("=")
        if eq and urllib.parse.unquote_plus(name).strip().lower() in KEY_NAMES:
            yield pos + len(name) + 1, pos + len(part)
        pos += len(part) + 1


def redact_url(template: str) -> str:
    """The URL template with any password and the value of every key-named query parameter
    replaced by ``***`` (the host is kept; an ``{env:VAR}`` placeholder is left as written)."""
    parts = urllib.parse.urlsplit(template)
    if parts.password is not None:
        netloc = (f"{parts.username}:{REDACTED}@{parts.hostname}"
                  + (f":{parts.port}" if parts.port else ""))
        parts = parts._replace(netloc=netloc)
    query = parts.query
    for start, end in reversed(list(_key_params(query))):
        value = query[start:end]
        if not _ENV_PLACEHOLDER.fullmatch(value):
            query = query[:start] + REDACTED + query[end:]
    return urllib.parse.urlunsplit(parts._replace(query=query))


def literal_secrets(template: str) -> list[str]:
    """The password and the key-named parameter values written into a URL template as they
    are (so a message echoing one back can be redacted)."""
    parts = urllib.parse.urlsplit(template)
    found = [parts.password] if parts.password else []
    for start, end in _key_params(parts.query):
        value = parts.query[start:end]
        if value and not _ENV_PLACEHOLDER.fullmatch(value):
            found += [value, urllib.parse.unquote_plus(value)]
    return found


def resolve_env(*templates: str | None) -> dict[str, str]:
    """The values of the ``{env:VAR}`` placeholders of the templates, read now."""
    names = {n for t in templates if t for n in _ENV_PLACEHOLDER.findall(t)}
    return {name: check_value(os.environ[name], f"environment variable {name}")
            for name in sorted(names)}


def _fill_env(template: str, env: dict[str, str], encode) -> str:
    return _ENV_PLACEHOLDER.sub(lambda m: encode(env[m.group(1)]), template)


def render_url(template: str, query: SearchQuery, k: int, env: dict[str, str] | None = None) -> str:
    values = {"query": _quote(query.text), "query_id": _quote(query.query_id), "k": str(k)}
    url = _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
    return _fill_env(url, env, _quote) if env else url


def render_body(template: str, query: SearchQuery, k: int,
                env: dict[str, str] | None = None) -> bytes:
    values = {"query": _json_inner(query.text), "query_id": _json_inner(query.query_id),
              "k": str(k)}
    body = _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
    return (_fill_env(body, env, _json_inner) if env else body).encode("utf-8")


def _quote(text: str) -> str:
    return urllib.parse.quote(text, safe="")


def _json_inner(text: str) -> str:
    return json.dumps(text)[1:-1]


def redact(text: str, secrets) -> str:
    """``text`` with every secret (longest first) replaced by ``***``."""
    for secret in sorted((s for s in secrets if s), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def check_value(value: str, where: str) -> str:
    """A header or parameter value: printable ASCII (a line break would split the request,
    and some clients print the whole value when refusing it).  The message never shows it."""
    for i, char in enumerate(value):
        if not (" " <= char <= "~" or char == "\t"):
            what = ("a line break (CR/LF)" if char in "\r\n" else
                    f"the character U+{ord(char):04X}")
            raise ValueError(f"{where}: the value holds {what} at character {i + 1}; a "
                             "header or parameter value must be printable ASCII")
    return value


_JSON_STRING_FIELD = re.compile(r'("((?:[^"\\]|\\.)*)"\s*:\s*)"((?:[^"\\]|\\.)*)"')


def redact_body(template: str | None) -> str | None:
    """The body template as recorded: the string value of every JSON field named like a key
    (:data:`KEY_NAMES`) replaced by ``***`` (a ``{env:VAR}`` placeholder is kept: it names
    the variable, not the secret)."""
    if template is None:
        return None

    def hide(match: re.Match[str]) -> str:
        name, value = match.group(2), match.group(3)
        if name.strip().lower() not in KEY_NAMES or _ENV_PLACEHOLDER.fullmatch(value):
            return match.group(0)
        return f'{match.group(1)}"{REDACTED}"'

    return _JSON_STRING_FIELD.sub(hide, template)


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
    resolve_header(value, f"--header {name}")
    return name, value


def is_secret(value: str) -> bool:
    """True when a header value is read from the environment (``env:VAR``)."""
    return bool(_ENV.match(value))


def resolve_header(value: str, where: str = "--header") -> str:
    """A header value, with ``env:VAR`` read from the environment now; ValueError (naming
    the variable, never the value) when it is not printable ASCII."""
    env = _ENV.match(value)
    if env:
        return check_value(os.environ[env.group(1)],
                           f"{where}: environment variable {env.group(1)}")
    return check_value(value, where)
