"""The documents the statistics write: kinds, schema version, atomic claim-file writes.

Each document is canonical JSON (:mod:`harness.core.canonical`) carrying ``kind`` and
``schema_version`` so the warehouse can route and validate it.  Claim files written into a
results directory are replaced atomically: a reader sees the old file or the new one, never
half of one.  An existing file is replaced only when it is empty or a document of the same
kind (:mod:`harness.core.outputs`); anything else is refused, untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from harness.core.canonical import canonical_json
from harness.core.outputs import is_document, write_file

SCHEMA_VERSION = 1

INTERVALS_KIND = "intervals"
COMPARISONS_KIND = "comparisons"
AGREEMENT_KIND = "agreement"
GATE_KIND = "gate"
POWER_KIND = "power"
MANIFEST_KIND = "agreement-manifest"

INTERVALS_JSON = "intervals.json"
COMPARISONS_JSON = "comparisons.json"


def write_document(path, doc: Mapping, *, flag: str = "--out",
                   inputs: Iterable[tuple[str, object]] = ()) -> Path:
    """Write ``doc`` as canonical JSON to ``path`` atomically (temporary file + rename),
    replacing only an empty file or a document of the same kind; ``path`` must not be one
    of ``inputs`` (``(label, path)`` pairs named in the refusal)."""
    text = canonical_json(dict(doc))
    kind = str(doc.get("kind"))
    return write_file(path, text, recognise=is_document(kind), what=f"{kind} document",
                      flag=flag, inputs=inputs)
