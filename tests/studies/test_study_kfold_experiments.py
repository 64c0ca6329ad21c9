"""Bengio & Grandvalet's experiments 1 and 2 (docs/studies.md §E)."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from cvstats.errors import ArgumentError  # noqa: E402
from cvstats.studies.kfold_experiments import (  # noqa: E402
    _kfold_errors,
    experiment1,
    experiment1_figure,
    experiment2,
    experiment2_figure,
    ols_coefficients,
    simulate,
)


@pytest.mark.parametrize("outliers", [False, True])
def test_simulate_has_unit_scale_and_r2(outliers):
    x, y = simulate(np.random.default_rng(0), (200_000,), d=30, outliers=outliers)
    signal = np.sqrt(3 / 30) * x.sum(-1)
    if outliers:
        signal = signal / np.sqrt(0.95 + 100 * 0.05)
    assert y.var() == pytest.approx(4.0, rel=0.03)
    assert signal.var() / y.var() == pytest.approx(0.75, abs=0.02)


def test_batched_kfold_ols_matches_lstsq():
    n, K, d = 40, 4, 5
    e = _kfold_errors(np.random.default_rng(1), 2, n, K, d, False)
    x, y = simulate(np.random.default_rng(1), (2, n), d=d)
    for b in range(2):
        Z = np.column_stack([np.ones(n), x[b]])
        for k in range(K):
            test = np.arange(k * n // K, (k + 1) * n // K)
            train = np.setdiff1d(np.arange(n), test)
            beta = np.linalg.lstsq(Z[train], y[b, train], rcond=None)[0]
            np.testing.assert_allclose(e[b, test], (y[b, test] - Z[test] @ beta) ** 2, rtol=1e-8)
    Z = np.column_stack([np.ones(n), x[0]])
    np.testing.assert_allclose(
        ols_coefficients(Z.T @ Z, Z.T @ y[0]), np.linalg.lstsq(Z, y[0], rcond=None)[0]
    )


def test_experiment1_theta2_unbiased_theta1_low(tmp_path):
    ds = experiment1((60, 120), replicates=400, seed=2)
    assert (ds["ratio1"] < 0.9).all()
    assert np.all(np.abs(ds["ratio2"] - 1) < 4 * ds["ratio2_se"])
    np.testing.assert_allclose(ds["ratio1_moments"], ds["ratio1"], rtol=1e-8)
    np.testing.assert_allclose(ds["ratio2_moments"], ds["ratio2"], rtol=1e-8)
    assert np.all(np.abs(ds["gamma"]) < 0.05 * ds["sigma2"])  # independent test sets
    experiment1_figure(ds, path=tmp_path / "e1.png")
    assert (tmp_path / "e1.png").exists()


def test_experiment2_decomposition(tmp_path):
    by_n = experiment2((60, 120), K=10, replicates=100)
    np.testing.assert_allclose(by_n["theta"], by_n["empirical_var"], rtol=1e-8)
    total = sum(by_n[f"contribution_{c}"] for c in ("sigma2", "omega", "gamma"))
    np.testing.assert_allclose(total, by_n["theta"], rtol=1e-8)
    assert list(by_n["n_train"].values.ravel()) == [54, 108]
    by_k = experiment2((120,), K=(5, 7, 10), replicates=50, outliers=True)
    assert np.isnan(by_k["theta"].sel(K=7)).all() and np.isfinite(by_k["theta"].sel(K=10)).all()
    experiment2_figure({"regression": by_n}, path=tmp_path / "e2.png")
    experiment2_figure({"outliers": by_k}, against="K", path=tmp_path / "e2k.png")
    assert (tmp_path / "e2.png").exists() and (tmp_path / "e2k.png").exists()
    with pytest.raises(ArgumentError):
        experiment2((10,))
