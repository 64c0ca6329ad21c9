"""Tests of the Lemma-1 estimating-function fit (docs/theory.md §5)."""

import numpy as np
import pytest
import xarray as xr
from scipy import optimize, stats

from cvstats.across.lemma1 import fit_lemma1
from cvstats.errors import ArgumentError, CvstatsTypeError, DesignError, ZeroVarianceWarning
from cvstats.kernels.lemma1 import (
    lemma1_bread,
    lemma1_components,
    lemma1_estimating_function,
    lemma1_fit,
    political_ratio_from_rho,
)
from cvstats.kernels.political import political_ratio_corrected


def equicorrelated(rng, shape, beta, delta, pi):
    """Gaussian rows (..., N, K) with mean beta, variance delta, correlation pi."""
    common = rng.normal(size=(*shape[:-1], 1))
    own = rng.normal(size=shape)
    return beta + np.sqrt(delta) * (np.sqrt(pi) * common + np.sqrt(1 - pi) * own)


# ---------------------------------------------------------------------------
# an independent implementation of docs/theory.md §5, written with explicit loops
# ---------------------------------------------------------------------------


def g_loop(T, theta):
    """Σ_i g_i(θ) and the list of g_i, one row at a time."""
    beta, delta, pi = theta
    N, K = T.shape
    rows = []
    for i in range(N):
        tbar = sum(T[i]) / K
        g1 = tbar - beta
        g2 = sum((T[i, k] - beta) ** 2 - delta for k in range(K))
        g3 = (tbar - beta) ** 2 - delta * (pi + (1 - pi) / K)
        rows.append(np.array([g1, g2, g3]))
    return sum(rows), rows


def observed_minus_jacobian(T, theta):
    """-∂(Σ_i g_i)/∂θ, every partial derivative written out (β terms included)."""
    beta, delta, pi = theta
    N, K = T.shape
    J = np.zeros((3, 3))
    for i in range(N):
        tbar = T[i].mean()
        # g1 = tbar - beta
        J[0] += [-1.0, 0.0, 0.0]
        # g2 = Σ_k (T_ik - beta)^2 - K delta
        J[1] += [sum(-2 * (T[i, k] - beta) for k in range(K)), -K, 0.0]
        # g3 = (tbar - beta)^2 - delta (pi + (1 - pi)/K)
        J[2] += [-2 * (tbar - beta), -(pi + (1 - pi) / K), -delta * (1 - 1 / K)]
    return -J


def independent_fit(T):
    """Root of Σ g_i by scipy from a perturbed start; sandwich with loop-built A and B."""
    N, K = T.shape
    start = np.array([T.mean() + 0.3, T.var() * 1.7, 0.2])
    sol = optimize.root(lambda th: g_loop(T, th)[0], start, method="hybr", tol=1e-14)
    # hybr may stop with "xtol too small" once at machine precision: check the residual
    assert np.abs(sol.fun).max() < 1e-13
    theta = sol.x
    _, rows = g_loop(T, theta)
    B = np.zeros((3, 3))
    for g in rows:
        B += np.outer(g, g)
    A = observed_minus_jacobian(T, theta)
    Ainv = np.linalg.inv(A)
    return theta, Ainv @ B @ Ainv.T, A


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_matches_independent_implementation(seed):
    rng = np.random.default_rng(seed)
    N, K = 37, 6
    T = equicorrelated(rng, (N, K), beta=0.3, delta=0.05, pi=0.4)
    theta, V, A_observed = independent_fit(T)
    fit = lemma1_fit(T)
    np.testing.assert_allclose(fit.theta, theta, rtol=1e-10, atol=0)
    np.testing.assert_allclose(fit.cov, V, rtol=1e-10, atol=1e-10 * np.abs(V).max())
    # the expected A of docs/theory.md §5 equals the observed one at the root
    np.testing.assert_allclose(lemma1_bread(fit.theta, N, K), A_observed, rtol=1e-10, atol=1e-9)


