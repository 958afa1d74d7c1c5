"""Adapters from NEW's query space into OLD's document space, fitted on document pairs.

Every adapter is affine on centred data: ``adapt(x) = (x - mean_new) @ W + mean_old``, with
the means taken over the fitting pairs (NEW's and OLD's vectors of the same documents).

* **Orthogonal Procrustes** (Schoenemann 1966, Psychometrika 31:1-10): ``W`` orthogonal,
  minimising ``||X W - Y||_F``; ``scipy.linalg.orthogonal_procrustes``.  When the two
  dimensions differ the smaller side is zero-padded to the larger, and the solution's
  first ``d_new`` rows and ``d_old`` columns are kept.
* **Ridge linear map** (Hoerl & Kennard 1970, Technometrics 12:55-67), closed form
  ``W = (X'X + lambda I)^-1 X'Y``.  ``lambda = alpha * trace(X'X) / d_new``, ``alpha`` from
  :data:`RIDGE_ALPHAS`, chosen by mean squared error on a validation split of the pairs.
* **Low-rank map**: reduced-rank regression (Izenman 1975, J. Multivariate Analysis
  5:248-264) on the ridge solution: ``W_r = W V_r V_r'`` with ``V_r`` the top ``r`` right
  singular vectors of the fitted values ``X W`` (rank-constrained least squares), ``r``
  from :data:`RANKS` below ``min(d_new, d_old)``, chosen by validation error.

Which adapter a study uses is chosen by measured retention (:func:`choose`), not by fitting
error: the candidate with the highest validation retention wins, except that any candidate
within :data:`NEAR_TIE_BAND` of it and with fewer free parameters wins instead (the
simpler map, when the data cannot tell them apart).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

#: ridge strength relative to the average variance per input dimension
RIDGE_ALPHAS: tuple[float, ...] = (1e-4, 1e-3, 1e-2, 1e-1, 1.0)
#: candidate ranks of the low-rank map (only those below min(d_new, d_old) are tried)
RANKS: tuple[int, ...] = (8, 16, 32, 64, 128, 256, 512)
#: retention within this much of the best counts as a tie; fewer parameters then wins
NEAR_TIE_BAND = 0.01
#: the adapter families, in the order they are reported
ADAPTERS: tuple[str, ...] = ("procrustes", "ridge", "lowrank")


@dataclass(frozen=True)
class Adapter:
    """A fitted affine map NEW -> OLD."""

    name: str
    weight: np.ndarray = field(repr=False)
    mean_new: np.ndarray = field(repr=False)
    mean_old: np.ndarray = field(repr=False)
    #: free parameters: of the linear part, plus the two centring means
    parameters: int
    #: hyper-parameters as chosen (``alpha``/``lambda`` for ridge, ``rank`` for low-rank)
    hyper: tuple[tuple[str, float], ...] = ()

    def apply(self, vectors: np.ndarray) -> np.ndarray:
        """NEW vectors (n, d_new) -> OLD space (n, d_old), float64."""
        x = np.asarray(vectors, dtype=np.float64)
        return (x - self.mean_new) @ self.weight + self.mean_old

    def describe(self) -> dict:
        return {"name": self.name, "parameters": self.parameters, "hyper": dict(self.hyper)}


def _centred(x: np.ndarray, y: np.ndarray):
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 2 or y.ndim != 2 or len(x) != len(y):
        raise ValueError(f"adapter pairs: expected two 2-d arrays with the same number of rows, "
                         f"got {x.shape} and {y.shape}")
    if len(x) < 2:
        raise ValueError("adapter pairs: at least two document pairs are needed")
    mx, my = x.mean(axis=0), y.mean(axis=0)
    return x - mx, y - my, mx, my


def fit_procrustes(x: np.ndarray, y: np.ndarray) -> Adapter:
    """Orthogonal Procrustes on centred pairs, zero-padding the smaller dimension."""
    from scipy.linalg import orthogonal_procrustes

    xc, yc, mx, my = _centred(x, y)
    d_new, d_old = xc.shape[1], yc.shape[1]
    dim = max(d_new, d_old)
    xp = np.zeros((len(xc), dim))
    yp = np.zeros((len(yc), dim))
    xp[:, :d_new] = xc
    yp[:, :d_old] = yc
    rotation, _ = orthogonal_procrustes(xp, yp)
    return Adapter("procrustes", rotation[:d_new, :d_old], mx, my,
                   dim * (dim - 1) // 2 + d_new + d_old)


def ridge_weight(xc: np.ndarray, yc: np.ndarray, lam: float) -> np.ndarray:
    """``(X'X + lam I)^-1 X'Y`` (closed form, solved rather than inverted)."""
    gram = xc.T @ xc
    gram[np.diag_indices_from(gram)] += lam
    return np.linalg.solve(gram, xc.T @ yc)


def ridge_lambda(xc: np.ndarray, alpha: float) -> float:
    """``alpha x`` the average variance-sum per input dimension (``trace(X'X) / d``)."""
    return float(alpha * np.einsum("ij,ij->", xc, xc) / xc.shape[1])


def fit_ridge(x: np.ndarray, y: np.ndarray, alpha: float) -> Adapter:
    xc, yc, mx, my = _centred(x, y)
    lam = ridge_lambda(xc, alpha)
    weight = ridge_weight(xc, yc, lam)
    return Adapter("ridge", weight, mx, my, weight.size + len(mx) + len(my),
                   (("alpha", float(alpha)), ("lambda", lam)))


def fit_lowrank(x: np.ndarray, y: np.ndarray, rank: int, alpha: float) -> Adapter:
    """Reduced-rank regression: the ridge map projected onto the top ``rank`` directions
    of its fitted values."""
    xc, yc, mx, my = _centred(x, y)
    d_new, d_old = xc.shape[1], yc.shape[1]
    if not 0 < rank < min(d_new, d_old):
        raise ValueError(f"low-rank adapter: rank must be in 1..{min(d_new, d_old) - 1}, "
                         f"got {rank}")
    lam = ridge_lambda(xc, alpha)
    full = ridge_weight(xc, yc, lam)
    _, _, vt = np.linalg.svd(xc @ full, full_matrices=False)
    basis = vt[:rank].T
    weight = full @ basis @ basis.T
    return Adapter("lowrank", weight, mx, my, rank * (d_new + d_old - rank) + d_new + d_old,
                   (("alpha", float(alpha)), ("lambda", lam), ("rank", int(rank))))


def mse(adapter: Adapter, x: np.ndarray, y: np.ndarray) -> float:
    """Mean squared error per pair: ``mean ||adapt(x) - y||^2``."""
    diff = adapter.apply(x) - np.asarray(y, dtype=np.float64)
    return float(np.einsum("ij,ij->", diff, diff) / len(diff))


def tune(x_train, y_train, x_val, y_val) -> dict[str, dict]:
    """Each family's hyper-parameters chosen by validation error (lowest MSE; the first of
    equal ones in grid order).  Returns ``{name: {"hyper": {...}, "validation_mse": ..,
    "grid": [{...}, ...]}}``."""
    out: dict[str, dict] = {}
    procrustes = fit_procrustes(x_train, y_train)
    out["procrustes"] = {"hyper": {}, "validation_mse": mse(procrustes, x_val, y_val),
                         "grid": []}
    grid = []
    for alpha in RIDGE_ALPHAS:
        grid.append({"alpha": alpha, "validation_mse": mse(fit_ridge(x_train, y_train, alpha),
                                                           x_val, y_val)})
    best = min(grid, key=lambda g: g["validation_mse"])
    out["ridge"] = {"hyper": {"alpha": best["alpha"]}, "validation_mse": best["validation_mse"],
                    "grid": grid}
    limit = min(np.shape(x_train)[1], np.shape(y_train)[1])
    ranks = [r for r in RANKS if r < limit]
    if ranks:
        grid = [{"rank": r, "validation_mse": mse(fit_lowrank(x_train, y_train, r,
                                                              best["alpha"]), x_val, y_val)}
                for r in ranks]
        low = min(grid, key=lambda g: g["validation_mse"])
        out["lowrank"] = {"hyper": {"alpha": best["alpha"], "rank": low["rank"]},
                          "validation_mse": low["validation_mse"], "grid": grid}
    return out


def fit(name: str, x: np.ndarray, y: np.ndarray, hyper: dict) -> Adapter:
    """Fit family ``name`` with the given hyper-parameters."""
    if name == "procrustes":
        return fit_procrustes(x, y)
    if name == "ridge":
        return fit_ridge(x, y, hyper["alpha"])
    if name == "lowrank":
        return fit_lowrank(x, y, int(hyper["rank"]), hyper["alpha"])
    raise ValueError(f"unknown adapter {name!r}; expected one of {sorted(ADAPTERS)}")


def choose(candidates: Sequence[dict], band: float = NEAR_TIE_BAND) -> dict:
    """The candidate to use, from dicts with ``name``, ``retention`` and ``parameters``.

    Highest retention wins; every candidate within ``band`` of the best is a near-tie,
    and among near-ties the fewest parameters wins (then the name, for a total order).
    """
    if not candidates:
        raise ValueError("no adapter candidates to choose from")
    best = max(c["retention"] for c in candidates)
    tied = [c for c in candidates if c["retention"] >= best - band]
    return min(tied, key=lambda c: (c["parameters"], c["name"]))
