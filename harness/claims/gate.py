"""The gate claim (``harness gate --out`` / ``bench --gate --gate-out``): one slice's
verdict against a line, with the interval or anytime-valid bound it rests on and how many
queries it scored (docs/statistics.md).  A CI record: validated and round-tripped, not
stored in the warehouse."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from harness.claims import base as b

VERDICTS = ("pass", "fail", "undecided")
POLICIES = ("point", "ci-lower", "regression", "sequential")


@dataclasses.dataclass(frozen=True)
class GateClaim(b.Claim):
    KIND: ClassVar[str] = "gate"

    policy: str
    measure: str
    threshold: float
    corpus: str
    query_class: str
    verdict: str
    passed: bool
    reason: str
    queries_available: int
    queries_scored: int
    kind: str = "gate"
    schema_version: int = 1
    queries_saved: Any = None
    queries_saved_note: Any = None
    queries_dropped_unjudgeable: Any = 0
    mean: Any = None
    lower: Any = None
    upper: Any = None
    bound: Any = None
    alpha: Any = 0.05
    seed: Any = 0
    regression: Any = None
    source: Any = ""
    tier: Any = b.ABSENT
    #: a gated bench run: the corpora sharing the index its tier comes from
    index_corpora: Any = b.ABSENT

    @classmethod
    def validate(cls, doc: Any, source: str) -> None:
        b.header(doc, cls.KIND, cls.SCHEMA_VERSION, source)
        b.need(doc, ("policy", "measure", "threshold", "corpus", "query_class", "verdict",
                     "passed", "reason", "queries_available", "queries_scored"), source)
        b.choice(doc["policy"], POLICIES, source, "policy")
        b.text(doc["measure"], source, "measure")
        b.number(doc["threshold"], source, "threshold")
        verdict = b.choice(doc["verdict"], VERDICTS, source, "verdict")
        if b.flag(doc["passed"], source, "passed") != (verdict == "pass"):
            b.fail(source, "passed", f"{doc['passed']!r} contradicts verdict {verdict!r}")
        available = b.integer(doc["queries_available"], source, "queries_available")
        scored = b.integer(doc["queries_scored"], source, "queries_scored")
        if scored > available:
            b.fail(source, "queries_scored", f"{scored} scored of only {available} available")
        saved = b.integer(doc.get("queries_saved"), source, "queries_saved", nullable=True)
        if saved is not None and saved != available - scored:
            b.fail(source, "queries_saved", f"{saved} is not available - scored "
                                            f"({available} - {scored})")
        for name in ("mean", "lower", "upper"):
            b.number(doc.get(name), source, name, nullable=True)
        if doc.get("lower") is not None and doc.get("upper") is not None \
                and doc["lower"] > doc["upper"] + b.TOLERANCE:
            b.fail(source, "lower", f"{doc['lower']!r} is above upper {doc['upper']!r}")
        b.number(doc.get("alpha", 0.05), source, "alpha", lo=0, hi=1)
        if "tier" in doc:
            b.tier(doc["tier"], source)
