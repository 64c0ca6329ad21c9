"""K-fold variance components (docs/theory.md §7, Bengio & Grandvalet).

References are computed independently of cvstats: brute-force O(n²) sums
over index pairs straight from the definitions of s1, s2, s3 (eq. 9 of the
paper), explicit covariance matrices with the block structure of Corollary 1,
``tr(WΣ) + μ² 1ᵀW1`` for the expectation of a quadratic form, and Monte Carlo
simulations (Gaussian errors with an exact block covariance; OLS on the
Bengio–Grandvalet regression, docs/studies.md §E).
"""

import numpy as np
import pytest
import scipy.stats as st
import xarray as xr

import cvstats
from cvstats import ArgumentError, CubeError, DesignError, designs
from cvstats.across.kfold_variance import (
    kfold_errors,
    kfold_moments,
    kfold_statistics,
    quadratic_estimator_bias,
)
from cvstats.kernels import kfold as kk

# ---------------------------------------------------------------------------
# independent references
# ---------------------------------------------------------------------------


def brute_statistics(e, fold):
    """s1, s2, s3 from their definitions, with explicit double sums over pairs."""
    n = e.size
    K = np.unique(fold).size
    m = n // K
    s1 = sum(e[i] ** 2 for i in range(n)) / n
    if m == 1:  # leave-one-out: no within-block pair, s2 undefined
        within_norm = np.nan
    else:
        within_norm = n * (m - 1)
    within = between = 0.0
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            if fold[i] == fold[j]:
                within += e[i] * e[j]
            else:
                between += e[i] * e[j]
    return s1, within / within_norm, between / (n * (n - m)), e.mean()


def block_cov(fold, sigma2, omega, gamma):
    """Covariance of Corollary 1 for a fold assignment."""
    same = fold[:, None] == fold[None, :]
    cov = np.where(same, omega, gamma).astype(float)
    np.fill_diagonal(cov, sigma2)
    return cov


def random_folds(rng, n, K):
    return rng.permutation(np.arange(n) % K)


def kfold_cube(e, folds, *, models=None, name="loss"):
    """Cube with one K-fold run per dataset: e (N, n, M), folds (N, n) per-dataset."""
    N, n, M = e.shape
    K = int(folds.max()) + 1
    test = folds[:, None, :] == np.arange(K)[None, :, None]  # (N, K, n)
    losses = np.broadcast_to(e[:, None, :, :], (N, K, n, M))
    return cvstats.from_arrays(
        losses,
        test_mask=test,
        extra_dims=["dataset"],
        models=models,
        name=name,
        n_train=n - n // K,
        splits={"fold": np.arange(K), "repeat": np.zeros(K, dtype=int)},
        attrs={"design": "kfold"},
    )


# ---------------------------------------------------------------------------
# kernel: s1, s2, s3
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "K"), [(12, 3), (10, 5), (8, 8), (9, 3)])
def test_statistics_match_brute_force(n, K):
    rng = np.random.default_rng(n * K)
    e = rng.normal(1.0, 2.0, size=(3, 2, n))
    fold = np.stack([[random_folds(rng, n, K) for _ in range(2)] for _ in range(3)])
    got = kk.kfold_statistics(e, fold)
    for idx in np.ndindex(3, 2):
        ref = brute_statistics(e[idx], fold[idx])
        s1, s2, s3, mu = (np.asarray(x)[idx] for x in got)
        assert s1 == pytest.approx(ref[0], rel=1e-12)
        if n // K > 1:
            assert s2 == pytest.approx(ref[1], rel=1e-10)
        else:  # leave-one-out: no within-block pair
            assert np.isnan(s2)
        assert s3 == pytest.approx(ref[2], rel=1e-10, abs=1e-12)
        assert mu == pytest.approx(ref[3], rel=1e-12)


