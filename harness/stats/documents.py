"""The documents the statistics write: kinds, schema version, atomic claim-file writes.

Each document is canonical JSON (:mod:`harness.core.canonical`) carrying ``kind`` and
``schema_version`` so the warehouse can route and validate it.  Claim files written into a
results directory are replaced atomically: a reader sees the old file or the new one, never
half of one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping

from harness.core.canonical import canonical_json

SCHEMA_VERSION = 1

INTERVALS_KIND = "intervals"
COMPARISONS_KIND = "comparisons"
AGREEMENT_KIND = "agreement"
GATE_KIND = "gate"
POWER_KIND = "power"
MANIFEST_KIND = "agreement-manifest"

INTERVALS_JSON = "intervals.json"
COMPARISONS_JSON = "comparisons.json"


def write_document(path, doc: Mapping) -> Path:
    """Write ``doc`` as canonical JSON to ``path`` atomically (temporary file + rename)."""
    path = Path(path)
    text = canonical_json(dict(doc))
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path
