"""Retrieval arms as data: the fusion specification and its parameter-derived id.

An arm is named by what it computes, never by a label somebody chose, so the set of arms
can be regenerated from a table of parameters and two different configurations can never
share an id.  Weights are written into the id as integer percent (``w70_30``, BM25 leg
first, vector leg second); a weight needing more precision (``0.705,0.295``) is refused
rather than rounded, because rounding would let two arms alias onto one id.

The fusion window is the depth each leg is fused over: ``max(100, min(size * 4, 500))``.
A different request size is therefore a different ranking, not a truncation of the same
one (``--size 12`` fuses over 100 candidates per leg, ``--size 48`` over 192).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

MODES = ("bm25", "vector", "hybrid")
STAGES = ("retrieve", "rerank")
SCOPES = ("corpus", "gold-files")
GRANULARITIES = ("chunk", "file")
FUSION_STRATEGIES = ("rrf", "normalization")
NORMALIZATION_TECHNIQUES = ("min_max", "l2", "z_score")
COMBINATION_TECHNIQUES = ("arithmetic_mean", "geometric_mean", "harmonic_mean")

DEFAULT_RANK_CONSTANT = 60
DEFAULT_NORMALIZATION = "min_max"
DEFAULT_COMBINATION = "arithmetic_mean"

#: legs in the order weights are given: BM25 first, vector second
LEG_ORDER = ("bm25", "dense")


def fusion_window(size: int) -> int:
    """Candidates fused per leg for a request of ``size``: ``max(100, min(size*4, 500))``."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive integer, got {size!r}")
    return max(100, min(size * 4, 500))


def parse_weights(text: str | None) -> tuple[int, int] | None:
    """``"0.7,0.3"`` -> ``(70, 30)`` (integer percent, BM25 first, vector second).

    Refused: anything but two non-negative numbers, a weight that is not a whole percent,
    and weights not summing to exactly 1.  Equal weights are the unweighted mean and
    resolve to ``None``, so they name the same arm.
    """
    if text is None:
        return None
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"--combination-weights: expected two weights 'BM25,VECTOR' "
                         f"(e.g. 0.7,0.3), got {text!r}")
    percents = []
    for part in parts:
        try:
            value = Decimal(part)
        except InvalidOperation:
            raise ValueError(f"--combination-weights: {part!r} is not a number") from None
        if not value.is_finite() or value < 0:
            raise ValueError(f"--combination-weights: weight {part!r} must be a finite "
                             "non-negative number")
        percent = value * 100
        if percent != percent.to_integral_value():
            raise ValueError(
                f"--combination-weights {text!r}: weight {part} needs more precision than a "
                "whole percent; arm ids encode weights as integer percent, and rounding "
                "would let two different arms share one id"
            )
        percents.append(int(percent))
    if sum(percents) != 100:
        raise ValueError(f"--combination-weights {text!r}: weights must sum to 1 "
                         f"(they sum to {sum(percents) / 100:g})")
    if percents[0] == percents[1]:
        return None
    return (percents[0], percents[1])