def test_bread_matches_finite_differences():
    rng = np.random.default_rng(5)
    T = equicorrelated(rng, (50, 4), beta=1.0, delta=2.0, pi=0.3)
    theta = lemma1_fit(T).theta
    h = 1e-4 * np.maximum(np.abs(theta), 1.0)
    A_fd = np.zeros((3, 3))
    for j in range(3):
        up, down = theta.copy(), theta.copy()
        up[j] += h[j]
        down[j] -= h[j]
        diff = lemma1_estimating_function(T, up).sum(0) - lemma1_estimating_function(T, down).sum(
            0
        )
        A_fd[:, j] = -diff / (2 * h[j])
    np.testing.assert_allclose(lemma1_bread(theta, 50, 4), A_fd, rtol=1e-6, atol=1e-6)


def test_estimating_equations_vanish_at_the_solution():
    rng = np.random.default_rng(3)
    T = equicorrelated(rng, (4, 30, 8), beta=-1.0, delta=0.5, pi=0.2)
    fit = lemma1_fit(T)
    g = lemma1_estimating_function(T, fit.theta)
    assert g.shape == (4, 30, 3)
    scale = np.abs(g).max(axis=(-2, -1), keepdims=True)[..., 0]
    np.testing.assert_allclose(g.sum(axis=-2) / scale, 0.0, atol=1e-12)


def test_beta_stderr_reduces_to_row_means():
    rng = np.random.default_rng(4)
    T = equicorrelated(rng, (3, 25, 5), beta=0.0, delta=1.0, pi=0.5)
    N = T.shape[-2]
    tbar = T.mean(axis=-1)
    expected = np.sqrt(((tbar - tbar.mean(axis=-1, keepdims=True)) ** 2).sum(-1) / N**2)
    np.testing.assert_allclose(lemma1_fit(T).stderr[..., 0], expected, rtol=1e-12)


def test_closed_form_estimates():
    rng = np.random.default_rng(6)
    T = rng.normal(size=(20, 7))
    K = 7
    beta = T.mean()
    delta = ((T - beta) ** 2).mean()
    v = ((T.mean(1) - beta) ** 2).mean()
    expected = [beta, delta, (K * v / delta - 1) / (K - 1)]
    np.testing.assert_allclose(lemma1_fit(T).theta, expected, rtol=1e-12)


def test_batch_equals_loop_over_slices():
    rng = np.random.default_rng(7)
    T = equicorrelated(rng, (2, 3, 40, 5), beta=0.5, delta=1.0, pi=0.3)
    fit = lemma1_fit(T)
    for idx in np.ndindex(2, 3):
        one = lemma1_fit(T[idx])
        np.testing.assert_allclose(fit.theta[idx], one.theta, rtol=1e-13)
        np.testing.assert_allclose(fit.cov[idx], one.cov, rtol=1e-12)


def test_recovers_known_parameters():
    rng = np.random.default_rng(8)
    truth = np.array([2.0, 0.7, 0.35])
    T = equicorrelated(rng, (20000, 6), *truth)
    fit = lemma1_fit(T)
    assert np.all(np.abs(fit.theta - truth) < 4 * fit.stderr)
    np.testing.assert_allclose(fit.theta, truth, rtol=0.03)


def test_interval_coverage_near_nominal():
    # 1000 replications x N = 200 datasets x K = 10 members, as one batch.
    # Measured (seed 11): beta 0.950, delta 0.952, pi 0.948. Binomial sd ~0.007;
    # the band allows 3 sd plus 1 % of finite-N sandwich undercoverage.
    rng = np.random.default_rng(11)
    truth = np.array([0.25, 0.01, 0.3])
    T = equicorrelated(rng, (1000, 200, 10), *truth)
    values = xr.DataArray(T, dims=("replication", "dataset", "split"))
    fit = fit_lemma1(values, "dataset", "split", alpha=0.05)
    for name, true in zip(["beta", "delta", "pi"], truth, strict=True):
        ci = fit[f"{name}_ci"]
        covered = (ci.sel(ci_bound="lower") <= true) & (true <= ci.sel(ci_bound="upper"))
        rate = float(covered.mean())
        assert 0.92 <= rate <= 0.971, (name, rate)


