"""Serving a certificate: how many passages to send, and whether to answer at all.

Pure Python (no numpy) so that any serving path can port it line for line.  A guarantee is
a property of one procedure: the calibrator computes its held-out figures through these
very functions, and golden vectors in the tests pin them.

Context size (split conformal with adaptive sets, Romano, Sesia & Candes, NeurIPS 2020):
the stage's scores, in the order the stage ranks them and truncated to ``k_max``, become
probabilities by a softmax at the certificate's temperature; ``C_j`` is the cumulative mass
of ranks ``1..j``.  The set is every rank whose cumulative mass stays within the threshold,
and never less than the top candidate: ``size = max(1, #{j <= m : C_j <= threshold})``, the
whole list of ``m`` candidates when ``threshold >= 1``.  The calibrator's nonconformity is
the cumulative mass through the first relevant candidate (0 when it is ranked first, since
the top candidate is always sent), so a query is covered exactly when its nonconformity is
``<= threshold``: the conformal guarantee is neither lost nor wasted on the rule.

Abstention (risk-controlling thresholds, Bates et al., JACM 2021): answer when the score of
the top-ranked candidate is at least the certified ``lambda``.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

#: most candidates a calibration row records and a coverage certificate ever sends
from harness.claims.calibration import K_MAX


def _finite_scores(scores: Sequence[float]) -> list[float]:
    values = []
    for i, value in enumerate(scores):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"scores[{i}] must be a number, got {value!r}")
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"scores[{i}] must be finite, got {value!r}")
        values.append(value)
    return values


def cumulative_mass(scores: Sequence[float], temperature: float, k_max: int = K_MAX) -> list[float]:
    """``C_1..C_m``: cumulative softmax mass of the first ``m = min(len, k_max)`` scores."""
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) \
            or not math.isfinite(temperature) or temperature <= 0:
        raise ValueError(f"temperature must be a positive finite number, got {temperature!r}")
    values = _finite_scores(list(scores)[:k_max])
    if not values:
        return []
    top = max(values)
    weights = [math.exp((v - top) / temperature) for v in values]
    total = math.fsum(weights)
    mass, running = [], 0.0
    for w in weights:
        running += w / total
        mass.append(running)
    return mass


def coverage_parameters(certificate: Mapping) -> tuple[float, float, int]:
    """``(threshold, temperature, k_max)`` of a servable coverage certificate, or ValueError."""
    if not isinstance(certificate, Mapping) or certificate.get("kind") != "certificate":
        raise ValueError("not a certificate document (kind must be 'certificate')")
    if certificate.get("type") != "coverage":
        raise ValueError(f"set_size needs a coverage certificate, got type {certificate.get('type')!r}")
    threshold = certificate.get("threshold")
    if threshold is None:
        raise ValueError("the coverage certificate is degenerate (no threshold was certified): "
                         "keep serving the fixed top-K")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) \
            or not math.isfinite(threshold) or threshold < 0:
        raise ValueError(f"certificate field 'threshold' must be a finite number >= 0, got {threshold!r}")
    k_max = certificate.get("k_max")
    if isinstance(k_max, bool) or not isinstance(k_max, int) or k_max < 1:
        raise ValueError(f"certificate field 'k_max' must be a positive integer, got {k_max!r}")
    return float(threshold), certificate.get("temperature"), k_max


def size_from_mass(mass: Sequence[float], threshold: float) -> int:
    """``max(1, #{j : C_j <= threshold})`` (``m`` when threshold >= 1); 0 with no candidates."""
    if not mass:
        return 0
    if threshold >= 1.0:
        return len(mass)
    size = 0
    for value in mass:
        if value > threshold:
            break
        size += 1
    return max(1, size)


def set_size(scores: Sequence[float], certificate: Mapping) -> int:
    """How many of ``scores`` (stage order) to send, under a coverage certificate."""
    threshold, temperature, k_max = coverage_parameters(certificate)
    return size_from_mass(cumulative_mass(scores, temperature, k_max), threshold)


def risk_parameters(certificate: Mapping) -> float:
    """The certified ``lambda`` of a servable risk certificate, or ValueError."""
    if not isinstance(certificate, Mapping) or certificate.get("kind") != "certificate":
        raise ValueError("not a certificate document (kind must be 'certificate')")
    if certificate.get("type") != "risk":
        raise ValueError(f"should_answer needs a risk certificate, got type {certificate.get('type')!r}")
    lam = certificate.get("lambda")
    if lam is None:
        raise ValueError("the risk certificate is degenerate (only abstaining on everything was "
                         "certified): it must not be served")
    if isinstance(lam, bool) or not isinstance(lam, (int, float)) or not math.isfinite(lam):
        raise ValueError(f"certificate field 'lambda' must be a finite number, got {lam!r}")
    return float(lam)


def should_answer(scores: Sequence[float], certificate: Mapping) -> bool:
    """Answer from context when the top-ranked candidate's score is >= the certified lambda."""
    lam = risk_parameters(certificate)
    values = _finite_scores(list(scores)[:1])
    return bool(values) and values[0] >= lam