def test_statistics_identity_and_shared_fold():
    rng = np.random.default_rng(0)
    n, K = 30, 5
    m = n // K
    e = rng.gamma(2.0, size=(4, n))
    fold = random_folds(rng, n, K)  # one assignment broadcast over the batch
    s = kk.kfold_statistics(e, fold)
    np.testing.assert_allclose(s.s1 + (m - 1) * s.s2 + (n - m) * s.s3, n * s.mean**2, rtol=1e-12)
    # labels need not be 0..K-1
    s_lab = kk.kfold_statistics(e, 10 * fold + 7)
    np.testing.assert_allclose(np.array(s_lab), np.array(s), rtol=1e-14)


def test_statistics_errors():
    e = np.zeros(10)
    with pytest.raises(DesignError, match="K must divide n"):
        kk.kfold_statistics(e, np.arange(10) % 3)
    with pytest.raises(DesignError, match="every fold needs m = n/K = 5"):
        kk.kfold_statistics(e, np.r_[np.zeros(6), np.ones(4)].astype(int))
    with pytest.raises(DesignError, match="at least K = 2 folds"):
        kk.kfold_statistics(e, np.zeros(10, dtype=int))
    with pytest.raises(CubeError, match="must be finite"):
        kk.kfold_statistics(np.r_[np.nan, np.zeros(9)], np.arange(10) % 2)
    with pytest.raises(ArgumentError, match="integer fold labels"):
        kk.kfold_statistics(e, np.arange(10) % 2 + 0.5)
    with pytest.raises(ArgumentError, match="does not broadcast"):
        kk.kfold_statistics(e, np.arange(4) % 2)


# ---------------------------------------------------------------------------
# kernel: eq. (4), eigenvalues, admissible region
# ---------------------------------------------------------------------------


def test_eq4_and_eigenvalues_match_explicit_covariance():
    n, K = 12, 3
    m = n // K
    fold = kk.contiguous_folds(n, K)
    sigma2, omega, gamma = 2.0, 0.5, -0.1
    cov = block_cov(fold, sigma2, omega, gamma)
    c1, c2, c3, theta = kk.variance_components(sigma2, omega, gamma, n=n, K=K)
    assert theta == pytest.approx(cov.sum() / n**2, rel=1e-13)  # Var[mean] = 1ᵀΣ1/n²
    assert (c1, c2, c3) == pytest.approx((sigma2 / n, (m - 1) * omega / n, (n - m) * gamma / n))
    lam = kk.eigenvalues(sigma2, omega, gamma, n=n, K=K)
    evals = np.sort(np.linalg.eigvalsh(cov))
    expected = np.sort(np.repeat(lam, [n - K, K - 1, 1]))
    np.testing.assert_allclose(evals, expected, rtol=1e-12)
    assert lam[2] == pytest.approx(n * theta)


