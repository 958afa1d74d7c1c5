"""Certificates under drift: frozen, rolling-window and adaptive conformal thresholds.

A conformal threshold is valid only while served queries are exchangeable with the
calibration queries.  This simulation streams nonconformity scores past three thresholds:

* **frozen**: the conformal quantile of the calibration sample, never updated;
* **rolling**: the same quantile over the last ``window`` observed scores;
* **adaptive**: adaptive conformal inference (Gibbs & Candes, NeurIPS 2021): the rolling
  quantile taken at a level ``alpha_t`` driven by realised misses,
  ``alpha_{t+1} = alpha_t + gamma (alpha - err_t)``.  Summing the update telescopes, so for
  every stream ``|mean(err) - alpha| <= (max(alpha_1, 1 - alpha_1) + gamma) / (gamma T)``
  with no assumption on the scores at all.

Scenarios (scores before the change are Beta(2, 5), in the units of the cumulative-mass
nonconformity): ``location_shift`` adds ``shift`` to every score from ``change_at`` on;
``saturation`` sends a fraction ``saturation`` of the scores from ``change_at`` on to one tied
value, the top of the range (1.0): the scorer can no longer separate the relevant passage
from the candidates piled on its top score, so only the whole list covers those queries.
All randomness comes from one seeded generator; the seed is part of the output.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from harness.certificates.conformal import quantile_index

METHODS: tuple[str, ...] = ("frozen", "rolling", "adaptive")
#: an adaptive level whose final-third mean sits further than this from alpha is compensating
#: for something the rolling quantile cannot track (the signal to investigate, not coverage)
COMPENSATION_MARGIN = 0.05


def _location_shift(base: np.ndarray, rng, *, shift: float, saturation: float) -> np.ndarray:
    return base + shift


def _saturation(base: np.ndarray, rng, *, shift: float, saturation: float) -> np.ndarray:
    tied = rng.random(base.shape) < saturation
    return np.where(tied, 1.0, base)


#: scenario name -> how scores after the change are made from unchanged ones
SCENARIOS: dict[str, Callable] = {
    "location_shift": _location_shift,
    "saturation": _saturation,
}


def _kth(sorted_window: np.ndarray, k: np.ndarray) -> np.ndarray:
    """k-th smallest per row (1-based); +inf when k > width, -inf when k < 1."""
    width = sorted_window.shape[1]
    idx = np.clip(k - 1, 0, width - 1)
    value = np.take_along_axis(sorted_window, idx[:, None], axis=1)[:, 0]
    return np.where(k > width, np.inf, np.where(k < 1, -np.inf, value))


def simulate(scenario: str, *, streams: int = 200, length: int = 3000, alpha: float = 0.1,
             gamma: float = 0.005, window: int = 500, calibration: int = 500,
             shift: float = 0.30, saturation: float = 0.3, change_at: int = 0, seed: int = 0,
             margin: float = COMPENSATION_MARGIN, progress: bool = False) -> dict:
    """Long-run coverage of each method on ``streams`` seeded streams of ``length`` queries."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; expected one of {sorted(SCENARIOS)}")
    if not 0 < alpha < 1 or gamma <= 0:
        raise ValueError("alpha must lie in (0, 1) and gamma must be positive")
    if min(streams, length, window, calibration) < 1 or not 0 <= change_at <= length:
        raise ValueError("streams, length, window and calibration must be positive, "
                         "and change_at within the stream")
    if window > calibration:
        raise ValueError(f"window ({window}) cannot exceed the calibration sample ({calibration})")
    rng = np.random.default_rng(seed)
    calib = rng.beta(2.0, 5.0, size=(streams, calibration))
    scores = rng.beta(2.0, 5.0, size=(streams, length))
    changed = SCENARIOS[scenario](scores[:, change_at:], rng, shift=shift, saturation=saturation)
    scores[:, change_at:] = changed

    k_fixed = quantile_index(window, alpha)
    frozen_q = _kth(np.sort(calib, axis=1), np.full(streams, quantile_index(calibration, alpha)))
    buffer = calib[:, calibration - window:].copy()
    oldest = 0
    level = np.full(streams, alpha)
    hits = {m: np.zeros((streams, length), dtype=bool) for m in METHODS}
    levels = np.zeros((streams, length))
    steps = range(length)
    if progress:
        from tqdm import tqdm

        steps = tqdm(steps, desc=f"drift {scenario}", unit="query", total=length)
    for t in steps:
        e = scores[:, t]
        ordered = np.sort(buffer, axis=1)
        rolling_q = _kth(ordered, np.full(streams, k_fixed))
        k_level = np.ceil((window + 1) * (1 - level) - 1e-12).astype(np.int64)
        adaptive_q = _kth(ordered, k_level)
        hits["frozen"][:, t] = e <= frozen_q
        hits["rolling"][:, t] = e <= rolling_q
        hits["adaptive"][:, t] = e <= adaptive_q
        levels[:, t] = level
        level = level + gamma * (alpha - (~hits["adaptive"][:, t]).astype(float))
        buffer[:, oldest] = e
        oldest = (oldest + 1) % window

    bound = (max(alpha, 1 - alpha) + gamma) / (gamma * length)
    tail = levels[:, -max(1, length // 3):].mean(axis=1)
    result = {
        "scenario": scenario, "seed": seed, "streams": streams, "length": length,
        "alpha": alpha, "gamma": gamma, "window": window, "calibration": calibration,
        "shift": shift if scenario == "location_shift" else None,
        "saturation": saturation if scenario == "saturation" else None,
        "change_at": change_at,
        "coverage": {m: float(hits[m].mean()) for m in METHODS},
        "coverage_after_change": {m: float(hits[m][:, change_at:].mean()) if change_at < length
                                  else None for m in METHODS},
        "stream_coverage_sd": {m: float(hits[m].mean(axis=1).std()) for m in METHODS},
        "aci_bound": bound,
        "aci_worst_stream_gap": float(np.max(np.abs((~hits["adaptive"]).mean(axis=1) - alpha))),
        "adaptive_level_final_third": {
            "mean": float(tail.mean()),
            "mean_abs_displacement": float(np.mean(np.abs(tail - alpha))),
            "compensating_streams": int(np.sum(np.abs(tail - alpha) > margin)),
            "margin": margin,
        },
    }
    return result


def format_table(results: list[dict]) -> str:
    """A Markdown table of long-run coverage per scenario and method."""
    lines = ["| scenario | " + " | ".join(METHODS)
             + " | adaptive level (final third) | compensating streams |",
             "|---|" + "---|" * len(METHODS) + "---|---|"]
    for r in results:
        cells = [f"{r['coverage'][m]:.3f}" for m in METHODS]
        level = r["adaptive_level_final_third"]
        lines.append(f"| {r['scenario']} | " + " | ".join(cells)
                     + f" | {level['mean']:.3f} | {level['compensating_streams']}/{r['streams']} |")
    return "\n".join(lines) + "\n"
