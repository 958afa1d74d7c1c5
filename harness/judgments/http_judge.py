"""A team's own judge served over HTTP (an LLM behind an endpoint), bounded and redacted as
``--backend http`` is (:mod:`harness.retrieval.backends.bounded_http`).

Each pair is one ``POST`` of ``{"query_id", "query", "doc_id", "document"}`` (the document
cut to :data:`MAX_DOCUMENT` characters) to the URL; the answer must be a JSON object with a
finite number ``score`` (higher: more relevant; any scale, the calibration maps it to grades).
Every request has a deadline and every answer a byte cap; a failing request is retried a few
times and then stops the command, naming the pair and the status.  What is recorded holds the
URL with secrets redacted and the header *names*; a header value ``env:VAR`` is read from the
environment and never written or printed.  The endpoint's licence is what ``--judge-licence``
says (default unknown: the estimate is capped at tier B).
"""

from __future__ import annotations

import json
import math
import time
from typing import Any, Callable, Mapping, Sequence

from harness.retrieval.backends.bounded_http import (BodyTooLarge, BoundedClient, HttpTimeout,
                                                     HttpUnreachable)
from harness.retrieval.backends.templates import parse_header, redact, redact_url, resolve_header

from harness.judgments.judge import JudgeScores, Pair

#: the longest document text sent (characters)
MAX_DOCUMENT = 20_000
RETRIES = 2


def http_scores(url: str, query_texts: Mapping[str, str], doc_texts: Mapping[str, str],
                pairs: Sequence[Pair], *, headers: Sequence[str] = (), timeout: float = 30.0,
                max_bytes: int = 1 << 16, licence: str = "unknown",
                tier_of: Callable[[str], str], progress: Callable[[int, int], None] | None = None
                ) -> JudgeScores:
    """Scores of ``pairs`` from the endpoint at ``url`` (module docstring)."""
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"--judge-url {redact_url(url)!r}: expected an http:// or https:// URL")
    if not (0 < timeout <= 600):
        raise ValueError(f"--judge-timeout must lie in (0, 600] seconds, got {timeout}")
    parsed = [parse_header(h) for h in headers]
    sent = {name: resolve_header(value, f"--judge-header {name}") for name, value in parsed}
    secrets = [v for v in sent.values()]
    client = BoundedClient(timeout=timeout, max_bytes=max_bytes, connections=1,
                           headers={"Content-Type": "application/json", **sent})
    shown = redact_url(url)
    scores: dict[Pair, float] = {}
    try:
        for done, (query_id, doc_id) in enumerate(pairs, start=1):
            body = json.dumps({"query_id": query_id, "query": query_texts[query_id],
                               "doc_id": doc_id,
                               "document": doc_texts[doc_id][:MAX_DOCUMENT]}).encode()
            scores[(query_id, doc_id)] = _one(client, url, body, (query_id, doc_id), shown,
                                              secrets)
            if progress is not None:
                progress(done, len(pairs))
    finally:
        client.close()
    provenance: dict[str, Any] = {
        "model": f"http judge {shown}", "headers": sorted(n for n, _ in parsed),
        "licence": licence, "tier": tier_of(licence),
        "score": f"POST per pair, answer {{score}}; document cut at {MAX_DOCUMENT} characters",
        "calibration": "isotonic on hand labels, cross-fitted over 5 folds of the labelled "
                       "queries"}
    return JudgeScores(scores, provenance)


def _one(client: BoundedClient, url: str, body: bytes, pair: Pair, shown: str,
         secrets: list[str]) -> float:
    last = ""
    for attempt in range(RETRIES + 1):
        if attempt:
            time.sleep(0.2 * 2 ** attempt)
        try:
            answer = client.request("POST", url, content=body)
        except (HttpTimeout, HttpUnreachable) as exc:
            last = str(exc)
            continue
        except BodyTooLarge as exc:
            raise ValueError(f"judge {shown}, pair {pair}: {exc} (--judge-max-bytes)") from None
        if answer.status >= 500 or answer.status == 429:
            last = f"status {answer.status}"
            continue
        if answer.status != 200:
            raise ValueError(redact(f"judge {shown}, pair {pair}: status {answer.status}: "
                                    f"{answer.text()!r}", secrets))
        return _score(answer.body, pair, shown, secrets)
    raise ValueError(redact(f"judge {shown}, pair {pair}: no answer after {RETRIES + 1} tries "
                            f"({last})", secrets))


def _score(body: bytes, pair: Pair, shown: str, secrets: list[str]) -> float:
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    value = doc.get("score") if isinstance(doc, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        start = body[:80].decode("utf-8", "replace")
        raise ValueError(redact(f"judge {shown}, pair {pair}: field 'score': expected a JSON "
                                f"object with a finite number, got {start!r}", secrets))
    return float(value)