def test_components_delta_method():
    rng = np.random.default_rng(9)
    T = equicorrelated(rng, (3, 60, 4), beta=1.0, delta=2.0, pi=0.4)
    fit = lemma1_fit(T)
    comps = lemma1_components(T)
    beta, delta, pi = np.moveaxis(fit.theta, -1, 0)
    np.testing.assert_allclose(comps.gamma, pi * delta)
    np.testing.assert_allclose(comps.within, delta - pi * delta)
    np.testing.assert_allclose(comps.gamma + comps.within, comps.delta)
    for b in range(3):
        V = fit.cov[b]
        grad_gamma = np.array([0.0, pi[b], delta[b]])
        grad_within = np.array([0.0, 1 - pi[b], -delta[b]])
        assert comps.gamma_se[b] == pytest.approx(np.sqrt(grad_gamma @ V @ grad_gamma))
        assert comps.within_se[b] == pytest.approx(np.sqrt(grad_within @ V @ grad_within))
    np.testing.assert_allclose(comps.pi_se, fit.stderr[..., 2])


def test_zero_variance_warns_and_gives_nan():
    T = np.stack([np.ones((5, 3)), np.arange(15.0).reshape(5, 3)])
    with pytest.warns(ZeroVarianceWarning, match="δ̂ = 0"):
        fit = lemma1_fit(T)
    assert np.isnan(fit.theta[0, 2]) and np.isnan(fit.cov[0]).all()
    assert np.isfinite(fit.cov[1]).all()


@pytest.mark.parametrize(
    ("T", "error", "match"),
    [
        (np.ones((1, 4)), DesignError, "at least 2 independent rows"),
        (np.ones((4, 1)), DesignError, "at least 2 members"),
        (np.ones(4), ArgumentError, "at least 2 dimension"),
        (np.array([[1.0, np.nan], [2.0, 3.0]]), ArgumentError, "NaN or infinite"),
    ],
)
def test_kernel_errors(T, error, match):
    with pytest.raises(error, match=match):
        lemma1_fit(T)


def test_political_ratio_from_rho():
    rho = np.array([0.0, 0.1, 0.5, 0.9])
    np.testing.assert_allclose(
        political_ratio_from_rho(rho, 15, 90, 10), political_ratio_corrected(15, rho, 90, 10)
    )
    # ρ0 = n2/(n1+n2) gives exactly 1
    assert political_ratio_from_rho(0.1, 15, 90, 10) == pytest.approx(1.0)
    clipped = political_ratio_from_rho([-0.2, 1.0, 1.3, np.nan], 15, 90, 10)
    assert clipped[0] == pytest.approx(political_ratio_corrected(15, 0.0, 90, 10))
    assert np.isinf(clipped[1]) and np.isinf(clipped[2]) and np.isnan(clipped[3])


# ---------------------------------------------------------------------------
# the xarray wrapper
# ---------------------------------------------------------------------------


@pytest.fixture
def rows():
    rng = np.random.default_rng(12)
    values = equicorrelated(rng, (2, 50, 6), beta=0.2, delta=0.3, pi=0.25)
    return xr.DataArray(
        values,
        dims=("model", "dataset", "split"),
        coords={"model": ["a", "b"], "dataset": np.arange(50)},
        name="mu",
        attrs={"design": "x"},
    )