@dataclass(frozen=True)
class FusionSpec:
    """How the two legs of a hybrid arm are combined (:mod:`harness.retrieval.fusion` computes it)."""

    strategy: str = "rrf"
    rank_constant: int = DEFAULT_RANK_CONSTANT
    normalization: str | None = None
    combination: str | None = None
    #: integer percent, BM25 first; None = unweighted
    weights: tuple[int, int] | None = None
    selected_explicitly: bool = False

    def __post_init__(self):
        if self.strategy not in FUSION_STRATEGIES:
            raise ValueError(f"unknown fusion strategy {self.strategy!r}; "
                             f"expected one of {sorted(FUSION_STRATEGIES)}")
        if self.strategy == "rrf":
            if isinstance(self.rank_constant, bool) or not isinstance(self.rank_constant, int) \
                    or self.rank_constant < 1:
                raise ValueError(f"--rank-constant must be a positive integer, "
                                 f"got {self.rank_constant!r}")
            if self.normalization or self.combination or self.weights:
                raise ValueError("normalization technique, combination technique and weights "
                                 "apply to --fusion normalization, not rrf")
            return
        if self.normalization not in NORMALIZATION_TECHNIQUES:
            raise ValueError(f"unknown normalization technique {self.normalization!r}; "
                             f"expected one of {sorted(NORMALIZATION_TECHNIQUES)}")
        if self.combination not in COMBINATION_TECHNIQUES:
            raise ValueError(f"unknown combination technique {self.combination!r}; "
                             f"expected one of {sorted(COMBINATION_TECHNIQUES)}")
        if self.normalization == "z_score" and self.combination != "arithmetic_mean":
            raise ValueError("z_score normalization yields signed scores, for which geometric "
                             "and harmonic means are undefined; use arithmetic_mean")

    @property
    def arm_id(self) -> str:
        """Parameter-derived id, e.g. ``hybrid-rrf-60``,
        ``hybrid-norm-min_max-arithmetic_mean-w70_30``."""
        if self.strategy == "rrf":
            return f"hybrid-rrf-{self.rank_constant}"
        arm = f"hybrid-norm-{self.normalization}-{self.combination}"
        if self.weights:
            arm += f"-w{self.weights[0]}_{self.weights[1]}"
        return arm

    @property
    def parameters(self) -> dict:
        if self.strategy == "rrf":
            return {"rank_constant": self.rank_constant}
        return {
            "normalization_technique": self.normalization,
            "combination_technique": self.combination,
            "weights": None if self.weights is None
            else {"bm25": self.weights[0] / 100, "vector": self.weights[1] / 100},
        }

    def block(self, size: int) -> dict:
        """The ``retrieval.fusion`` block of metrics.json."""
        return {
            "strategy": self.strategy,
            "parameters": self.parameters,
            "arm_id": self.arm_id,
            "window": fusion_window(size),
            "window_rule": "max(100, min(size*4, 500)) candidates per leg",
            "missing_leg_score": "0 after normalisation" if self.strategy == "normalization"
            else "no contribution (1/(k+rank) summed over the legs that hold the document)",
            "selected_explicitly": self.selected_explicitly,
        }


def single_leg_block(mode: str) -> dict:
    """``retrieval.fusion`` for a one-leg arm: present, and saying nothing was fused."""
    return {"strategy": "none", "parameters": {}, "arm_id": mode, "window": None,
            "selected_explicitly": False}


def resolve_fusion(
    fusion: str | None = None,
    rank_constant: int | None = None,
    normalization: str | None = None,
    combination: str | None = None,
    weights: str | None = None,
) -> FusionSpec:
    """A :class:`FusionSpec` from command-line values.

    No fusion flag at all gives RRF at the default rank constant with
    ``selected_explicitly: False``; a fusion parameter without ``--fusion`` is refused, so
    an arm's strategy is never guessed from its parameters.
    """
    parameters_given = any(v is not None for v in (rank_constant, normalization, combination,
                                                    weights))
    if fusion is None:
        if parameters_given:
            raise ValueError("fusion parameters were given without --fusion rrf|normalization")
        return FusionSpec()
    if fusion == "rrf":
        if normalization is not None or combination is not None or weights is not None:
            raise ValueError("--normalization-technique, --combination-technique and "
                             "--combination-weights apply to --fusion normalization only")
        return FusionSpec("rrf", DEFAULT_RANK_CONSTANT if rank_constant is None else rank_constant,
                          selected_explicitly=True)
    if fusion == "normalization":
        if rank_constant is not None:
            raise ValueError("--rank-constant applies to --fusion rrf only")
        return FusionSpec(
            "normalization", DEFAULT_RANK_CONSTANT,
            normalization or DEFAULT_NORMALIZATION,
            combination or DEFAULT_COMBINATION,
            parse_weights(weights),
            selected_explicitly=True,
        )
    raise ValueError(f"unknown --fusion {fusion!r}; expected one of {sorted(FUSION_STRATEGIES)}")
