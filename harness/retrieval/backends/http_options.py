"""``harness bench --backend http`` flags, and the flags it shares with ``--backend command``
(imports no client library).

``options(args, chosen)`` returns the :class:`~.http.HttpBackend` keyword arguments when the
backend is chosen and refuses its flags given to a backend that does not use them.  A header
value ``env:VAR`` is checked here (the variable must be set) but read only when the backend
is built, so the secret never sits in the run's configuration.
"""

from __future__ import annotations

import urllib.parse

from harness.retrieval.backends.retry import check_timeout
from harness.retrieval.backends.templates import check_body_template, check_template, parse_header

SYSTEM_BACKENDS = ("http", "command")

#: flags of both system backends: flag -> (argparse dest, constructor keyword)
SHARED = {
    "--field-map": ("field_map", "field_map"),
    "--http-concurrency": ("http_concurrency", "concurrency"),
    "--http-timeout": ("http_timeout", "timeout"),
    "--http-retries": ("http_retries", "retries"),
    "--max-response-bytes": ("max_response_bytes", "max_bytes"),
    "--request-budget": ("request_budget", "budget"),
    "--preserve-order": ("preserve_order", "preserve_order"),
    "--repeat": ("repeat", "repeat"),
}
HTTP_ONLY = {
    "--url-template": ("url_template", "url_template"),
    "--method": ("method", "method"),
    "--body-template": ("body_template", "body_template"),
    "--header": ("header", "headers"),
}


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def byte_count(text: str) -> int:
    """``'4096'``, ``'64K'``, ``'64M'``, ``'1G'`` (binary units) -> bytes; ValueError else."""
    value = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = value[-1:] if value[-1:] in ("K", "M", "G") else ""
    digits = value[:len(value) - len(unit)]
    if not digits.isdigit() or int(digits) < 1:
        raise ValueError(f"expected a positive number of bytes such as 65536 or 64M, got "
                         f"{text!r}")
    return int(digits) * _UNITS[unit]


def add_shared_arguments(group) -> None:
    group.add_argument("--field-map", default=None, metavar="hits=PATH,doc_id=PATH,score=PATH",
                       help="where the ranking is in each answer: dotted paths, [*] over a "
                            "list (default hits=hits[*],doc_id=doc_id,score=score; OpenSearch: "
                            "hits=hits.hits[*],doc_id=_id,score=_score)")
    group.add_argument("--http-concurrency", type=int, default=None, metavar="N",
                       help="requests (or command processes) in flight (default 4)")
    group.add_argument("--http-timeout", type=float, default=None, metavar="SECONDS",
                       help="each attempt's deadline: connection, request and the whole "
                            "answer within this many seconds (default 10)")
    group.add_argument("--http-retries", type=int, default=None, metavar="N",
                       help="retries after a connection error, timeout, 429 or 5xx, with "
                            "exponential backoff and jitter, Retry-After honoured (default 3)")
    group.add_argument("--max-response-bytes", type=byte_count, default=None, metavar="BYTES",
                       help="the most one answer may hold (an HTTP body, a command's answer "
                            "line or per-query output); larger fails the run, exit 5 "
                            "(default 64M; suffixes K, M, G)")
    group.add_argument("--request-budget", type=int, default=None, metavar="N",
                       help="most requests to send, retries included (the run fails when spent)")
    group.add_argument("--preserve-order", action="store_true", default=None,
                       help="score the system's own order (default: the harness's tie rule)")
    group.add_argument("--repeat", type=int, default=None, metavar="N",
                       help="send the whole query set N times; metrics.json records the "
                            "run-to-run band of every measure and the queries whose ranking "
                            "changed")


def add_arguments(group) -> None:
    group.add_argument("--url-template", default=None, metavar="URL",
                       help="e.g. 'http://host:port/search?q={query}&k={k}'; placeholders "
                            "{query} {query_id} (URL-encoded) {k}")
    group.add_argument("--method", choices=("GET", "POST"), default=None,
                       help="default GET (POST with --body-template)")
    group.add_argument("--body-template", default=None, metavar="JSON",
                       help="POST body, e.g. '{\"q\": \"{query}\", \"size\": {k}}'")
    group.add_argument("--header", action="append", default=None, metavar="'Name: value'",
                       help="request header (repeatable); a value env:VAR is read from the "
                            "environment and never written to any file or log")
    add_shared_arguments(group)


def check_url_template(template: str) -> None:
    parts = urllib.parse.urlsplit(template.replace("{", "").replace("}", ""))
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"--url-template must be an http:// or https:// URL with a host, got "
                         f"{template!r}")
    check_template(template, "--url-template")


def shared_options(args, chosen: bool) -> dict:
    """The shared flags' keyword arguments when a system backend is chosen; else refuse them."""
    given = {flag: getattr(args, dest, None) for flag, (dest, _) in SHARED.items()}
    if getattr(args, "backend", None) not in SYSTEM_BACKENDS:
        bad = sorted(flag for flag, value in given.items() if value is not None)
        if bad:
            raise ValueError(f"{', '.join(bad)} apply to --backend http or command only")
        return {}
    if not chosen:
        return {}
    out = {kw: given[flag] for flag, (_, kw) in SHARED.items() if given[flag] is not None}
    for flag, kw in (("--http-concurrency", "concurrency"), ("--http-retries", "retries"),
                     ("--request-budget", "budget"), ("--repeat", "repeat")):
        value = out.get(kw)
        least = 0 if kw == "retries" else 1
        if value is not None and value < least:
            raise ValueError(f"{flag} must be at least {least}, got {value}")
    if out.get("timeout") is not None:
        check_timeout(out["timeout"], "--http-timeout")
    from harness.retrieval.backends.fieldmap import FieldMap

    FieldMap.parse(out.get("field_map"))
    return out


def options(args, chosen: bool) -> dict:
    given = {flag: getattr(args, dest, None) for flag, (dest, _) in HTTP_ONLY.items()}
    shared = shared_options(args, chosen)
    if not chosen:
        bad = sorted(flag for flag, value in given.items() if value is not None)
        if bad:
            raise ValueError(f"{', '.join(bad)} apply to --backend http only")
        return {}
    template = given["--url-template"]
    if not template:
        raise ValueError("--backend http needs --url-template URL")
    check_url_template(template)
    body = given["--body-template"]
    method = given["--method"] or ("POST" if body is not None else "GET")
    if body is not None:
        if method != "POST":
            raise ValueError("--body-template needs --method POST")
        check_template(body, "--body-template", body=True)
        check_body_template(body)
    if "{query}" not in template + (body or "") and "{query_id}" not in template + (body or ""):
        raise ValueError("--url-template (or --body-template) must hold {query} or {query_id}")
    headers = tuple(parse_header(h) for h in (given["--header"] or ()))
    names = [n.lower() for n, _ in headers]
    if len(set(names)) != len(names):
        raise ValueError("--header: a header name is given twice")
    out = dict(shared, url_template=template, method=method, headers=headers)
    if body is not None:
        out["body_template"] = body
    return out