def test_wrapper_structure(rows):
    fit = fit_lemma1(rows, "dataset", "split", alpha=0.1)
    assert set(fit.data_vars) == {
        f"{p}{s}" for p in ("beta", "delta", "pi") for s in ("", "_se", "_ci")
    }
    assert fit["pi"].dims == ("model",)
    assert fit["pi_ci"].dims == ("model", "ci_bound")
    assert fit.ci_bound.values.tolist() == ["lower", "upper"]
    assert fit.model.values.tolist() == ["a", "b"]
    assert fit.attrs["alpha"] == 0.1 and fit.attrs["N"] == 50 and fit.attrs["K"] == 6
    assert fit["pi"].attrs == {}
    z = stats.norm.isf(0.05)
    np.testing.assert_allclose(
        fit["beta_ci"].sel(ci_bound="upper"), fit["beta"] + z * fit["beta_se"], rtol=1e-12
    )


def test_wrapper_equals_kernel_per_slice_and_dim_order(rows):
    fit = fit_lemma1(rows, "dataset", "split")
    # members first, samples second, batch last: same numbers
    swapped = fit_lemma1(rows.transpose("split", "model", "dataset"), "dataset", "split")
    xr.testing.assert_allclose(fit.dataset, swapped.dataset)
    for m in ["a", "b"]:
        k = lemma1_fit(rows.sel(model=m).values)
        np.testing.assert_allclose(fit["pi"].sel(model=m), k.theta[2], rtol=1e-13)
        np.testing.assert_allclose(fit["delta_se"].sel(model=m), k.stderr[1], rtol=1e-13)


def test_wrapper_is_lazy_on_dask(rows):
    pytest.importorskip("dask")
    lazy = fit_lemma1(rows.chunk({"model": 1}), "dataset", "split")
    assert lazy["pi_ci"].chunks is not None
    xr.testing.assert_allclose(
        lazy.compute().dataset, fit_lemma1(rows, "dataset", "split").dataset
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"dataset_dim": "nope", "member_dim": "split"}, ArgumentError, "`dataset_dim` = 'nope'"),
        ({"dataset_dim": "dataset", "member_dim": "x"}, ArgumentError, "`member_dim` = 'x'"),
        ({"dataset_dim": "split", "member_dim": "split"}, ArgumentError, "must differ"),
        ({"dataset_dim": "dataset", "member_dim": "split", "alpha": 1.5}, ArgumentError, "alpha"),
        ({"dataset_dim": "dataset"}, ArgumentError, "`member_dim` is required"),
    ],
)
def test_wrapper_argument_errors(rows, kwargs, error, match):
    with pytest.raises(error, match=match):
        fit_lemma1(rows, **kwargs)


def test_sample_dim_is_the_old_name_of_dataset_dim(rows):
    # issue 27: one name for the dim of the datasets across the API; the old keyword
    # keeps working with a FutureWarning and gives the same fit
    rows = rows.rename(dataset="study")
    new = fit_lemma1(rows, dataset_dim="study", member_dim="split")
    with pytest.warns(FutureWarning, match="`sample_dim=` is now called `dataset_dim=`") as rec:
        old = fit_lemma1(rows, sample_dim="study", member_dim="split")
    assert rec[0].filename == __file__  # the warning points at the caller's line
    xr.testing.assert_identical(old.dataset, new.dataset)
    default = fit_lemma1(rows.rename(study="dataset"), member_dim="split")  # "dataset"
    assert default.attrs["N"] == new.attrs["N"] == 50
    with pytest.raises(ArgumentError, match="give `dataset_dim` only"):
        fit_lemma1(rows, "study", "split", sample_dim="study")


def test_wrapper_size_and_value_errors(rows):
    with pytest.raises(DesignError, match="at least 2 independent rows along `dataset`"):
        fit_lemma1(rows.isel(dataset=[0]), "dataset", "split")
    with pytest.raises(DesignError, match="at least 2 members along `split`"):
        fit_lemma1(rows.isel(split=[0]), "dataset", "split")
    with pytest.raises(ArgumentError, match="NaN"):
        fit_lemma1(rows.where(rows.dataset != 3), "dataset", "split")
    with pytest.raises(CvstatsTypeError, match="xarray.DataArray"):
        fit_lemma1(rows.values, "dataset", "split")
