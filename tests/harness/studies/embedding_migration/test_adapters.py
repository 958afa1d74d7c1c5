"""Adapters on constructed data whose right answer is known, the ridge solution against an
independent least-squares formulation, and the near-tie rule by hand."""

from __future__ import annotations

import numpy as np
import pytest

from harness.studies.embedding_migration import adapters
from harness.retrieval.embeddings.models import rotation_matrix


def _data(n=300, d=8, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d))


def test_procrustes_recovers_a_rotation_and_a_shift():
    x = _data()
    rotation = rotation_matrix(8, 3)
    shift = np.arange(8) / 10
    y = x @ rotation + shift
    fitted = adapters.fit_procrustes(x, y)
    assert np.allclose(fitted.weight, rotation, atol=1e-10)
    assert np.allclose(fitted.apply(x), y, atol=1e-10)
    # parameters: an orthogonal 8x8 map has 8*7/2 = 28 degrees of freedom, plus 8 + 8 means
    assert fitted.parameters == 28 + 16


def test_procrustes_zero_pads_differing_dimensions():
    # OLD (6 dims) = NEW (4 dims) zero-padded to 6, then rotated: exactly representable
    x = _data(d=4)
    rotation = rotation_matrix(6, 5)
    padded = np.hstack([x, np.zeros((len(x), 2))])
    y = padded @ rotation
    fitted = adapters.fit_procrustes(x, y)
    assert fitted.weight.shape == (4, 6)
    assert np.allclose(fitted.apply(x), y, atol=1e-10)
    # the other way round (NEW wider than OLD): NEW is OLD (3 dims) zero-padded to 4 and
    # rotated, so rotating back and dropping the padding is exact
    z = x[:, :3]
    wide = np.hstack([z, np.zeros((len(z), 1))]) @ rotation_matrix(4, 6)
    fitted = adapters.fit_procrustes(wide, z)
    assert fitted.weight.shape == (4, 3)
    assert np.allclose(fitted.apply(wide), z, atol=1e-10)


def test_ridge_matches_an_independent_least_squares_formulation():
    # ridge = ordinary least squares on the data stacked over sqrt(lambda) I (Hoerl &
    # Kennard's penalty written as extra rows), solved by numpy's lstsq
    rng = np.random.default_rng(2)
    x = _data(n=120, d=5)
    y = x @ rng.standard_normal((5, 3)) + 0.1 * rng.standard_normal((120, 3))
    alpha = 0.01
    fitted = adapters.fit_ridge(x, y, alpha)
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    lam = alpha * np.sum(xc ** 2) / 5
    assert dict(fitted.hyper)["lambda"] == pytest.approx(lam, rel=1e-12)
    stacked_x = np.vstack([xc, np.sqrt(lam) * np.eye(5)])
    stacked_y = np.vstack([yc, np.zeros((5, 3))])
    expected, *_ = np.linalg.lstsq(stacked_x, stacked_y, rcond=None)
    assert np.allclose(fitted.weight, expected, atol=1e-10)
    assert fitted.parameters == 5 * 3 + 5 + 3


def test_the_low_rank_map_has_its_rank_and_recovers_a_low_rank_truth():
    rng = np.random.default_rng(3)
    x = _data(n=400, d=10)
    truth = rng.standard_normal((10, 2)) @ rng.standard_normal((2, 7))   # rank 2
    y = x @ truth
    fitted = adapters.fit_lowrank(x, y, rank=2, alpha=1e-9)
    assert np.linalg.matrix_rank(fitted.weight, tol=1e-8) == 2
    assert np.allclose(fitted.apply(x), y, atol=1e-6)
    # free parameters of a rank-r d_new x d_old matrix: r (d_new + d_old - r)
    assert fitted.parameters == 2 * (10 + 7 - 2) + 10 + 7
    with pytest.raises(ValueError, match="rank must be in 1..6"):
        adapters.fit_lowrank(x, y, rank=7, alpha=0.1)


def test_tuning_tries_ranks_below_the_smaller_dimension_only():
    x, y = _data(n=200, d=40), _data(n=200, d=20, seed=4)
    tuned = adapters.tune(x[:150], y[:150], x[150:], y[150:])
    assert [g["rank"] for g in tuned["lowrank"]["grid"]] == [8, 16]
    assert [g["alpha"] for g in tuned["ridge"]["grid"]] == list(adapters.RIDGE_ALPHAS)
    best = min(tuned["ridge"]["grid"], key=lambda g: g["validation_mse"])
    assert tuned["ridge"]["hyper"] == {"alpha": best["alpha"]}
    # no rank below min(d_new, d_old) = 4: no low-rank candidate
    assert "lowrank" not in adapters.tune(x[:150, :4], y[:150, :4], x[150:, :4], y[150:, :4])


def test_the_near_tie_rule_prefers_fewer_parameters():
    candidates = [{"name": "ridge", "retention": 0.950, "parameters": 100},
                  {"name": "lowrank", "retention": 0.945, "parameters": 50},
                  {"name": "procrustes", "retention": 0.930, "parameters": 10}]
    # best 0.950; 0.945 is within 0.01 and smaller; 0.930 is 0.02 behind: out
    assert adapters.choose(candidates)["name"] == "lowrank"
    assert adapters.choose(candidates, band=0.0)["name"] == "ridge"
    assert adapters.choose(candidates, band=0.05)["name"] == "procrustes"
    with pytest.raises(ValueError):
        adapters.choose([])
    with pytest.raises(ValueError, match="unknown adapter 'pca'"):
        adapters.fit("pca", _data(), _data(), {})