def test_admissible_region_is_psd_and_nonnegative_omega():
    n, K = 12, 4
    rng = np.random.default_rng(1)
    fold = kk.contiguous_folds(n, K)
    for _ in range(300):
        sigma2 = 1.0
        omega, gamma = rng.uniform(-0.3, 1.2), rng.uniform(-0.4, 1.0)
        psd = np.linalg.eigvalsh(block_cov(fold, sigma2, omega, gamma)).min() >= -1e-12
        assert bool(kk.admissible(sigma2, omega, gamma, n=n, K=K)) == (psd and omega >= 0)
    # the bounds themselves are inside
    base = 1.0 + (n // K - 1) * 0.5
    assert kk.admissible(1.0, 0.5, [base / (n // K), -base / (n - n // K)], n=n, K=K).all()


def test_n_k_validation():
    with pytest.raises(DesignError, match="K must divide n"):
        kk.variance_components(1.0, 0.0, 0.0, n=10, K=3)
    with pytest.raises(ArgumentError, match="`K` must be an int"):
        kk.eigenvalues(1.0, 0.0, 0.0, n=10, K=2.0)


# ---------------------------------------------------------------------------
# kernel: moments from replicates
# ---------------------------------------------------------------------------


def test_moments_closed_form_equals_centred_covariance_average():
    """σ̂², ω̂, γ̂ = class averages of (e_i - μ̄)(e_j - μ̄) plus V/N (docstring claim)."""
    rng = np.random.default_rng(2)
    N, n, K = 7, 6, 3
    e = rng.normal(3.0, 1.0, size=(N, n))
    folds = np.stack([random_folds(rng, n, K) for _ in range(N)])
    mom = kk.kfold_moments(e, folds)
    mubar = e.mean()
    mu_r = e.mean(1)
    V = mu_r.var(ddof=1)
    diag, within, between = [], [], []
    for r in range(N):
        c = e[r] - mubar
        for i in range(n):
            for j in range(n):
                target = diag if i == j else within if folds[r, i] == folds[r, j] else between
                target.append(c[i] * c[j])
    assert mom.sigma2 == pytest.approx(np.mean(diag) + V / N, rel=1e-10)
    assert mom.omega == pytest.approx(np.mean(within) + V / N, rel=1e-10)
    assert mom.gamma == pytest.approx(np.mean(between) + V / N, rel=1e-10)
    assert mom.mu == pytest.approx(mubar)
    # θ from (4) is exactly the unbiased sample variance of μ̂ across replicates
    assert mom.theta == pytest.approx(V, rel=1e-10)
    assert mom.empirical_var == pytest.approx(V, rel=1e-12)


def test_moments_unbiased_for_few_replicates_where_grand_mean_centring_is_not():
    """E[σ̂²] = σ² etc. even for N = 3; centring with μ̄ alone is off by -θ/N."""
    rng = np.random.default_rng(10)
    reps, N, n, K = 20000, 3, 20, 4
    fold = kk.contiguous_folds(n, K)
    truth = {"sigma2": 1.0, "omega": 0.3, "gamma": 0.1}
    chol = np.linalg.cholesky(block_cov(fold, *truth.values()))
    e = 2.0 + rng.standard_normal((reps, N, n)) @ chol.T
    mom = kk.kfold_moments(e, fold)  # vectorized over the reps
    theta = kk.variance_components(*truth.values(), n=n, K=K)[3]
    for name, value in {**truth, "theta": theta}.items():
        draws = getattr(mom, name)
        mc_se = draws.std(ddof=1) / np.sqrt(reps)
        assert abs(draws.mean() - value) < 4.5 * mc_se, name
        grand_mean_centred = draws - mom.empirical_var / N  # s̄ - μ̄² (and (N-1)V/N)
        assert abs(grand_mean_centred.mean() - (value - theta / N)) < 4.5 * mc_se, name
        assert theta / N > 10 * mc_se  # the bias that is removed is clearly detectable


def test_moments_jackknife_matches_explicit_leave_one_out():
    rng = np.random.default_rng(3)
    N, n, K = 9, 8, 4
    e = rng.normal(size=(N, n)) + rng.normal(size=(N, 1))
    fold = kk.contiguous_folds(n, K)
    se = kk.kfold_moments_stderr(e, fold)
    loo = [kk.kfold_moments(np.delete(e, r, axis=0), fold) for r in range(N)]
    for name in ("mu", "sigma2", "omega", "gamma", "theta", "lambda2"):
        vals = np.array([getattr(x, name) for x in loo])
        ref = np.sqrt((N - 1) / N * np.sum((vals - vals.mean()) ** 2))
        assert getattr(se, name) == pytest.approx(ref, rel=1e-9)


def test_moments_shift_invariant_and_errors():
    rng = np.random.default_rng(4)
    e = rng.normal(size=(20, 10))
    fold = np.arange(10) % 2
    a, b = kk.kfold_moments(e, fold), kk.kfold_moments(e + 1e4, fold)
    for name in ("sigma2", "omega", "gamma", "theta"):
        assert getattr(b, name) == pytest.approx(getattr(a, name), rel=1e-6)
    assert b.mu == pytest.approx(a.mu + 1e4)
    with pytest.raises(DesignError, match="at least N = 2"):
        kk.kfold_moments(e[:1], fold)
    assert np.isnan(kk.kfold_moments_stderr(e[:2], fold).theta)


def test_variance_ci():
    lo, hi = kk.variance_ci(2.0, 9, alpha=0.1)
    assert lo == pytest.approx(18 / st.chi2.ppf(0.95, 9))
    assert hi == pytest.approx(18 / st.chi2.ppf(0.05, 9))
    with pytest.raises(ArgumentError, match="alpha"):
        kk.variance_ci(2.0, 9, alpha=1.5)


# ---------------------------------------------------------------------------
# kernel: quadratic estimators (Lemma 3, Theorem 1)
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", kk.ESTIMATORS)
@pytest.mark.parametrize(("n", "K"), [(20, 4), (12, 12), (30, 2)])
def test_named_coefficients_match_matrix(name, n, K):
    W = kk.estimator_matrix(name, n, K)
    assert kk.block_coefficients(W, K=K) == pytest.approx(kk.estimator_coefficients(name, n, K))
    a, b, c = kk.estimator_coefficients(name, n, K)
    assert a + b + c == pytest.approx(0.0, abs=1e-15)  # no μ² term
    # with a non-contiguous assignment the matrix changes, not (a, b, c)
    fold = np.random.default_rng(n).permutation(np.arange(n) % K)
    Wf = kk.estimator_matrix(name, n, K, fold)
    assert kk.block_coefficients(Wf, fold) == pytest.approx((a, b, c))


def test_named_estimators_are_what_they_claim():
    rng = np.random.default_rng(5)
    n, K = 12, 3
    m = n // K
    fold = kk.contiguous_folds(n, K)
    e = rng.normal(size=n)
    assert e @ kk.estimator_matrix("naive", n, K) @ e == pytest.approx(e.var(ddof=1) / n)
    fold_means = e.reshape(K, m).mean(1)
    assert e @ kk.estimator_matrix("folds", n, K) @ e == pytest.approx(fold_means.var(ddof=1) / K)
    # hold-out: L_ki, K test sets of n_test losses, θ̂1 and θ̂2 as printed in the paper
    n_test = m
    L = e.reshape(K, n_test)
    Lbar = L.mean()
    theta1 = np.sum((L - Lbar) ** 2) / (K * n_test * (K * n_test - 1))
    theta2 = sum(np.sum(np.outer(L[k] - Lbar, L[k] - Lbar)) for k in range(K)) / (
        K * (K - 1) * n_test**2
    )
    assert e @ kk.estimator_matrix("theta1", n, K, fold) @ e == pytest.approx(theta1)
    assert e @ kk.estimator_matrix("theta2", n, K, fold) @ e == pytest.approx(theta2)


def test_expectation_of_random_quadratic_form():
    """E[eᵀWe] = tr(WΣ) + μ² 1ᵀW1 equals a(σ²+μ²) + b(ω+μ²) + c(γ+μ²)."""
    rng = np.random.default_rng(6)
    n, K = 15, 5
    fold = rng.permutation(np.arange(n) % K)
    mu, sigma2, omega, gamma = 0.7, 1.3, 0.4, -0.05
    cov = block_cov(fold, sigma2, omega, gamma)
    for _ in range(5):
        W = rng.normal(size=(n, n))
        a, b, c = kk.block_coefficients(W, fold)
        assert a + b + c == pytest.approx(W.sum())
        ref = np.trace(W @ cov) + mu**2 * W.sum()
        got = kk.expected_quadratic(mu, sigma2, omega, gamma, a=a, b=b, c=c)
        assert got == pytest.approx(ref, rel=1e-12)


def test_no_unbiased_quadratic_estimator():
    """System (10): a = 1/n, b = (m-1)/n, c = (n-m)/n, a + b + c = 0 has no solution."""
    for n, K in [(10, 2), (20, 5), (12, 12)]:
        m = n // K
        A = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=float)
        rhs = np.array([1 / n, (m - 1) / n, (n - m) / n, 0.0])
        sol, *_ = np.linalg.lstsq(A, rhs, rcond=None)
        assert np.linalg.norm(A @ sol - rhs) > 0.4  # inconsistent: residual 1/2 exactly
        assert np.linalg.matrix_rank(np.c_[A, rhs]) == np.linalg.matrix_rank(A) + 1
    # and e.g. the natural candidate W = 11ᵀ/n² (i.e. μ̂²) picks up μ²
    n, K = 10, 2
    a, b, c = kk.block_coefficients(np.full((n, n), 1 / n**2), K=K)
    exp = kk.expected_quadratic(2.0, 1.0, 0.2, 0.1, a=a, b=b, c=c)
    theta = kk.variance_components(1.0, 0.2, 0.1, n=n, K=K)[3]
    assert exp == pytest.approx(theta + 4.0)


def test_block_coefficients_errors():
    with pytest.raises(ArgumentError, match="square"):
        kk.block_coefficients(np.zeros((3, 4)), K=3)
    with pytest.raises(ArgumentError, match="`fold` or the number of blocks `K`"):
        kk.block_coefficients(np.zeros((4, 4)))
    with pytest.raises(DesignError, match="every fold needs"):
        kk.block_coefficients(np.zeros((4, 4)), [0, 0, 0, 1])
    with pytest.raises(ArgumentError, match="`estimator` must be one of"):
        kk.estimator_matrix("jackknife", 4, 2)


# ---------------------------------------------------------------------------
# xarray layer
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gaussian_cube():
    """N datasets of Gaussian errors with exactly the block covariance, per-dataset folds.

    Model "a": (σ², ω, γ) = (1, 0.3, 0.1); model "b" = 2·a - 1 plus an
    independent block-structured part with (0.5, 0.1, -0.04) — still of the
    Corollary-1 form; the moments of "b" are 4·(a's) + that part's.
    """
    rng = np.random.default_rng(7)
    N, n, K = 3000, 20, 4
    folds = np.stack([random_folds(rng, n, K) for _ in range(N)])
    base = kk.contiguous_folds(n, K)
    La = np.linalg.cholesky(block_cov(base, 1.0, 0.3, 0.1))
    Lb = np.linalg.cholesky(block_cov(base, 0.5, 0.1, -0.04))
    za = rng.standard_normal((N, n)) @ La.T
    zb = rng.standard_normal((N, n)) @ Lb.T
    # the contiguous draw is re-indexed to each dataset's fold assignment
    order = np.argsort(folds, axis=1, kind="stable")
    ea = np.empty_like(za)
    eb = np.empty_like(zb)
    np.put_along_axis(ea, order, za, axis=1)
    np.put_along_axis(eb, order, zb, axis=1)
    ea += 0.5
    e = np.stack([ea, 2 * ea - 1 + eb], axis=-1)
    return kfold_cube(e, folds, models=["a", "b"])


TRUE = {
    "a": {"mu": 0.5, "sigma2": 1.0, "omega": 0.3, "gamma": 0.1},
    "b": {"mu": 0.0, "sigma2": 4.5, "omega": 1.3, "gamma": 0.36},
}


def test_statistics_on_cube_match_kernel(gaussian_cube):
    stats_ = kfold_statistics(gaussian_cube)
    assert set(stats_.data_vars) == {"s1", "s2", "s3", "mu", "var_mu"}
    assert stats_.s1.dims == ("dataset", "model")
    assert stats_.attrs["K"] == 4 and stats_.attrs["m"] == 5
    err = kfold_errors(gaussian_cube)
    for d in (0, 17):
        e = err.e.isel(dataset=d, model=1).values
        f = err.fold.isel(dataset=d).values
        ref = brute_statistics(e, f)
        got = [float(stats_[v].isel(dataset=d, model=1)) for v in ("s1", "s2", "s3", "mu")]
        assert got == pytest.approx(ref, rel=1e-10)


def test_moments_recover_block_covariance(gaussian_cube):
    mom = kfold_moments(gaussian_cube, alpha=0.001)
    assert mom.attrs["N"] == 3000 and mom.attrs["n"] == 20 and mom.attrs["K"] == 4
    for model, truth in TRUE.items():
        row = mom.sel(model=model)
        for name, value in truth.items():
            se = float(row[f"{name}_se"])
            assert abs(float(row[name]) - value) < 4.5 * se, (model, name)
        theta = kk.variance_components(truth["sigma2"], truth["omega"], truth["gamma"], n=20, K=4)[
            3
        ]
        assert abs(float(row.theta) - theta) < 4.5 * float(row.theta_se)
        # jackknife se of μ̂ ~ sqrt(θ/N)
        assert float(row.mu_se) == pytest.approx(np.sqrt(theta / 3000), rel=0.1)
        assert bool(row.admissible)
        lo, hi = row.empirical_var_ci.values
        assert lo < theta < hi
        assert float(row.theta) == pytest.approx(float(row.empirical_var), rel=1e-10)
    np.testing.assert_allclose(
        mom.contribution_sigma2 + mom.contribution_omega + mom.contribution_gamma, mom.theta
    )
    assert mom.theta_ci.dims == ("model", "ci_bound")
    assert mom.theta_ci.ci_bound.values.tolist() == ["lower", "upper"]


def test_moments_on_contrast_cube(gaussian_cube):
    diff = cvstats.cube.formula.pairwise(gaussian_cube)
    mom = kfold_moments(diff)
    assert mom.theta.dims == ("contrast",)
    err = kfold_errors(gaussian_cube)
    e = (err.e.sel(model="a") - err.e.sel(model="b")).transpose("dataset", "example")
    ref = kk.kfold_moments(e.values, err.fold.transpose("dataset", "example").values)
    assert float(mom.gamma.squeeze()) == pytest.approx(float(ref.gamma), rel=1e-10)
    assert float(mom.theta.squeeze()) == pytest.approx(float(ref.theta), rel=1e-10)


def test_moments_vectorize_over_extra_dims_and_dask(gaussian_cube):
    """Contract: a batch dim gives the same as a loop over slices; dask stays lazy."""
    small = gaussian_cube.isel(dataset=slice(0, 60))
    two = xr.concat(
        [small.isel(dataset=slice(0, 30)), small.isel(dataset=slice(30, 60))], "setting"
    )
    two = two.assign_coords(setting=["x", "y"]).transpose("setting", ...)
    both = kfold_moments(two)
    assert both.theta.dims == ("setting", "model")
    assert both.setting.values.tolist() == ["x", "y"]
    for i, sl in enumerate((slice(0, 30), slice(30, 60))):
        one = kfold_moments(small.isel(dataset=sl))
        for v in ("sigma2", "omega", "gamma", "theta", "theta_se", "empirical_var_ci"):
            np.testing.assert_allclose(both[v].isel(setting=i), one[v], rtol=1e-12)
    # chunk the losses only: cube.chunk() would also chunk the `repeat` coordinate,
    # which validate()'s groupby("repeat") rejects (reported to the lead)
    da = pytest.importorskip("dask.array")
    lazy = kfold_moments(small.copy(data=da.from_array(small.values, chunks=(20, -1, -1, -1))))
    assert lazy.theta.chunks is not None
    np.testing.assert_allclose(lazy.theta.compute(), kfold_moments(small).theta, rtol=1e-12)


def test_cube_errors():
    rng = np.random.default_rng(8)
    d = designs.kfold(10, 3, seed=0)  # folds of 3, 3, 4
    cube = cvstats.from_arrays(rng.random((4, 3, 10, 1)), design=d, extra_dims=["dataset"])
    with pytest.raises(DesignError, match="K must divide n"):
        kfold_statistics(cube)
    d2 = designs.kfold(10, 2, repeats=2, seed=0)
    cube2 = cvstats.from_arrays(rng.random((4, 4, 10, 1)), design=d2, extra_dims=["dataset"])
    with pytest.raises(DesignError, match="has 2 repeats"):
        kfold_moments(cube2)
    d3 = designs.resampled(10, 2, J=3, seed=0)
    cube3 = cvstats.from_arrays(rng.random((4, 3, 10, 1)), design=d3, extra_dims=["dataset"])
    with pytest.raises(DesignError, match="needs a k-fold main block"):
        kfold_statistics(cube3)
    d4 = designs.kfold(10, 2, seed=0)
    cube4 = cvstats.from_arrays(rng.random((4, 2, 10, 1)), design=d4, extra_dims=["run"])
    with pytest.raises(ArgumentError, match="`dataset_dim` = 'dataset' is not an extra dim"):
        kfold_moments(cube4)
    with pytest.raises(DesignError, match="at least 2 independent datasets"):
        kfold_moments(cube4.isel(run=[0]), dataset_dim="run")
    with pytest.raises(cvstats.CvstatsTypeError, match="must be an xarray.DataArray"):
        kfold_statistics(np.zeros((2, 10, 1)))
    assert kfold_moments(cube4, dataset_dim="run").attrs["dataset_dim"] == "run"


def test_quadratic_estimator_bias_cases():
    n, K = 100, 10
    m = n // K
    mom = {"mu": 1.0, "sigma2": 1.0, "omega": 0.05, "gamma": 0.01}
    theta = (1.0 + (m - 1) * 0.05 + (n - m) * 0.01) / n
    naive = quadratic_estimator_bias("naive", mom, n=n, K=K)
    assert float(naive.theta) == pytest.approx(theta)
    assert float(naive.expected) < theta  # biased low when ω, γ > 0
    assert float(naive.political_ratio) > 1
    folds = quadratic_estimator_bias("folds", mom, n=n, K=K)
    lam = kk.eigenvalues(1.0, 0.05, 0.01, n=n, K=K)
    assert float(folds.expected) == pytest.approx(lam[1] / n)
    assert float(folds.political_ratio) == pytest.approx(lam[2] / lam[1])
    assert float(folds.bias) == pytest.approx(-0.01)  # bias -γ
    # hold-out: K independent test sets of n_test losses; γ = 0
    rng = np.random.default_rng(9)
    for _ in range(20):
        s2 = rng.uniform(0.5, 2)
        hold = {"mu": rng.normal(), "sigma2": s2, "omega": rng.uniform(0, s2), "gamma": 0.0}
        t2 = quadratic_estimator_bias("theta2", hold, n=K * 30, K=K)
        assert float(t2.political_ratio) == pytest.approx(1.0, rel=1e-12)
        t1 = quadratic_estimator_bias("theta1", hold, n=K * 30, K=K)
        assert float(t1.political_ratio) > 1
    # user matrix: the same as the named one
    W = kk.estimator_matrix("folds", n, K)
    mine = quadratic_estimator_bias(W, mom, K=K)
    assert float(mine.expected) == pytest.approx(float(folds.expected))
    assert mine.attrs["estimator"] == "matrix"
    with pytest.raises(ArgumentError, match="lacks 'gamma'"):
        quadratic_estimator_bias("naive", {"mu": 0, "sigma2": 1, "omega": 0}, n=n, K=K)
    with pytest.raises(ArgumentError, match="pass `n`"):
        quadratic_estimator_bias("naive", mom)
    with pytest.raises(ArgumentError, match="must be square"):
        quadratic_estimator_bias(np.zeros((3, 2)), mom, K=K)


def test_quadratic_estimator_bias_from_moments_dataset_and_monte_carlo(gaussian_cube):
    mom = kfold_moments(gaussian_cube)
    res = quadratic_estimator_bias("naive", mom)
    assert res.expected.dims == ("model",)
    assert res.attrs["n"] == 20 and res.attrs["K"] == 4
    # Monte Carlo: the mean of the naive estimator over datasets vs its expectation
    err = kfold_errors(gaussian_cube)
    naive = err.e.var("example", ddof=1) / 20
    for model in ("a", "b"):
        draws = naive.sel(model=model).values
        mc, mc_se = draws.mean(), draws.std(ddof=1) / np.sqrt(draws.size)
        t = TRUE[model]
        a, b, c = kk.estimator_coefficients("naive", 20, 4)
        exact = kk.expected_quadratic(t["mu"], t["sigma2"], t["omega"], t["gamma"], a=a, b=b, c=c)
        assert abs(mc - exact) < 4.5 * mc_se
        assert float(res.expected.sel(model=model)) == pytest.approx(exact, rel=0.1)


# ---------------------------------------------------------------------------
# eq. (4) on a real replicated K-fold: OLS, Bengio & Grandvalet (docs/studies.md §E)
# ---------------------------------------------------------------------------


def ols_kfold_cube(N, n, K, *, d=30, seed=0):
    """Out-of-fold squared errors of OLS (with intercept) and of the training mean.

    x ~ N(0, I_d), y = sqrt(3/d) Σ x_k + ε, ε ~ N(0, 1); one K-fold run per
    dataset, fitted for all (dataset, fold) at once through the normal
    equations (Gram matrix of the data minus that of the test fold).
    """
    rng = np.random.default_rng(seed)
    design = designs.kfold(n, K, seed=seed)
    fold_of = np.argmax(design.test.values, axis=0)
    X = rng.standard_normal((N, n, d))
    y = np.sqrt(3 / d) * X.sum(-1) + rng.standard_normal((N, n))
    Z = np.concatenate([np.ones((N, n, 1)), X], axis=-1)
    order = np.argsort(fold_of, kind="stable")
    m = n // K
    Zk = Z[:, order].reshape(N, K, m, d + 1)
    yk = y[:, order].reshape(N, K, m)
    G = np.einsum("akip,akiq->akpq", Zk, Zk)
    g = np.einsum("akip,aki->akp", Zk, yk)
    beta = np.linalg.solve(G.sum(1, keepdims=True) - G, (g.sum(1, keepdims=True) - g)[..., None])
    ols = (yk - np.einsum("akip,akp->aki", Zk, beta[..., 0])) ** 2
    ytrain = (yk.sum((1, 2))[:, None, None] - yk.sum(-1, keepdims=True)) / (n - m)
    mean = (yk - ytrain) ** 2
    sorted_losses = np.stack([ols, mean], -1).reshape(N, n, 2)
    losses = np.empty_like(sorted_losses)
    losses[:, order] = sorted_losses
    full = np.broadcast_to(losses[:, None], (N, K, n, 2))
    return cvstats.from_arrays(
        full, design=design, extra_dims=["dataset"], models=["ols", "mean"], name="squared"
    )


def test_ols_losses_are_out_of_fold():
    cube = ols_kfold_cube(2, 40, 4, d=3, seed=1)
    assert int(cube.notnull().sum()) == 2 * 40 * 2  # each example tested once per dataset
    assert cube.attrs["K"] == 4


@pytest.mark.slow
def test_eq4_matches_empirical_variance_on_independent_datasets_ols():
    """θ from eq. (4) on datasets A vs the sample variance of μ̂ on independent datasets B.

    On the same datasets θ = V identically (see kfold_moments), so the check
    uses two independent sets of N = 1500 datasets. Tolerances: (i) the ratio
    θ_A / V_B inside the central 99.9 % of F(N-1, N-1) (Gaussian μ̂); (ii)
    |θ_A - V_B| < 4 sqrt(se_A² + se_B²) with jackknife standard errors (no
    normality). OLS, n = 100, K = 10, d = 30 (n - m = 90 training examples).
    """
    N = 1500
    cube = ols_kfold_cube(2 * N, 100, 10, seed=2024)
    A = kfold_moments(cube.isel(dataset=slice(0, N)))
    B = kfold_moments(cube.isel(dataset=slice(N, None)))
    lo, hi = st.f.ppf([0.0005, 0.9995], N - 1, N - 1)
    for model in ("ols", "mean"):
        a, b = A.sel(model=model), B.sel(model=model)
        ratio = float(a.theta) / float(b.empirical_var)
        assert lo < ratio < hi, (model, ratio, lo, hi)
        z = (float(a.theta) - float(b.empirical_var)) / np.hypot(
            float(a.theta_se), float(b.theta_se)
        )
        assert abs(z) < 4, (model, z)
    # Bengio & Grandvalet's point: for OLS at n - m = 90 the γ term is a large part
    # of Var[CV], so the naive estimator is liberal for the learner
    ols = A.sel(model="ols")
    # (not for "mean", whose true ω ≈ 0: its estimate may be slightly negative)
    assert bool(ols.admissible)
    assert float(ols.contribution_gamma / ols.theta) > 0.2
    assert float(quadratic_estimator_bias("naive", A).political_ratio.sel(model="ols")) > 1.3
