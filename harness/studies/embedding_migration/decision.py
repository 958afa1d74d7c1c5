"""``decide()``: keep OLD, bridge, or re-index, against the alternative the user really has.

The user's choice is between doing nothing (keep OLD), bridging (NEW's queries through an
adapter into OLD's index, re-index later) and a full re-index.  ARR alone answers "how much
of a re-index does the adapter recover"; ``upgrade_gain`` answers "is NEW better than OLD".
Both can be good while bridging is still worse than keeping OLD, so OLD's own retention
(OLD recall / oracle recall, the same denominator as ARR) is compared with ARR directly.

Rules, in order (the first that fires decides):

0. ``drop_in``: measured only where both are (T1): NEW's top-k overlaps OLD's by at least
   ``drop_in_overlap`` on average, and the nDCG@k difference NEW - OLD is within
   ``drop_in_ndcg`` of 0 with an interval that contains 0 -> ``equivalent_drop_in``: NEW
   retrieves what OLD retrieves, so a cheaper NEW can replace OLD (re-embed the corpus with
   NEW; no adapter, no gain needed).  Without it an equivalent model would fall to rule 1
   (its gain is about 1) and read "no upgrade needed", which answers another question.
1. ``gain_below_floor``: the gain is measured (T1) and below ``gain_floor``: NEW is not
   worth a migration -> ``no_upgrade_needed``.
2. ``bridge_worse_than_old``: OLD's retention exceeds ARR by more than ``borderline_band``:
   bridging loses recall against doing nothing -> ``full_reindex`` if NEW is worth having
   (gain at least the floor, or not measured: T0 assumes NEW is wanted) else
   ``no_upgrade_needed``.
3. Bands on ARR: ``bridge_sufficient`` (>= its threshold: the adapter recovers nearly all
   of a re-index; bridging can stay), ``bridge_and_migrate`` (bridge now, re-index later),
   ``caution`` (bridging loses noticeably; re-index soon), below ``caution``:
   ``full_reindex``.

Flags: ``borderline`` (OLD's retention exceeds ARR, but by no more than the band: a warning
that does not overrule), ``straddles_threshold`` (the interval of a quantity a consulted
rule compared lies across that rule's threshold; the names are in ``straddles``),
``gain_not_measured`` (T0), ``weak_oracle`` (gain < 1: ARR divides by an oracle weaker
than OLD, so a high ARR means little; ARR is not comparable across model pairs).

The thresholds are data (:data:`THRESHOLDS`), derived from the eight decisions of the
reference measurements (BEIR/scifact, four model pairs, two tiers) as the round values
inside the intervals those decisions allow (docs/migration.md gives the derivation).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping



THRESHOLDS: dict[str, float] = {
    # a drop-in retrieves what OLD retrieves: mean top-k overlap at least this ...
    "drop_in_overlap": 0.95,
    # ... and |nDCG@k(NEW) - nDCG@k(OLD)| at most this, its interval containing 0
    # (the equivalence bar of a cheaper runtime or precision of the same model)
    "drop_in_ndcg": 0.005,
    # NEW must retrieve at least 3% better than OLD (oracle recall / OLD recall) to be worth
    # a migration.  Reference: gains 0.993, 1.018, 0.845 were "no upgrade"; 1.060 was not,
    # so the floor lies in (1.018, 1.060].
    "gain_floor": 1.03,
    # bridging may trail OLD's own retention by this much before it overrules the bands
    # (the reference's band, +-0.04, set by T1 half-widths of 0.02-0.08 on 295 queries;
    # its regression case trails by 0.041).
    "borderline_band": 0.04,
    # ARR bands.  Reference T0 decisions: 0.942, 0.911, 0.870 bridge_and_migrate, 0.762
    # caution: bridge_sufficient > 0.942, bridge_and_migrate in (0.762, 0.870],
    # caution <= 0.762.
    "bridge_sufficient": 0.97,
    "bridge_and_migrate": 0.80,
    "caution": 0.70,
}

#: what each threshold is compared with (the quantity whose interval may straddle it)
COMPARED: dict[str, str] = {
    "drop_in_overlap": "overlap",
    "drop_in_ndcg": "ndcg_delta",
    "gain_floor": "gain",
    "borderline_band": "bridge_minus_old",
    "bridge_sufficient": "arr",
    "bridge_and_migrate": "arr",
    "caution": "arr",
}

#: the ARR bands, highest first
BANDS: tuple[tuple[str, str], ...] = (("bridge_sufficient", "bridge_sufficient"),
                                      ("bridge_and_migrate", "bridge_and_migrate"),
                                      ("caution", "caution"))


@dataclass(frozen=True)
class Decision:
    decision: str
    #: the rule that fired: drop_in, gain_below_floor, bridge_worse_than_old or arr_band
    rule: str
    reason: str
    flags: tuple[str, ...] = ()
    straddles: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        return {"decision": self.decision, "rule": self.rule, "reason": self.reason,
                "flags": list(self.flags), "straddles": list(self.straddles)}


def check_thresholds(thresholds: Mapping[str, float]) -> dict[str, float]:
    """Every threshold present, finite, and the ARR bands in descending order."""
    missing = sorted(set(THRESHOLDS) - set(thresholds))
    if missing:
        raise ValueError(f"thresholds: missing {missing}; expected {sorted(THRESHOLDS)}")
    out = {name: float(thresholds[name]) for name in THRESHOLDS}
    if not out["bridge_sufficient"] > out["bridge_and_migrate"] > out["caution"] > 0:
        raise ValueError("thresholds: expected bridge_sufficient > bridge_and_migrate > "
                         f"caution > 0, got {out}")
    if out["borderline_band"] < 0 or out["gain_floor"] <= 0:
        raise ValueError(f"thresholds: borderline_band must be >= 0 and gain_floor > 0, got {out}")
    if not 0 < out["drop_in_overlap"] <= 1 or out["drop_in_ndcg"] < 0:
        raise ValueError("thresholds: drop_in_overlap must be in (0, 1] and drop_in_ndcg >= 0, "
                         f"got {out}")
    return out


def _straddles(value: float, interval) -> bool:
    return interval is not None and interval[0] < value < interval[1]


def decide(arr: float, old_arr: float, gain: float | None = None, *,
           overlap: float | None = None, ndcg_delta: float | None = None,
           intervals: Mapping[str, tuple[float, float]] | None = None,
           thresholds: Mapping[str, float] = THRESHOLDS) -> Decision:
    """The recommendation for one tier (module docstring).

    ``arr``: adapted recall retention; ``old_arr``: OLD's own retention (same denominator);
    ``gain``: upgrade gain, None when not measured (T0); ``overlap``: mean top-k overlap of
    NEW and OLD; ``ndcg_delta``: mean nDCG@k NEW - OLD (both None when not measured; rule
    0 needs both and the ``ndcg_delta`` interval).  ``intervals`` maps ``arr``, ``gain``,
    ``bridge_minus_old`` (ARR - OLD retention), ``overlap`` and ``ndcg_delta`` to
    ``(lower, upper)`` for the straddle flag.
    """
    t = check_thresholds(thresholds)
    if (overlap is None) != (ndcg_delta is None):
        raise ValueError("decide: overlap and ndcg_delta are measured together or not at all")
    if overlap is not None and not (isinstance(overlap, (int, float)) and 0 <= overlap <= 1):
        raise ValueError(f"decide: overlap must be in [0, 1], got {overlap!r}")
    if ndcg_delta is not None and not (isinstance(ndcg_delta, (int, float))
                                       and -1 <= ndcg_delta <= 1):
        raise ValueError(f"decide: ndcg_delta must be in [-1, 1], got {ndcg_delta!r}")
    if ndcg_delta is not None and "ndcg_delta" not in (intervals or {}):
        raise ValueError("decide: the drop-in rule needs the ndcg_delta interval")
    for name, value in (("arr", arr), ("old_arr", old_arr)) + ((("gain", gain),) if gain is not None else ()):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value \
                or value < 0:
            raise ValueError(f"decide: {name} must be a non-negative number, got {value!r}")
    intervals = dict(intervals or {})
    consulted: list[str] = []
    flags: set[str] = set()
    if gain is None:
        flags.add("gain_not_measured")
    elif gain < 1.0:
        flags.add("weak_oracle")
    deficit = old_arr - arr
    if 0 < deficit <= t["borderline_band"]:
        flags.add("borderline")

    def done(decision: str, rule: str, reason: str) -> Decision:
        crossed = []
        for name in consulted:
            quantity = COMPARED[name]
            values = ((-t[name],) if name == "borderline_band" else
                      (-t[name], t[name]) if name == "drop_in_ndcg" else (t[name],))
            if any(_straddles(value, intervals.get(quantity)) for value in values):
                crossed.append(name)
        if crossed:
            flags.add("straddles_threshold")
        return Decision(decision, rule, reason, tuple(sorted(flags)), tuple(sorted(crossed)))

    if overlap is not None and ndcg_delta is not None:
        consulted.extend(("drop_in_overlap", "drop_in_ndcg"))
        lower, upper = intervals["ndcg_delta"]
        if (overlap >= t["drop_in_overlap"] and abs(ndcg_delta) <= t["drop_in_ndcg"]
                and lower <= 0.0 <= upper):
            return done("equivalent_drop_in", "drop_in",
                        f"NEW's top results overlap OLD's by {overlap:.3f} on average (at least "
                        f"{t['drop_in_overlap']:.3f}) and nDCG moves by {ndcg_delta:+.4f} "
                        f"[{lower:+.4f}, {upper:+.4f}] (within {t['drop_in_ndcg']:.3f}, the "
                        "interval containing 0): NEW retrieves what OLD retrieves and can "
                        "replace it (re-embed with NEW)")
    if gain is not None:
        consulted.append("gain_floor")
        if gain < t["gain_floor"]:
            return done("no_upgrade_needed", "gain_below_floor",
                        f"NEW retrieves {gain:.3f}x what OLD retrieves (oracle recall / OLD "
                        f"recall), below the floor {t['gain_floor']:.3f}: the new model is not "
                        "worth a migration")
    consulted.append("borderline_band")
    if deficit > t["borderline_band"]:
        worth = gain is None or gain >= t["gain_floor"]
        if worth:
            tail = ("NEW is worth having (gain measured above the floor)" if gain is not None
                    else "T0 measures no gain: this assumes NEW is wanted, T1 says whether it is")
            return done("full_reindex", "bridge_worse_than_old",
                        f"bridging retains {arr:.3f} of a re-index but keeping OLD retains "
                        f"{old_arr:.3f}: bridging is worse than doing nothing by {deficit:.3f} "
                        f"(more than the band {t['borderline_band']:.3f}); {tail}, so re-index")
        return done("no_upgrade_needed", "bridge_worse_than_old",
                    f"bridging ({arr:.3f}) is worse than keeping OLD ({old_arr:.3f}) and NEW is "
                    "not worth a re-index")
    for name, decision in BANDS:
        consulted.append(name)
        if arr >= t[name]:
            return done(decision, "arr_band",
                        f"the adapter recovers {arr:.3f} of a re-index (band {decision}: "
                        f"ARR >= {t[name]:.3f})"
                        + (f"; bridging trails OLD ({old_arr:.3f}) by {deficit:.3f}, within "
                           "the borderline band" if "borderline" in flags else ""))
    return done("full_reindex", "arr_band",
                f"the adapter recovers only {arr:.3f} of a re-index (below the caution "
                f"threshold {t['caution']:.3f}): bridging cannot carry NEW, re-index")
