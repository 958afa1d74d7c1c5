"""Re-reading a login's claims from the identity provider: the OIDC userinfo endpoint
(OpenID Connect Core 1.0, section 5.3), called with the login's access token.

Every call is bounded: plain http(s) only, a deadline per request, responses read up to
:data:`MAX_BYTES`.  An error names what failed, never the token.  The endpoint is found from
the provider's discovery document (``server_metadata_url`` of ``[auth]``), read once per
process.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from typing import Any, Mapping

from dashboard.audience import Recheck

#: the most bytes read from a discovery document or a userinfo response
MAX_BYTES = 1 << 20
#: seconds one request to the provider may take
TIMEOUT = 5.0

_ENDPOINTS: dict[str, str] = {}
_LOCK = threading.Lock()


class ProviderError(Exception):
    """The identity provider gave no usable answer (the message says which request)."""


def _get_json(url: str, token: str | None = None) -> dict:
    if not url.startswith(("https://", "http://")):
        raise ProviderError(f"{url}: not an http(s) URL")
    headers = {"Accept": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:  # noqa: S310
            body = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise ProviderError(f"{url}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise ProviderError(f"{url}: {getattr(exc, 'reason', exc)}") from None
    if len(body) > MAX_BYTES:
        raise ProviderError(f"{url}: answer larger than {MAX_BYTES} bytes")
    try:
        doc = json.loads(body)
    except ValueError:
        raise ProviderError(f"{url}: answer is not JSON") from None
    if not isinstance(doc, dict):
        raise ProviderError(f"{url}: answer is not a JSON object")
    return doc


def userinfo_endpoint(metadata_url: str) -> str:
    """The provider's ``userinfo_endpoint``, from its discovery document (read once)."""
    with _LOCK:
        known = _ENDPOINTS.get(metadata_url)
    if known is not None:
        return known
    endpoint = _get_json(metadata_url).get("userinfo_endpoint")
    if not isinstance(endpoint, str):
        raise ProviderError(f"{metadata_url}: field 'userinfo_endpoint' is missing")
    with _LOCK:
        _ENDPOINTS[metadata_url] = endpoint
    return endpoint


def recheck(metadata_url: str | None, access_token: str | None, subject: Any) -> Recheck:
    """The claims the provider holds now for the person logged in as ``subject``, or why
    they cannot be had (no metadata URL, no access token exposed, a refusal, another
    subject)."""
    if not metadata_url:
        return Recheck(error="[auth] names no server_metadata_url")
    if not access_token:
        return Recheck(error="no access token: [auth] needs expose_tokens = [\"access\"]")
    try:
        claims = _get_json(userinfo_endpoint(metadata_url), access_token)
    except ProviderError as exc:
        return Recheck(error=str(exc))
    if claims.get("sub") != subject:
        return Recheck(error="the provider answered for another subject")
    return Recheck(claims=claims)


def metadata_url(auth: Mapping[str, Any]) -> str | None:
    """``server_metadata_url`` of ``[auth]``, or of its one provider section."""
    url = auth.get("server_metadata_url")
    if isinstance(url, str):
        return url
    found = [v.get("server_metadata_url") for v in auth.values() if isinstance(v, Mapping)]
    found = [u for u in found if isinstance(u, str)]
    return found[0] if len(found) == 1 else None
