"""The power claim (``harness power --json``): what a gold set of ``n`` queries can resolve,
or an audit of published numbers against it (docs/statistics.md).  Its smallest attainable
p-values are exact powers of two written in full (:class:`harness.core.canonical.Unrounded`),
never rounded to zero.  Validated and round-tripped, not stored in the warehouse."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Self

from harness.claims import base as b
from harness.core.canonical import Unrounded

#: fields written at full precision
UNROUNDED = ("smallest_attainable_p", "smallest_attainable_p_holm")


@dataclasses.dataclass(frozen=True)
class PowerClaim(b.Claim):
    KIND: ClassVar[str] = "power"

    n: int
    alpha: float
    smallest_attainable_p: float
    queries_that_must_differ: int
    can_be_significant: bool
    kind: str = "power"
    schema_version: int = 1
    audit: Any = b.ABSENT
    measure: Any = b.ABSENT
    power: Any = b.ABSENT
    family_size: Any = b.ABSENT
    smallest_attainable_p_holm: Any = b.ABSENT
    formula: Any = b.ABSENT
    z_multiplier: Any = b.ABSENT
    sd: Any = b.ABSENT
    sd_source: Any = b.ABSENT
    minimum_detectable_effect: Any = b.ABSENT
    effect: Any = b.ABSENT
    queries_needed: Any = b.ABSENT
    queries_needed_t: Any = b.ABSENT
    shortfall: Any = b.ABSENT
    confidence: Any = b.ABSENT
    values: Any = b.ABSENT
    baseline: Any = b.ABSENT
    comparisons: Any = b.ABSENT
    note: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        b.need(doc, ("n", "alpha", "smallest_attainable_p", "queries_that_must_differ",
                     "can_be_significant"), source)
        n = b.integer(doc["n"], source, "n", lo=1)
        b.number(doc["alpha"], source, "alpha", lo=0, hi=1)
        floor = b.number(doc["smallest_attainable_p"], source, "smallest_attainable_p",
                         lo=0, hi=1)
        if abs(floor - 2.0 ** (1 - n)) > 1e-12 * max(1.0, 2.0 ** (1 - n)):
            b.fail(source, "smallest_attainable_p", f"{floor!r} is not 2^(1-n) for n = {n}")
        b.integer(doc["queries_that_must_differ"], source, "queries_that_must_differ", lo=1)
        b.flag(doc["can_be_significant"], source, "can_be_significant")

    @classmethod
    def from_dict(cls, doc: Any, source: str | None = None) -> Self:
        claim = super().from_dict(doc, source)
        # Any: replace() checks one ** mapping against every field, and these are two fields
        # of different declared types (float, and Any for the optional one)
        kept: dict[str, Any] = {name: Unrounded(doc[name]) for name in UNROUNDED
                if name in doc and isinstance(doc[name], (int, float))}
        return dataclasses.replace(claim, **kept)
